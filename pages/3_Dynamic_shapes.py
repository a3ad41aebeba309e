"""Dynamic shapes: run one model over a schedule of changing input sizes under several compile strategies,
and see what recompiles, what each strategy costs per call, and which one pays over the schedule.

The sweep runs in its device's queue (fusionviz.measure.service.SweepRun); complete sweeps are kept in the
shared results store under their configuration and request; the views are in ui.sweep_view.
Nothing runs until Run is pressed.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.report import analyse
from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import CATALOG
from fusionviz.measure.service import SweepRun
from fusionviz.records.config import DTYPES, MAX_SWEEP_CALLS, SWEEP_STRATEGIES, RunConfig, SweepRequest, parse_sizes
from fusionviz.records.session import Session
from ui import backend, sections, state, sweep_view
from ui.page import setup_page
from ui.text import plain

SEQUENCE = "sequence length"  # only models whose seq is a sequence length are swept over it
DEFAULTS = {"s_model": "mlp", "s_dim": 64, "s_batch": 32, "s_sizes": "8, 16, 24, 32, 8, 16, 24, 32",
            "s_strategies": ["static", "dynamic", "automatic"]}

settings = setup_page(
    "Dynamic shapes",
    "What torch.compile does when input shapes change: each strategy runs the same schedule of sizes; "
    "every compile, recompile and fall-back to eager is recorded, with what it costs and why it happened.")


def sidebar() -> tuple[RunConfig, SweepRequest, bool]:
    """The sweep's widgets; a typed list that does not parse shows its error and leaves the sizes empty."""
    state.default_widgets(DEFAULTS)  # through the session, since `follow` sets them too
    with st.sidebar:
        st.header("Sweep")
        model = st.selectbox("Model", list(CATALOG), key="s_model")
        info = CATALOG[model]
        st.caption(info.purpose)
        has_seq = info.seq_label == SEQUENCE
        dim = int(st.number_input("Hidden size (dim)", 8, 8192, key="s_dim"))
        batch = int(st.number_input("Batch", 1, 65536, key="s_batch"))
        state.default_widgets({f"s_seq_{model}": info.default_seq or 128})
        seq = int(st.number_input("Sequence length", 1, 16384, key=f"s_seq_{model}")) if has_seq else None
        dtype = st.selectbox("dtype", DTYPES, key="s_dtype")
        names = {d.device: d.name for d in backend.devices_or_cpu()}
        device = st.selectbox("Device", list(names), format_func=lambda d: f"{d}: {names[d]}", key="s_device")
        dimension = st.radio("Dimension that changes", ["batch", "seq"] if has_seq else ["batch"], horizontal=True,
                             key=f"s_dimension_{model}")
        schedule = st.radio("Schedule", ["increasing", "random", "list"], horizontal=True, key="s_schedule",
                            help=f"Generated schedules go up to the {dimension} above; a list is typed in")
        sizes: list[int] = []
        calls = 12
        if schedule == "list":
            text = st.text_input(f"{dimension} of each call", key="s_sizes",
                                 help=f"up to {MAX_SWEEP_CALLS} calls")
            try:
                sizes = parse_sizes(text)
            except ConfigError as exc:
                st.error(plain(exc))
                sizes = []
        else:
            calls = int(st.number_input("Calls", 1, MAX_SWEEP_CALLS, 12, key="s_calls"))
        strategies = st.multiselect("Strategies", list(SWEEP_STRATEGIES), key="s_strategies")
        st.caption("  \n".join(f"**{s}**: {SWEEP_STRATEGIES[s]}" for s in strategies))
        buckets: list[int] = []
        if "buckets" in strategies:
            text = st.text_input("Bucket sizes (empty: powers of two)", "", key="s_buckets")
            try:
                buckets = parse_sizes(text)
            except ConfigError as exc:
                st.error(plain(exc))
        cold = st.checkbox("Cold caches", key="s_cold",
                           help="Each strategy in a fresh worker with an empty Inductor cache, so compile times "
                                "compare cold to cold; otherwise later strategies reuse graphs earlier ones compiled")
        clicked = st.button("Run", type="primary", key="s_run", width="stretch")
    config = RunConfig(model=model, dim=dim, batch=batch, seq=seq, dtype=dtype, device=device)
    request = SweepRequest(dimension=dimension, schedule=schedule, sizes=sizes, calls=calls,
                           strategies=list(strategies), buckets=buckets, cold_caches=cold)
    return config, request, clicked


def run(config: RunConfig, request: SweepRequest) -> backend.Finished | None:
    """Run the sweep in its device's queue (or take it from the cache)."""
    return backend.run_cached("sweep", SweepRun(config, request), f"Sweeping {config.model} over {request.dimension}…",
                              "The sweep did not run")


def follow(shown: Session, identity: str) -> None:
    """The sidebar set to the sweep on screen, once per sweep shown (where it offers the values): a recorded
    transformer_block sweep over seq was shown beside an mlp / batch sidebar. Reruns when anything changes."""
    c, sweep = shown.config, shown.sweep
    assert sweep is not None
    values: dict[str, object] = {}
    if c.model in CATALOG:
        has_seq = CATALOG[c.model].seq_label == SEQUENCE
        values = {"s_model": c.model, "s_dim": c.dim, "s_batch": c.batch, f"s_dimension_{c.model}": sweep.dimension,
                  "s_schedule": "list", "s_sizes": ", ".join(map(str, sweep.schedule)),
                  "s_strategies": [s.strategy for s in sweep.strategies if s.strategy in SWEEP_STRATEGIES]}
        if has_seq and c.seq:
            values[f"s_seq_{c.model}"] = c.seq
        if c.dtype in DTYPES:
            values["s_dtype"] = c.dtype
    if state.follow_next_run("sweep", identity, values):
        st.rerun()


state.follow_shown("sweep")
config, request, clicked = sidebar()
finished = run(config, request) if clicked else backend.follow("sweep")  # or a run this user waited for
if finished:
    state.show("sweep", finished.key, finished.took)
    sweep_view.show_live()

shown, what = sweep_view.choose()
if shown is None:
    st.info("Nothing to show yet: choose a model, a schedule and strategies in the sidebar and press **Run** "
            "(mlp dim 64 over a few batch sizes takes about half a minute on the CPU), or upload a sweep file.")
else:
    follow(shown, f"{state.sweep_source()}|{what}")
    st.info(f"You are looking at {what}; the sidebar shows its configuration. Change it and press **Run** to "
            "sweep on this machine.")
    report = analyse(shown)
    sections.show_source(report)
    st.markdown(sweep_view.describe(shown))
    sweep_view.show_errors(shown)
    if report.sweep is None or not report.sweep.strategies:
        st.warning("No strategy of this sweep ran, so there is nothing to draw.")
    elif state.presentation():
        sweep_view.present(report, settings)
    else:
        sweep_view.show_report(report, settings)
