"""Fusion lab: any session (the recorded library, an upload, a pair of eager and compiled profiler traces, or
a run on this machine) with every view: verdict, timeline, what fused into what, animation, latency.

The measurement runs in a worker process, asked of the run service (fusionviz.measure.service); this page
holds the widgets and the layout; what is on screen is chosen in ui.on_screen, the sections are in ui.lab.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.report import analyse
from fusionviz.charts.style import ChartSettings
from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import ModelInfo, available_models, model_problem
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import (
    DTYPES,
    DYNAMIC_CHOICES,
    MAX_DIM,
    MAX_LAYERS,
    MAX_SEQ,
    PASSES,
    RunConfig,
    default_threads,
    lab_modes,
    parse_modes,
    warnings_for,
)
from fusionviz.records.session import Session
from fusionviz.records.variants import SYNTAX, option_help
from ui import backend, lab, on_screen, sections, state, warm, web
from ui.page import ask_for_the_rest, setup_page, top_only

EXAMPLE = RunConfig(model="linear_ln_gelu", dim=64, batch=32, modes=("eager", "default"), threads=default_threads())
DIMS = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
BATCHES = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]
OWN = backend.OWN_MODEL
MODELS = available_models()  # the zoo, then each real model whose library is installed here
AT_DESK = ChartSettings()  # the desk's report is drawn at these in either mode (hidden while presenting)
PRESENTING = ChartSettings.presentation()  # and the presentation's view at these (hidden at the desk)
# The widgets set to a session's configuration (`on_screen.prefill`, a proposal's re-run), and the values each offers
PICKED = [*MODELS, *([OWN] if backend.own_models_allowed() else [])]  # the model picker's entries
WIDGETS: dict[str, list[object]] = {"model": list(PICKED), "dim": list(DIMS), "batch": list(BATCHES),
                                    "dtype": list(DTYPES), "pass": list(PASSES), "dynamic": list(DYNAMIC_CHOICES)}
REAL = [name for name, info in MODELS.items() if info.real]
DEFAULTS = {"model": "mlp", "dim": 256, "batch": 64, "dtype": DTYPES[0], "pass": PASSES[0], "dynamic": "false",
            "modes": ["default"], "variants": "", "memory": True}

setup_page(
    "Fusion lab",
    "Runs a model eagerly and under torch.compile in a separate worker process, profiles one steady "
    "iteration of each, and shows which kernels Inductor fused, what that bought, and what it cost; or shows "
    "a session recorded earlier, uploaded, or read from your own pair of profiler traces.",
    restyles_in_browser=True)


def measure_widgets() -> tuple[RunConfig, bool]:
    """The configuration widgets; nothing runs until Run is pressed."""
    state.default_widgets(DEFAULTS)
    st.header("Measure on this machine")
    model = st.selectbox("Model", PICKED, key="model")
    if model == OWN:
        model = st.text_input("Your model: package.module:factory", key="own_model",
                              help="factory(dim, batch, seq) returns (module, inputs); the worker imports it")
        info = None
    else:
        info = MODELS[model]
        st.caption(info.purpose)
    dim, layers = size_widgets(model, info)
    batch = st.select_slider("Batch", BATCHES, key="batch")
    seq = (int(st.number_input(info.seq_label.capitalize(), info.min_seq, MAX_SEQ, info.default_seq or 128,
                               step=info.patch or 1, key=state.model_key("seq", model)))
           if info and info.seq_label else None)
    dtype = st.selectbox("dtype", DTYPES, key="dtype")
    names = {d.device: d.name for d in backend.devices_or_cpu()}
    device = st.selectbox("Device", list(names), format_func=lambda d: f"{d}: {names[d]}", key="device")
    pass_ = st.radio("Pass", PASSES, horizontal=True, key="pass")
    choices = lab_modes(device)
    st.session_state["modes"] = [m for m in st.session_state.get("modes", []) if m in choices]  # CPU: no graph
    modes = st.multiselect("Compiled modes (compared with eager)", choices, key="modes",
                           help="eager_cuda_graph: eager's kernels replayed as one CUDA graph (GPU only)")
    variants, refused = variant_widget()
    dynamic = st.selectbox("dynamic", list(DYNAMIC_CHOICES), key="dynamic",
                           help="torch.compile(dynamic=...): false compiles for these exact shapes")
    with st.expander("Measurement"):
        rounds = st.slider("Timing rounds per process", 3, 30, RunConfig.rounds, key="rounds",
                           help="Each round times every mode once, in turn, so drift hits them alike")
        processes = st.slider("Timing processes", 1, 5, RunConfig.processes, key="processes",
                              help="Fresh worker processes the timing is repeated in: the spread between "
                                   "processes is part of the interval (one process understates it)")
        threads = (int(st.number_input("CPU threads", 1, 256, default_threads(), key="threads",
                                       help="Threads of ATen's and Inductor's C++ kernels"))
                   if device == "cpu" else None)
        cold = st.checkbox("Cold compile", key="cold", help="Compile in a fresh worker process with an empty "
                           "Inductor cache, to see what a first-ever compile costs")
        memory = st.checkbox("Memory", key="memory", help="Measure each mode's memory: a fresh process for each mode "
                             "no timing process ran first (a few seconds a mode on a CPU). Off: no memory view")
        limit = st.number_input("Time limit per mode (s)", 30, 3600, 900, step=30, key="limit")
    config = RunConfig(model=model, dim=dim, batch=batch, seq=seq, layers=layers, dtype=dtype, device=device,
                       pass_=pass_, modes=("eager", *modes, *variants), dynamic=DYNAMIC_CHOICES[dynamic], rounds=rounds,
                       processes=processes, threads=threads, cold_compile=cold, timeout_s=float(limit),
                       memory=memory)
    problem = model_problem(config)
    if problem:
        st.error(problem)
    clicked = st.button("Run", type="primary", key="run", width="stretch", on_click=on_screen.show_live,
                        disabled=problem is not None or refused)
    asked = state.take_lab_run()  # a proposal's "Re-run with" presses Run (ui/lab.py's "Try the fix")
    return config, clicked or (asked and problem is None and not refused)


def variant_widget() -> tuple[tuple[str, ...], bool]:
    """Variants to run beside the modes (`records.variants`: a compiled mode with named options), comma-separated;
    one that does not parse is said under the input, and the second value is True then (Run waits)."""
    text = st.text_input("Variant (MODE+OPTION)", key="variants", placeholder="default+freezing",
                         help=f"Timed beside the modes as a mode of its own: {SYNTAX}; several separated by commas. "
                              f"Options: {option_help()}")
    try:
        return tuple(m for m in parse_modes(text) if m != "eager"), False
    except ConfigError as exc:
        st.error(str(exc))
        return (), True


def size_widgets(model: str, info: ModelInfo | None) -> tuple[int, int | None]:
    """The width and depth widgets of `model`: the zoo's width from a slider all its models share; a real
    model's width in steps of its attention heads (or none, where its widths are its own) and its depth in
    blocks, each kept for that model, its published sizes first."""
    if info is None or not info.real:
        return st.select_slider("Hidden size (dim)", DIMS, key="dim"), None
    step = info.head_width or 8
    dim = (int(st.number_input(info.dim_label.capitalize(), step, MAX_DIM, info.default_dim or step, step=step,
                               key=state.model_key("dim", model)))
           if info.dim_label else int(info.default_dim or 0))
    layers = (int(st.number_input(info.layers_label.capitalize(), 1, MAX_LAYERS, info.default_layers or 1,
                                  key=state.model_key("layers", model)))
              if info.layers_label else None)
    return dim, layers


def run(config: RunConfig) -> backend.Finished | None:
    """Run `config` in its device's queue (or take it from the cache) and make it the session on screen."""
    measured = SessionRun(config)
    if state.runs().shared(measured.key) is None:
        for note in warnings_for(config):
            st.warning(note)
    return shown_when_done(backend.run_cached(
        "lab", measured, f"Running {config.model} (dim {config.dim}, batch {config.batch})…",
        "The run did not start", previews=True))


def shown_when_done(finished: backend.Finished | None) -> backend.Finished | None:
    """Put a run that finished for this user on their screen."""
    if finished:
        state.show("lab", finished.key, finished.took)
    return finished


grid: Session | None = None  # a crossover grid on screen: its heat map, and one cell of it in every view
with st.sidebar:
    st.header("On screen")
    shown = on_screen.choose()
    if shown is not None:
        st.markdown("  \n".join(on_screen.configuration_lines(shown.session)))
        if shown.session.grid is not None:
            grid, shown = shown.session, on_screen.grid_cell(shown)
        on_screen.prefill(shown.session, f"{shown.origin}|{shown.name}|{shown.session.label}", WIDGETS, REAL)
    measuring = st.container()

# The measuring widgets' device list waits for the worker's first answer, which a freshly started server has not
# had (ui/warm.py starts the worker once the first chart is on screen, so that torch's import does not take a core
# from it): until it has come, what is on screen is drawn first. A browser's first run draws the top of what is on
# screen and nothing else (ui/page.py).
config: RunConfig | None = None
clicked = False
top_first = shown is not None and top_only("lab")
if warm.devices_known() and not top_first:
    with measuring:
        config, clicked = measure_widgets()
finished = run(config) if config is not None and clicked else shown_when_done(backend.follow("lab", previews=True))
if finished:
    live = state.result(state.shown("lab"))
    shown = on_screen.Shown(live, "live", state.took("lab")) if live else shown

if shown is None:
    st.info("Nothing on screen yet. Pick a session in the sidebar, or measure here: choose a model and press "
            f"**Run**, or start with a small CPU example: {EXAMPLE.model} ({MODELS[EXAMPLE.model].purpose}), "
            "about 15 s.")
    if st.button("Run the small CPU example", key="example", on_click=on_screen.show_live):
        run(EXAMPLE)
        st.rerun()
else:
    report = analyse(shown.session)  # the one analysis of what is on screen; every section draws from it
    # The desk stays on the page in presentation mode, hidden by the stylesheet, so the toggle back shows it at
    # once where it drew every chart and table again; the presentation's view comes after it, which leaves the
    # desk's elements in their places (Streamlit keys an element by its place).
    with web.desk_only("lab"):
        sections.show_source(report, on_screen.opened_as(shown))
        if shown.origin == "live" and shown.name:
            st.caption(f"This run was {shown.name}.")
        measured = (SessionRun(config).key, SessionRun(EXAMPLE).key) if config is not None else None
        if shown.origin == "live" and measured and state.shown("lab") not in measured:
            st.caption("The sidebar has changed since this run: press **Run** to measure the new configuration.")
        sections.show_trace_notes(report)
        if grid is not None:
            lab.show_grid(analyse(grid), AT_DESK)
            st.subheader(f"Cell: dim {shown.session.config.dim} × batch {shown.session.config.batch}")
        rerun = on_screen.rerunner(shown.session, WIDGETS, REAL, devices_known=warm.devices_known())
        lab.show_top(report, AT_DESK, live=shown.origin == "live", rerun=rerun)
        if top_first:
            ask_for_the_rest("lab")
        else:
            lab.show_rest(report, AT_DESK)
    # The presentation's view is on the page in both modes too, hidden at the desk, so the toggle restyles the
    # page in the browser and reruns nothing else: a rerun of the page mounted the view's chart anew.
    if not top_first:
        with web.presentation_only("lab"):
            lab.present(report, PRESENTING, analyse(grid) if grid else None)

if config is None and not top_first:
    with measuring:
        config, clicked = measure_widgets()
    if clicked and run(config):  # pressed before the worker had answered (after "Clear caches")
        st.rerun()
