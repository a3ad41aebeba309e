"""fusion lab: pick a model and sizes, run eager and compiled passes, and see what torch.compile fused.

`streamlit run app.py`. The measurement runs in a worker process (fusionviz.runner); this page holds the
widgets, a cache of finished sessions keyed by configuration, and the layout.
"""

from __future__ import annotations

import streamlit as st

import ui
from fusionviz import charts
from fusionviz.analysis import summary_table, verdict
from fusionviz.catalog import CATALOG
from fusionviz.charts import ChartSettings
from fusionviz.config import COMPILED_MODES, DTYPES, DYNAMIC_CHOICES, PASSES, RunConfig, warnings_for
from fusionviz.runner import run_session
from fusionviz.session import Session, SessionFileError

EXAMPLE = RunConfig(model="linear_ln_gelu", dim=64, batch=32, modes=("eager", "default"), repeats=5)
DIMS = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
BATCHES = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]

settings = ui.setup_page(
    "fusion lab",
    "Runs a model eagerly and under torch.compile in a separate worker process, profiles one steady "
    "iteration of each, and shows which kernels Inductor fused, what that bought, and what it cost.")


def sidebar() -> tuple[RunConfig, bool]:
    """The configuration widgets; nothing runs until Run is pressed."""
    with st.sidebar:
        st.header("Configuration")
        model = st.selectbox("Model", list(CATALOG), index=list(CATALOG).index("mlp"), key="model")
        info = CATALOG[model]
        st.caption(info.purpose)
        dim = st.select_slider("Hidden size (dim)", DIMS, value=256, key="dim")
        batch = st.select_slider("Batch", BATCHES, value=64, key="batch")
        seq = (int(st.number_input(info.seq_label.capitalize(), 1, 16384, info.default_seq, key=f"seq_{model}"))
               if info.seq_label else None)
        dtype = st.selectbox("dtype", DTYPES, key="dtype")
        devices = ui.devices_or_cpu()
        names = {d["device"]: d["name"] for d in devices}
        device = st.selectbox("Device", list(names), format_func=lambda d: f"{d}: {names[d]}", key="device")
        pass_ = st.radio("Pass", PASSES, horizontal=True, key="pass")
        modes = st.multiselect("Compiled modes (compared with eager)", COMPILED_MODES, default=["default"],
                               key="modes")
        dynamic = st.selectbox("dynamic", list(DYNAMIC_CHOICES), key="dynamic",
                               help="torch.compile(dynamic=...): false compiles for these exact shapes")
        with st.expander("Measurement"):
            repeats = st.slider("Timing repeats", 3, 31, 11, step=2, key="repeats",
                                help="Repeats of N calls; the bars show their median, p10 and p90")
            cold = st.checkbox("Cold compile", key="cold", help="Compile in a fresh worker process with an empty "
                               "Inductor cache, to see what a first-ever compile costs")
            limit = st.number_input("Time limit per mode (s)", 30, 3600, 900, step=30, key="limit")
        clicked = st.button("Run", type="primary", key="run", width="stretch")
    config = RunConfig(model=model, dim=dim, batch=batch, seq=seq, dtype=dtype, device=device, pass_=pass_,
                       modes=("eager", *modes), dynamic=DYNAMIC_CHOICES[dynamic], repeats=repeats,
                       cold_compile=cold, timeout_s=float(limit))
    return config, clicked


def run(config: RunConfig) -> None:
    """Run `config` (or take it from the cache) and make it the session on screen."""
    key = config.key()
    if key not in ui.results():
        for note in warnings_for(config):
            st.warning(note)
    took = ui.run_cached(key, f"Running {config.model} (dim {config.dim}, batch {config.batch})…",
                         "The run did not start", lambda progress: run_session(config, progress,
                                                                               worker=ui.shared_worker()))
    if took:
        st.session_state["took"] = took
        st.session_state["shown"] = key


def example_session() -> tuple[Session | None, str]:
    """A ready session for the first visit: the first recording shipped in sessions/ that has mode runs
    (a shape sweep alone has none: it shows on the Dynamic shapes page), if any."""
    for path in ui.recorded_files():
        try:
            session = ui.open_bytes(path.read_bytes(), path.name)
        except SessionFileError as exc:
            st.warning(f"{path.name} could not be opened: {exc}")
            continue
        if session.runs:
            return session, path.name
    return None, ""


def show_metrics(session: Session) -> None:
    eager = session.run("eager")
    cols = st.columns(max(len(session.runs) - 1, 1))
    compiled = [r for r in session.runs if r.mode != "eager"]
    for col, r in zip(cols, compiled, strict=False):
        if not (r.ok and r.speedup and r.summary and eager and eager.summary):
            col.metric(r.mode, r.status.replace("_", " "))
            continue
        col.metric(f"{r.mode} speedup", f"{r.speedup:.2f}×",
                   help=f"range {r.speedup_low:.2f}–{r.speedup_high:.2f}× (eager p10/p90 against this p90/p10)")
        col.metric(f"{r.mode} kernels / iteration", f"{r.summary.kernels_per_iteration:g}",
                   delta=f"{r.summary.kernels_per_iteration - eager.summary.kernels_per_iteration:+g} vs eager",
                   delta_color="inverse")


def show_graph_breaks(session: Session) -> None:
    compiled = [r for r in session.runs if r.ok and r.mode != "eager"]
    broken = [r for r in compiled if (r.graph_count or 0) > 1 or r.graph_breaks]
    if not broken:
        st.markdown("No graph breaks: " + ", ".join(f"{r.mode} compiled the model as "
                                                    f"{r.graph_count or 1} graph" for r in compiled) + ".")
        return
    for r in broken:
        st.markdown(f"**{r.mode}** compiled **{r.graph_count} graphs** with **{len(r.graph_breaks)} break(s)**; "
                    "the code between them runs eagerly (the gaps between shaded regions on the timeline).")
        for i, brk in enumerate(r.graph_breaks, start=1):
            st.markdown(f"{i}. {brk.reason}")
            st.code(brk.user_frame, language="text")


def show_collapse(session: Session, settings: ChartSettings, *, animated: bool) -> None:
    eager = session.run("eager")
    compiled = ui.mode_picker(session, "Compiled mode", "animation_mode" if animated else "collapse_mode",
                              compiled_only=True)
    if eager is None or not eager.ok or compiled is None:
        st.info("The collapse view needs eager and a compiled mode that both ran.")
        return
    if animated:
        ui.chart(charts.collapse_animation(eager, compiled, settings), "animation")
    else:
        ui.chart(charts.collapse_figure(eager, compiled, settings), "collapse")


def present(session: Session, settings: ChartSettings) -> None:
    """Presentation mode: one chart per screen, chosen with big buttons."""
    view = st.radio("Show", ["Verdict", "Timeline", "Collapse", "Animation", "Latency"], horizontal=True,
                    key="present_view", label_visibility="collapsed")
    if view == "Verdict":
        st.markdown(f"## {verdict(session)}")
        ui.chart(charts.metrics_figure(session, settings), "metrics")
    elif view == "Timeline":
        ui.show_timeline(session, settings, "timeline")
    elif view in ("Collapse", "Animation"):
        show_collapse(session, settings, animated=view == "Animation")
    else:
        ui.chart(charts.latency_figure(session, settings), "latency")


def report(session: Session, settings: ChartSettings) -> None:
    """Every section of one session, top to bottom."""
    c = session.config
    st.markdown(f"**{c.model}** · dim {c.dim} · batch {c.batch}" + (f" · {c.seq}" if c.seq else "")
                + f" · {c.dtype} · {c.pass_} · dynamic={c.dynamic} · {c.repeats} repeats")
    st.markdown(f"#### {verdict(session)}")
    ui.show_run_problems(session, not_applicable=False)  # the verdict names the modes that do not apply
    show_metrics(session)
    left, right = st.columns(2)
    with left:
        ui.chart(charts.latency_figure(session, settings), "latency")
    with right:
        ui.chart(charts.metrics_figure(session, settings), "metrics")
    with st.expander("All numbers per mode"):
        st.dataframe(summary_table(session), hide_index=True)
    st.subheader("Kernel timeline")
    ui.show_timeline(session, settings, "timeline")
    st.subheader("What fused into what")
    show_collapse(session, settings, animated=False)
    with st.expander("Animated: from eager to compiled (for talks)"):
        show_collapse(session, settings, animated=True)
    st.subheader("Graph breaks")
    show_graph_breaks(session)
    st.subheader("Kernels and generated code")
    ui.show_kernel_table(session, "kernels")
    st.subheader("Downloads")
    ui.show_downloads(session, "downloads")


config, clicked = sidebar()
if clicked:
    run(config)

shown = ui.results().get(st.session_state.get("shown", ""))
if shown is None:
    example, name = example_session()
    if example is not None:
        shown = example
        if not st.session_state.get("presentation"):  # on a projector the source line says enough
            st.info(f"You are looking at **{name}**, a session recorded earlier and shipped with fusionviz. Choose "
                    "a configuration in the sidebar and press **Run** to measure on this machine.")
    else:
        st.info("Nothing measured yet. Choose a model in the sidebar and press **Run**, or start with a small CPU "
                f"example: {EXAMPLE.model} ({CATALOG[EXAMPLE.model].purpose}), about 15 s.")
        if st.button("Run the small CPU example", key="example"):
            run(EXAMPLE)
            shown = ui.results().get(st.session_state.get("shown", ""))
elif st.session_state["shown"] not in (config.key(), EXAMPLE.key()):
    st.caption("The sidebar has changed since this run: press **Run** to measure the new configuration.")

if shown is not None:
    ui.show_source(shown)
    if "took" in st.session_state and shown.source == "live":
        st.caption(f"This run was {st.session_state['took']}.")
    if st.session_state.get("presentation"):
        present(shown, settings)
    else:
        report(shown, settings)
