"""The naive snippet's figures next to a proper measurement in one process and in several, and a sentence
on the gap."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.timing import Estimate, latency_estimates, speedup_estimates
from fusionviz.records.session import NaiveResult, Session

METHODOLOGY_COLUMNS: dict[str, str] = {
    "quantity": "what is measured",
    "naive": "what the naive loop reports",
    "one_process": "the proper measurement in its first timing process alone",
    "one_low": "its p10 (speedups and latencies)",
    "one_high": "its p90",
    "proper": "the proper measurement over every timing process",
    "low": "its p10, the spread between processes included",
    "high": "its p90",
}


# The table as shown: each figure as text, "—" where a row has none (a kernel count is counted, not timed).
SHOWN_COLUMNS: dict[str, str] = {
    "quantity": "what is measured",
    "naive loop": "what the naive loop reports",
    "one process": "the proper measurement in its first timing process alone",
    "one process, p10–p90": "its spread; — for a count, which has none",
    "every process": "the proper measurement over every timing process",
    "every process, p10–p90": "its spread, the spread between processes included; — for a count",
}
NONE = "—"


@dataclass(frozen=True)
class Methodology:
    """The naive loop against the proper measurement: its table (empty when the mode was not timed), the same
    as text for showing (`shown`, SHOWN_COLUMNS) and the note on how far apart they are (None then)."""

    naive: NaiveResult
    table: pd.DataFrame  # METHODOLOGY_COLUMNS
    note: str | None
    shown: pd.DataFrame  # SHOWN_COLUMNS


def methodology(session: Session, latencies: dict[str, Estimate], speedups: dict[str, Estimate],
                naive: NaiveResult | None = None) -> Methodology | None:
    """The naive loop (the session's own, else `naive`, measured apart) set against the session's measurement
    (its modes' latencies and speedups over every process); None when there is none."""
    naive = session.naive or naive
    if naive is None:
        return None
    table = methodology_table(naive, session, latencies, speedups)
    note = None if table.empty else methodology_note(table, session.config.processes)
    return Methodology(naive, table, note, shown_table(table))


def methodology_table(naive: NaiveResult, session: Session, latencies: dict[str, Estimate],
                      speedups: dict[str, Estimate]) -> pd.DataFrame:
    """Naive against the session's proper figures for the same mode (METHODOLOGY_COLUMNS; rows: speedup,
    eager ms, mode ms, eager kernels, mode kernels): its first timing process alone, and every process (the
    modes' `latencies` and `speedups`); empty when eager or that mode was not timed."""
    eager, run = session.run("eager"), session.run(naive.mode)
    first = min((p.index for p in session.timing.processes if p.error is None), default=0) if session.timing \
        else None
    one_lat, all_lat = latency_estimates(session, first), latencies
    one_vs, all_vs = speedup_estimates(session, first), speedups
    mode = naive.mode
    if not (eager and run and eager.summary and run.summary and mode in all_vs and mode in one_vs):
        return pd.DataFrame(columns=list(METHODOLOGY_COLUMNS))
    rows = [
        (f"speedup of {mode} over eager", naive.naive_speedup, one_vs[mode], all_vs[mode]),
        ("eager, ms per call", naive.naive_eager_ms, one_lat["eager"], all_lat["eager"]),
        (f"{mode}, ms per call", naive.naive_mode_ms, one_lat[mode], all_lat[mode]),
    ]
    table: list[tuple[object, ...]] = [(q, n, one.median, one.low, one.high, every.median, every.low, every.high)
                                       for q, n, one, every in rows]
    table += [("eager, kernels", naive.key_averages_rows_eager, eager.summary.kernels_per_iteration, None, None,
               eager.summary.kernels_per_iteration, None, None),
              (f"{mode}, kernels", naive.key_averages_rows_mode, run.summary.kernels_per_iteration, None, None,
               run.summary.kernels_per_iteration, None, None)]
    return pd.DataFrame(table, columns=list(METHODOLOGY_COLUMNS)).astype(
        {c: float for c in METHODOLOGY_COLUMNS if c != "quantity"})


def shown_table(table: pd.DataFrame) -> pd.DataFrame:
    """`table` (METHODOLOGY_COLUMNS) as text (SHOWN_COLUMNS): speedups "2.90x", latencies "0.076", kernel counts
    "5", and NONE where a figure has no value (a count has no spread)."""
    def cell(quantity: str, value: float) -> str:
        if value != value:  # NaN: a count's interval, or a figure not measured
            return NONE
        if quantity.startswith("speedup"):
            return f"{value:.2f}x"
        return f"{value:.3f}" if quantity.endswith("ms per call") else f"{value:g}"

    rows = [(r.quantity, *(cell(r.quantity, v) for v in (r.naive, r.one_process)),
             NONE if r.one_low != r.one_low else f"{cell(r.quantity, r.one_low)}–{cell(r.quantity, r.one_high)}",
             cell(r.quantity, r.proper),
             NONE if r.low != r.low else f"{cell(r.quantity, r.low)}–{cell(r.quantity, r.high)}")
            for r in table.itertuples()]
    return pd.DataFrame(rows, columns=list(SHOWN_COLUMNS))


def methodology_note(table: pd.DataFrame, processes: int) -> str:
    """A few words on how far apart the three measurements are."""
    speed, kernels = table.iloc[0], table.iloc[3]
    return (f"The naive loop reports a {speed.naive:.2f}x speedup. Measured properly in one process it is "
            f"{speed.one_process:.2f}x ({speed.one_low:.2f}–{speed.one_high:.2f}x); over {processes} processes "
            f"{speed.proper:.2f}x ({speed.low:.2f}–{speed.high:.2f}x), the spread between processes included. "
            f"key_averages() lists {kernels.naive:g} rows for eager, which runs {kernels.proper:g} kernels per "
            f"iteration. A count has no spread ({NONE}): it is counted, not timed.")
