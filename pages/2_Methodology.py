"""Methodology: the widely copied naive measurement next to fusionviz's, on the same configuration.

The naive loop (no eager warm-up, wall clock, `len(prof.key_averages())` as a kernel count) runs in the
device's queue as the "naive" job; the proper measurement is the lab's own run, shared through its cache.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.captions import methodology_headline
from fusionviz.analysis.methodology import SHOWN_COLUMNS, Methodology, methodology
from fusionviz.analysis.report import Report, analyse
from fusionviz.measure.catalog import CATALOG
from fusionviz.measure.service import NaiveRun, SessionRun
from fusionviz.records.config import COMPILED_MODES, RunConfig, default_threads
from fusionviz.records.session import NaiveResult, Session
from ui import backend, sections, state, tables
from ui.page import setup_page
from ui.text import plain

settings = setup_page(
    "Methodology",
    "How the same model looks through the naive snippet everyone copies, through a proper measurement in one "
    "process, and through the same measurement repeated in several fresh processes.")

ROWS = [
    ("", "naive loop", "fusionviz, one process", "fusionviz, several processes"),
    ("eager warm-up", "none: eager pays one-off start-up inside the timed loop", "until steady", "until steady"),
    ("clock", "`time.time()` around the loop", "CUDA events on the GPU, `perf_counter` on the CPU", "the same"),
    ("modes", "each timed once, one after the other",
     "interleaved in rounds, so drift hits all alike; speedups within a round", "the same, in each fresh process"),
    ("spread", "none", "p10–p90 of the rounds: narrow, and it can be wrong",
     "p10–p90 of every round of every process: the spread between processes included"),
    ('"kernel count"', "`len(prof.key_averages())`: distinct op *names*, CPU ops included",
     "kernels per profiled iteration", "the same"),
    ("compile time", "left out", "timed on its own, with break-even calls", "the same"),
]
st.markdown("\n".join(["| " + " | ".join(row) + " |" for row in ROWS[:1]] + ["|---|---|---|---|"]
                      + ["| " + " | ".join(row) + " |" for row in ROWS[1:]]))


cols = st.columns(7)
model = cols[0].selectbox("Model", list(CATALOG), index=list(CATALOG).index("linear_ln_gelu"), key="m_model")
dim = int(cols[1].number_input("dim", 8, 8192, 64, key="m_dim"))
batch = int(cols[2].number_input("batch", 1, 8192, 32, key="m_batch"))
mode = cols[3].selectbox("Mode", COMPILED_MODES, key="m_mode")
device = cols[4].selectbox("Device", [d.device for d in backend.devices_or_cpu()], key="m_device")
calls = int(cols[5].number_input("Naive calls", 10, 5000, 100, key="m_calls"))
processes = int(cols[6].number_input("Processes", 2, 5, RunConfig.processes, key="m_processes"))
info = CATALOG[model]
config = RunConfig(model=model, dim=dim, batch=batch, seq=info.default_seq, device=device, modes=("eager", mode),
                   processes=processes, threads=default_threads() if device == "cpu" else None)
proper_run, naive_run = SessionRun(config), NaiveRun(config, mode, calls)


def measure() -> None:
    """Both measurements queued on the device, each cached: the proper one as the lab's run, so the lab
    reuses it."""
    backend.submit("m_proper", proper_run, "Measuring properly…", "The measurement failed")
    backend.submit("m_naive", naive_run, "Measuring the naive way…", "The naive measurement failed")


if st.button("Measure both ways", type="primary", key="m_run"):
    measure()
for slot in ("m_proper", "m_naive"):  # followed on every run, so a rerun while waiting loses nothing
    backend.follow(slot)

def show(report: Report, against: Methodology | None) -> None:
    """The naive loop against the proper measurement of `report`'s session: its headline (what the naive loop
    claims beside the measurement, the note on how far apart they are folded away), its chart, and every figure
    as text, folded away too."""
    sections.show_source(report)
    sections.show_run_problems(report.session)
    if against is None or against.note is None:
        st.info(f"{plain(against.naive.mode if against else mode)} did not run properly here, so there is nothing "
                "to compare.")
        return
    sections.show_headline(methodology_headline(against, report.comparisons), "How far apart they are")
    sections.chart(sections.methodology_chart(against, settings), "methodology", stamp=sections.stamp_of(report))
    with st.expander("All numbers"):
        tables.show(against.shown, "m_table", helps=SHOWN_COLUMNS)


naive: NaiveResult | None = state.result(naive_run.key)
proper: Session | None = state.result(proper_run.key)
if naive is not None and proper is not None:
    report = analyse(proper)
    show(report, methodology(proper, report.latencies, report.speedups, naive))
else:
    recorded = {name: s for name, s in backend.library()[0].items() if s.naive is not None and s.runs}
    if recorded:  # a session recorded with the naive loop says as much as a run here, until one is made
        name = st.selectbox("Recorded with the naive loop", list(recorded), key="m_recorded",
                            help="Sessions of the recorded library (sessions/) that ran the naive snippet too")
        st.caption("Shown until you measure here: **Measure both ways** runs the naive loop and the proper "
                   "measurement on this machine, on the model, sizes and mode above.")
        report = analyse(recorded[name])
        show(report, report.methodology)
    else:
        st.info("Press **Measure both ways**: the naive loop and the proper measurement run on the same model, "
                "sizes and mode (a few seconds to half a minute on the CPU).")
