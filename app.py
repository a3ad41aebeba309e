"""fusion lab: pick a model and sizes, run eager and compiled passes, and see what torch.compile fused.

`streamlit run app.py`. The measurement runs in a worker process (fusionviz.measure.client); this page
holds the widgets and the layout; the sections are in ui.lab.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.errors import SessionFileError
from fusionviz.measure.catalog import CATALOG
from fusionviz.measure.client import run_session
from fusionviz.records.config import (
    COMPILED_MODES,
    DTYPES,
    DYNAMIC_CHOICES,
    PASSES,
    RunConfig,
    default_threads,
    warnings_for,
)
from fusionviz.records.session import Session
from ui import backend, lab, sections, state
from ui.page import setup_page

EXAMPLE = RunConfig(model="linear_ln_gelu", dim=64, batch=32, modes=("eager", "default"), threads=default_threads())
DIMS = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
BATCHES = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]

settings = setup_page(
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
        seq = (int(st.number_input(info.seq_label.capitalize(), 1, 16384, info.default_seq or 128,
                                   key=f"seq_{model}"))
               if info.seq_label else None)
        dtype = st.selectbox("dtype", DTYPES, key="dtype")
        names = {d.device: d.name for d in backend.devices_or_cpu()}
        device = st.selectbox("Device", list(names), format_func=lambda d: f"{d}: {names[d]}", key="device")
        pass_ = st.radio("Pass", PASSES, horizontal=True, key="pass")
        modes = st.multiselect("Compiled modes (compared with eager)", COMPILED_MODES, default=["default"],
                               key="modes")
        dynamic = st.selectbox("dynamic", list(DYNAMIC_CHOICES), key="dynamic",
                               help="torch.compile(dynamic=...): false compiles for these exact shapes")
        with st.expander("Measurement"):
            rounds = st.slider("Timing rounds per process", 3, 30, RunConfig.rounds, key="rounds",
                               help="Each round times every mode once, in turn, so drift hits them alike")
            processes = st.slider("Timing processes", 1, 5, RunConfig.processes, key="processes",
                                  help="Fresh worker processes the timing is repeated in: the spread between "
                                       "processes is part of the interval (one process understates it)")
            threads = (int(st.number_input("CPU threads", 1, 256, default_threads(), key="threads",
                                           help="Threads of ATen's and Inductor's C++ kernels")
                           ) if device == "cpu" else None)
            cold = st.checkbox("Cold compile", key="cold", help="Compile in a fresh worker process with an empty "
                               "Inductor cache, to see what a first-ever compile costs")
            limit = st.number_input("Time limit per mode (s)", 30, 3600, 900, step=30, key="limit")
        clicked = st.button("Run", type="primary", key="run", width="stretch")
    config = RunConfig(model=model, dim=dim, batch=batch, seq=seq, dtype=dtype, device=device, pass_=pass_,
                       modes=("eager", *modes), dynamic=DYNAMIC_CHOICES[dynamic], rounds=rounds,
                       processes=processes, threads=threads, cold_compile=cold, timeout_s=float(limit))
    return config, clicked


def run(config: RunConfig) -> None:
    """Run `config` (or take it from the cache) and make it the session on screen."""
    key = state.result_key("session", config)
    if key not in state.results():
        for note in warnings_for(config):
            st.warning(note)
    took = backend.run_cached(key, f"Running {config.model} (dim {config.dim}, batch {config.batch})…",
                              "The run did not start",
                              lambda progress: run_session(config, progress, worker=backend.shared_worker()))
    if took:
        state.show("lab", key, took)


def example_session() -> tuple[Session | None, str]:
    """A ready session for the first visit: the first recording shipped in sessions/ that has mode runs
    (a shape sweep alone has none: it shows on the Dynamic shapes page), if any."""
    for path in backend.recorded_files():
        try:
            session = backend.open_bytes(path.read_bytes(), path.name)
        except SessionFileError as exc:
            st.warning(f"{path.name} could not be opened: {exc}")
            continue
        if session.runs:
            return session, path.name
    return None, ""


config, clicked = sidebar()
if clicked:
    run(config)

shown: Session | None = state.results().get(state.shown("lab"))
if shown is None:
    example, name = example_session()
    if example is not None:
        shown = example
        if not state.presentation():  # on a projector the source line says enough
            st.info(f"You are looking at **{name}**, a session recorded earlier and shipped with fusionviz. Choose "
                    "a configuration in the sidebar and press **Run** to measure on this machine.")
    else:
        st.info("Nothing measured yet. Choose a model in the sidebar and press **Run**, or start with a small CPU "
                f"example: {EXAMPLE.model} ({CATALOG[EXAMPLE.model].purpose}), about 15 s.")
        if st.button("Run the small CPU example", key="example"):
            run(EXAMPLE)
            shown = state.results().get(state.shown("lab"))
elif state.shown("lab") not in (state.result_key("session", config), state.result_key("session", EXAMPLE)):
    st.caption("The sidebar has changed since this run: press **Run** to measure the new configuration.")

if shown is not None:
    sections.show_source(shown)
    if shown.source == "live" and state.took("lab"):
        st.caption(f"This run was {state.took('lab')}.")
    if state.presentation():
        lab.present(shown, settings)
    else:
        lab.report(shown, settings)
