"""Dynamic shapes: run one model over a schedule of changing input sizes under several compile strategies,
and see what recompiles, what each strategy costs per call, and which one pays over the schedule.

The sweep runs in the shared worker (fusionviz.runner.run_sweep_session); finished sweeps are cached in
the shared results store under their configuration and request. Nothing runs until Run is pressed.
"""

from __future__ import annotations

import dataclasses
import json

import streamlit as st

import ui
from fusionviz import charts
from fusionviz import sources as kernel_code
from fusionviz.analysis import SWEEP_SUMMARY_COLUMNS, sweep_summary
from fusionviz.catalog import CATALOG
from fusionviz.charts import ChartSettings
from fusionviz.config import DTYPES, MAX_SWEEP_CALLS, SWEEP_STRATEGIES, ConfigError, RunConfig, SweepRequest
from fusionviz.runner import run_sweep_session
from fusionviz.session import Session, SessionFileError, StrategyRun

SEQUENCE = "sequence length"  # only models whose seq is a sequence length are swept over it
LIVE, RECORDED, UPLOAD = "Your latest run", "Recorded sweep (sessions/)", "Upload a sweep file"
VIEWS = ["Latency per call", "Steady state", "Cumulative", "Summary", "Kernels"]

settings = ui.setup_page(
    "Dynamic shapes",
    "What torch.compile does when input shapes change: each strategy runs the same schedule of sizes; "
    "every compile, recompile and fall-back to eager is recorded, with what it costs and why it happened.")


def parse_sizes(text: str) -> list[int]:
    """`"8, 16 24"` → `[8, 16, 24]`, refusing anything that is not a whole number."""
    words = text.replace(",", " ").split()
    if not all(w.isdigit() for w in words):
        raise ConfigError(f"sizes must be whole numbers separated by commas, not {text!r}")
    return [int(w) for w in words]


def sidebar() -> tuple[RunConfig, SweepRequest | None, bool]:
    """The sweep's widgets; the request is None when a typed list does not parse (the error is shown)."""
    with st.sidebar:
        st.header("Sweep")
        model = st.selectbox("Model", list(CATALOG), index=list(CATALOG).index("mlp"), key="s_model")
        info = CATALOG[model]
        st.caption(info.purpose)
        has_seq = info.seq_label == SEQUENCE
        dim = int(st.number_input("Hidden size (dim)", 8, 8192, 64, key="s_dim"))
        batch = int(st.number_input("Batch", 1, 65536, 32, key="s_batch"))
        seq = int(st.number_input("Sequence length", 1, 16384, info.default_seq or 128, key=f"s_seq_{model}")) \
            if has_seq else None
        dtype = st.selectbox("dtype", DTYPES, key="s_dtype")
        devices = ui.devices_or_cpu()
        names = {d["device"]: d["name"] for d in devices}
        device = st.selectbox("Device", list(names), format_func=lambda d: f"{d}: {names[d]}", key="s_device")
        dimension = st.radio("Dimension that changes", ["batch", "seq"] if has_seq else ["batch"], horizontal=True,
                             key=f"s_dimension_{model}")
        schedule = st.radio("Schedule", ["increasing", "random", "list"], horizontal=True, key="s_schedule",
                            help=f"Generated schedules go up to the {dimension} above; a list is typed in")
        sizes: list[int] = []
        calls = 12
        if schedule == "list":
            text = st.text_input(f"{dimension} of each call", "8, 16, 24, 32, 8, 16, 24, 32", key="s_sizes",
                                 help=f"up to {MAX_SWEEP_CALLS} calls")
            try:
                sizes = parse_sizes(text)
            except ConfigError as exc:
                st.error(str(exc))
                sizes = []
        else:
            calls = int(st.number_input("Calls", 1, MAX_SWEEP_CALLS, 12, key="s_calls"))
        strategies = st.multiselect("Strategies", list(SWEEP_STRATEGIES), default=["static", "dynamic", "automatic"],
                                    key="s_strategies")
        st.caption("  \n".join(f"**{s}**: {SWEEP_STRATEGIES[s]}" for s in strategies))
        buckets: list[int] = []
        if "buckets" in strategies:
            text = st.text_input("Bucket sizes (empty: powers of two)", "", key="s_buckets")
            try:
                buckets = parse_sizes(text)
            except ConfigError as exc:
                st.error(str(exc))
        cold = st.checkbox("Cold caches", key="s_cold",
                           help="Each strategy in a fresh worker with an empty Inductor cache, so compile times "
                                "compare cold to cold; otherwise later strategies reuse graphs earlier ones compiled")
        clicked = st.button("Run", type="primary", key="s_run", width="stretch")
    config = RunConfig(model=model, dim=dim, batch=batch, seq=seq, dtype=dtype, device=device)
    request = SweepRequest(dimension=dimension, schedule=schedule, sizes=sizes, calls=calls,
                           strategies=list(strategies), buckets=buckets, cold_caches=cold)
    return config, request, clicked


def cache_key(config: RunConfig, request: SweepRequest) -> str:
    return f"sweep|{config.key()}|{json.dumps(dataclasses.asdict(request), sort_keys=True)}"


def run(config: RunConfig, request: SweepRequest) -> None:
    """Run the sweep (or take it from the cache) and make it the one on screen."""
    key = cache_key(config, request)
    took = ui.run_cached(key, f"Sweeping {config.model} over {request.dimension}…", "The sweep did not run",
                         lambda progress: run_sweep_session(config, request, progress, worker=ui.shared_worker()))
    if took:
        st.session_state["s_took"] = took
        st.session_state["s_shown"] = key
        st.session_state["s_source"] = LIVE


def choose() -> tuple[Session | None, str]:
    """The sweep to show, and what it is: the latest run, a recorded sweep, or an uploaded file."""
    live = ui.results().get(st.session_state.get("s_shown", ""))
    recorded = ui.recorded_sweeps()
    sources = ([LIVE] if live else []) + ([RECORDED] if recorded else []) + [UPLOAD]
    if st.session_state.get("s_source") not in sources:
        st.session_state["s_source"] = sources[0]
    source = st.radio("Sweep shown", sources, horizontal=True, key="s_source", label_visibility="collapsed")
    if source == LIVE:
        return live, f"your run, {st.session_state.get('s_took', '')}"
    if source == RECORDED:
        name = st.selectbox("Recorded sweep", list(recorded), key="s_recorded") if len(recorded) > 1 \
            else next(iter(recorded))
        return recorded[name], f"**{name}**, a sweep recorded earlier and shipped with fusionviz"
    upload = st.file_uploader("A sweep session (`python -m fusionviz sweep --out FILE`)", type=["json", "gz"],
                              key="s_file")
    if upload is None:
        return None, ""
    try:
        session = ui.open_bytes(upload.getvalue(), upload.name)
    except SessionFileError as exc:
        st.error(str(exc))
        return None, ""
    if session.sweep is None:
        st.error(f"{upload.name} holds no shape sweep: open it in the Trace explorer instead.")
        return None, ""
    return session, f"**{upload.name}**, uploaded"


def describe(session: Session) -> str:
    """One line: model, sizes, the schedule and the device."""
    c, sweep = session.config, session.sweep
    assert sweep is not None
    fixed = f" · batch {c.batch}" if sweep.dimension == "seq" else (f" · seq {c.seq}" if c.seq else "")
    shown = ", ".join(map(str, sweep.schedule))
    return (f"**{c.model}** · dim {c.dim}{fixed} · {c.dtype} · {c.device} · **{sweep.dimension}** over "
            f"{len(sweep.schedule)} calls: {shown}" + (f" · buckets {sweep.buckets}" if sweep.buckets else ""))


def show_errors(session: Session) -> None:
    """Strategies that failed, each as a message with its details folded away, never a traceback."""
    for s in session.sweep.strategies if session.sweep else []:
        if s.status == "error":
            st.error(f"**{s.strategy}** failed: {(s.error or 'no reason given').strip().splitlines()[0]}")
            if s.error and "\n" in s.error.strip():
                with st.expander(f"{s.strategy}: details"):
                    st.code(s.error, language="text")


def show_summary(session: Session) -> None:
    st.dataframe(sweep_summary(session), hide_index=True, key="s_summary",
                 column_config={
                     name: st.column_config.NumberColumn(help=SWEEP_SUMMARY_COLUMNS[name], format=fmt)
                     for name, fmt in (("compile_total_s", "%.2f"), ("median_steady_ms", "%.4f"),
                                       ("ratio_vs_static", "%.2f×"), ("total_s", "%.2f"))})
    reasons = charts.prepare_recompile_reasons(session)
    st.markdown("**Recompile (guard failure) reasons**: why Dynamo compiled again")
    if reasons.empty:
        st.caption("No strategy recompiled.")
    else:
        st.dataframe(reasons, hide_index=True, key="s_reasons", width="stretch")


def pick_strategy(runs: list[StrategyRun], label: str, default: str, key: str) -> StrategyRun:
    names = [r.strategy for r in runs]
    chosen = st.selectbox(label, names, index=names.index(default) if default in names else 0, key=key)
    return runs[names.index(chosen)]


def show_kernels(session: Session) -> None:
    """The kernels of one shape under two strategies (static and dynamic by default), and their sources."""
    sweep = session.sweep
    runs = [r for r in charts.ok_strategies(session) if r.kernels]
    if sweep is None or len(runs) < 2:
        st.info("Two strategies with kernels are needed to compare them.")
        return
    left, right = st.columns(2)
    with left:
        a = pick_strategy(runs, "A", "static", "s_kernels_a")
    with right:
        b = pick_strategy(runs, "B", "dynamic" if a.strategy != "dynamic" else "static", "s_kernels_b")
    st.markdown(f"One call at **{sweep.dimension} {sweep.kernel_size}**, profiled under **{a.strategy}** (A) "
                f"and **{b.strategy}** (B):")
    diff = charts.prepare_sweep_kernel_diff(a, b)
    st.dataframe(diff, hide_index=True, key=f"s_kernel_diff_{a.strategy}_{b.strategy}",
                 column_config={"us_a": st.column_config.NumberColumn(f"µs {a.strategy}", format="%.2f"),
                                "us_b": st.column_config.NumberColumn(f"µs {b.strategy}", format="%.2f"),
                                "grid_a": f"grid {a.strategy}", "grid_b": f"grid {b.strategy}"})
    generated = list(dict.fromkeys(
        n for n in diff.name if kernel_code.sweep_source(a, n) or kernel_code.sweep_source(b, n)))
    if not generated:
        st.info("No kernel here was generated by Inductor, so there is no source to compare.")
        return
    name = st.selectbox("Generated kernel", generated, key=f"s_kernel_{a.strategy}_{b.strategy}")
    sources = {run.strategy: kernel_code.sweep_source(run, name) for run in (a, b)}
    cols = st.columns(2)
    for col, run in zip(cols, (a, b), strict=True):
        source = sources[run.strategy]
        with col:
            if source is None:
                st.info(f"`{name}` has no captured source under {run.strategy}.")
                continue
            sizes = kernel_code.size_arguments(source)
            st.markdown(f"**{run.strategy}**: " + (
                "takes its size as an argument: " + ", ".join(f"`{s}`" for s in sizes) if sizes
                else "sizes are constants baked into the kernel"))
            st.code(kernel_code.kernel_signature(source), language="python" if name.startswith("triton_") else "cpp",
                    wrap_lines=True)
            with st.expander(f"Whole source under {run.strategy}"):
                st.code(source, language="python" if name.startswith("triton_") else "cpp", line_numbers=True,
                        height=420)
    if sources[a.strategy] and sources[b.strategy] and sources[a.strategy] != sources[b.strategy]:
        st.markdown("**Lines that differ**")
        st.code(kernel_code.source_diff(sources[a.strategy], sources[b.strategy], a.strategy, b.strategy),
                language="diff", height=320)


def present(session: Session, settings: ChartSettings) -> None:
    """Presentation mode: one chart per screen."""
    view = st.radio("Show", VIEWS, horizontal=True, key="s_present_view", label_visibility="collapsed")
    if view == "Latency per call":
        ui.chart(charts.sweep_latency_figure(session, settings), "s_latency")
    elif view == "Steady state":
        ui.chart(charts.sweep_steady_figure(session, settings), "s_steady")
    elif view == "Cumulative":
        ui.chart(charts.sweep_cumulative_figure(session, settings), "s_cumulative")
    elif view == "Summary":
        show_summary(session)
    else:
        show_kernels(session)


def report(session: Session, settings: ChartSettings) -> None:
    """Every section of one sweep, top to bottom."""
    ui.chart(charts.sweep_latency_figure(session, settings), "s_latency")
    st.caption("◆ marks a call that compiled (hover for the compile time and Dynamo's recompile reason); ✕ marks "
               "a call Dynamo ran in eager after the recompile limit. The y axis is logarithmic.")
    left, right = st.columns(2)
    with left:
        ui.chart(charts.sweep_steady_figure(session, settings), "s_steady")
    with right:
        ui.chart(charts.sweep_cumulative_figure(session, settings), "s_cumulative")
    st.subheader("Summary per strategy")
    show_summary(session)
    st.subheader("Kernels of one shape, side by side")
    show_kernels(session)
    sweep = session.sweep
    assert sweep is not None
    name = f"fusionviz-sweep-{session.config.model}-{sweep.dimension}"
    st.download_button("Sweep session (JSON)", session.to_json_bytes(), file_name=f"{name}.json",
                       mime="application/json", key="s_download")


config, request, clicked = sidebar()
if clicked:
    run(config, request)

shown, what = choose()
if shown is None:
    st.info("Nothing to show yet: choose a model, a schedule and strategies in the sidebar and press **Run** "
            "(mlp dim 64 over a few batch sizes takes about half a minute on the CPU), or upload a sweep file.")
else:
    st.info(f"You are looking at {what}. Change the sidebar and press **Run** to sweep on this machine.")
    ui.show_source(shown)
    st.markdown(describe(shown))
    show_errors(shown)
    if not charts.ok_strategies(shown):
        st.warning("No strategy of this sweep ran, so there is nothing to draw.")
    elif st.session_state.get("presentation"):
        present(shown, settings)
    else:
        report(shown, settings)
