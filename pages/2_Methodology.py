"""Methodology: the widely copied naive measurement next to fusionviz's, on the same configuration.

The naive loop (no eager warm-up, wall clock, `len(prof.key_averages())` as a kernel count) runs in the
worker as the "naive" job; the proper measurement is the lab's own run, shared through its cache.
"""

from __future__ import annotations

import dataclasses
import time

import streamlit as st

import ui
from fusionviz import charts
from fusionviz.catalog import CATALOG
from fusionviz.config import COMPILED_MODES, ConfigError, RunConfig, validate
from fusionviz.runner import run_session
from fusionviz.session import Session
from fusionviz.worker import WorkerError

settings = ui.setup_page(
    "Methodology",
    "How the same model looks through the naive snippet everyone copies, and through a measurement that "
    "warms eager up, times with a device-aware clock over repeats, and counts kernels per iteration.")

st.markdown("""
| | naive loop | fusionviz |
|---|---|---|
| eager warm-up | none: eager pays one-off start-up inside the timed loop | warm-up calls before timing |
| clock | `time.time()` around the loop | CUDA events on the GPU, `perf_counter` on the CPU, over repeats with p10–p90 |
| "kernel count" | `len(prof.key_averages())`: distinct op *names*, CPU ops included | kernels per profiled iteration |
| compile time | left out | timed on its own, with break-even calls |
""")

cols = st.columns(6)
model = cols[0].selectbox("Model", list(CATALOG), index=list(CATALOG).index("linear_ln_gelu"), key="m_model")
dim = int(cols[1].number_input("dim", 8, 8192, 64, key="m_dim"))
batch = int(cols[2].number_input("batch", 1, 8192, 32, key="m_batch"))
mode = cols[3].selectbox("Mode", COMPILED_MODES, key="m_mode")
device = cols[4].selectbox("Device", [d["device"] for d in ui.devices_or_cpu()], key="m_device")
calls = int(cols[5].number_input("Naive calls", 10, 5000, 100, key="m_calls"))
info = CATALOG[model]
config = RunConfig(model=model, dim=dim, batch=batch, seq=info.default_seq, device=device, modes=("eager", mode),
                   repeats=5)
key = f"naive|{config.key()}|{calls}"


def measure() -> None:
    """Both measurements, each cached: the proper one under the lab's key, so the lab reuses it."""
    store = ui.results()
    started = time.monotonic()
    with st.status("Measuring…", expanded=True) as box:
        def progress(stage: str) -> None:
            box.update(label=f"{stage} · {time.monotonic() - started:.0f} s")
            box.write(f"{time.monotonic() - started:5.1f} s · {stage}")

        try:
            if config.key() not in store:
                store[config.key()] = run_session(config, progress, worker=ui.shared_worker())
            request = {"op": "naive", "config": dataclasses.asdict(validate(config)), "mode": mode, "calls": calls}
            st.session_state[key] = ui.shared_worker().request(request, progress)["naive"]
        except (ConfigError, WorkerError) as exc:
            box.update(label="The measurement failed", state="error")
            st.error(str(exc))
            return
        box.update(label=f"Done in {time.monotonic() - started:.1f} s", state="complete", expanded=False)


if st.button("Measure both ways", type="primary", key="m_run"):
    measure()

naive = st.session_state.get(key)
proper: Session | None = ui.results().get(config.key())
if naive is None or proper is None:
    st.info("Press **Measure both ways**: the naive loop and the proper measurement run on the same model, sizes "
            "and mode (a few seconds to half a minute on the CPU).")
else:
    ui.show_source(proper)
    ui.show_run_problems(proper)
    table = charts.prepare_methodology(naive, proper)
    if table.empty:
        st.info(f"{mode} did not run properly here, so there is nothing to compare.")
    else:
        ui.chart(charts.methodology_figure(table, settings), "methodology")
        st.dataframe(table, hide_index=True, key="m_table")
        st.caption(charts.methodology_note(table))
