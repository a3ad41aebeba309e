"""The naive snippet's figures next to the proper measurement of the same mode, and a sentence on the gap."""

from __future__ import annotations

import pandas as pd

from fusionviz.analysis.summary import comparisons
from fusionviz.records.session import NaiveResult, Session

METHODOLOGY_COLUMNS: dict[str, str] = {
    "quantity": "what is measured",
    "naive": "what the naive loop reports",
    "proper": "what fusionviz measures",
    "low": "proper measurement's pessimistic end (speedups only)",
    "high": "proper measurement's optimistic end (speedups only)",
}


def methodology_table(naive: NaiveResult, session: Session) -> pd.DataFrame:
    """Naive against the session's proper figures for the same mode (METHODOLOGY_COLUMNS; rows: speedup,
    eager ms, mode ms, eager kernels, mode kernels); empty when eager or that mode did not run."""
    eager, run = session.run("eager"), session.run(naive.mode)
    vs = comparisons(session).get(naive.mode)
    if not (eager and run and vs and eager.latency and run.latency and eager.summary and run.summary):
        return pd.DataFrame(columns=list(METHODOLOGY_COLUMNS))
    mode = run.mode
    rows = [
        (f"speedup of {mode} over eager", naive.naive_speedup, vs.speedup, vs.low, vs.high),
        ("eager, ms per call", naive.naive_eager_ms, eager.latency.median_ms, eager.latency.p10_ms,
         eager.latency.p90_ms),
        (f"{mode}, ms per call", naive.naive_mode_ms, run.latency.median_ms, run.latency.p10_ms,
         run.latency.p90_ms),
        ("eager, kernels", naive.key_averages_rows_eager, eager.summary.kernels_per_iteration, None, None),
        (f"{mode}, kernels", naive.key_averages_rows_mode, run.summary.kernels_per_iteration, None, None),
    ]
    return pd.DataFrame(rows, columns=list(METHODOLOGY_COLUMNS)).astype(
        {"naive": float, "proper": float, "low": float, "high": float})


def methodology_note(table: pd.DataFrame) -> str:
    """One sentence on how far apart the two measurements are."""
    speed, kernels = table.iloc[0], table.iloc[3]
    return (f"The naive loop reports a {speed.naive:.2f}× speedup; measured properly it is {speed.proper:.2f}× "
            f"(range {speed.low:.2f}–{speed.high:.2f}×). key_averages() lists {kernels.naive:g} rows for eager, "
            f"which runs {kernels.proper:g} kernels per iteration.")
