"""Latencies and speedups with their real spread, from the session's raw timing rounds.

Every mode is timed in interleaved rounds in several processes, so a speedup is taken within each round
(eager's ms / the mode's ms in the same round: drift of the machine cancels) and its interval pools the
rounds of every process, so the spread between processes is part of it. The verdict calls a difference
only when the whole interval lies on one side of 1 and is not too wide to mean anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from fusionviz.records.session import Session

Verdict = Literal["faster", "slower", "no clear difference"]
TOO_WIDE = 3.0  # an interval whose ends are more than this factor apart is noise, not a measurement
# A difference that cannot exceed this is no difference a user acts on, however sure it is: an interval of
# 0.997–1.000x (a 4096 × 4096 cell of the H200 grid) is "no clear difference", not "slower".
NEGLIGIBLE = 0.03
QUANTILES = (10, 50, 90)

ROUND_COLUMNS: dict[str, str] = {
    "process": "timing process, 0-based",
    "round": "round within the process, 0-based",
    "mode": "compile mode",
    "ms": "mean ms per call over the round's block of calls",
}


@dataclass(frozen=True)
class Estimate:
    """A median with its p10–p90 interval over `samples` rounds pooled from `processes` processes.

    `samples == 0` marks a speedup from unpaired per-mode samples (each mode timed apart, `ModeRun.latency`):
    its interval is a ratio of quantiles rather than of paired rounds."""

    median: float
    low: float
    high: float
    samples: int
    processes: int


def round_table(session: Session, only_process: int | None = None) -> pd.DataFrame:
    """Every round of every timing process that ran (or of one of them), long (ROUND_COLUMNS)."""
    rows = [{"process": p.index, "round": r, "mode": mode, "ms": ms}
            for p in (session.timing.processes if session.timing else [])
            if p.error is None and only_process in (None, p.index)
            for r, result in enumerate(p.rounds) for mode, ms in result.items()]
    return pd.DataFrame(rows, columns=list(ROUND_COLUMNS))


def _estimate(values: pd.Series, processes: int) -> Estimate:
    low, median, high = np.percentile(values.to_numpy(dtype=float), QUANTILES)
    return Estimate(float(median), float(low), float(high), len(values), processes)


def latency_estimates(session: Session, only_process: int | None = None) -> dict[str, Estimate]:
    """Per-call latency of each timed mode: median and p10–p90 over every round of every process (or of
    one process: what a single-process measurement would have reported); without rounds, over each mode's own
    unpaired samples."""
    rounds = round_table(session, only_process)
    if len(rounds):
        return {str(mode): _estimate(group.ms, group.process.nunique())
                for mode, group in rounds.groupby("mode", sort=False)}
    return {r.mode: Estimate(r.latency.median_ms, r.latency.p10_ms, r.latency.p90_ms, len(r.latency.samples_ms), 1)
            for r in session.runs if r.ok and r.latency is not None}


def speedup_estimates(session: Session, only_process: int | None = None) -> dict[str, Estimate]:
    """Each timed mode against eager (eager's ms / the mode's ms), from rounds paired within a process;
    without rounds, the ratio of unpaired latencies' quantiles (samples 0)."""
    rounds = round_table(session, only_process)
    if len(rounds):
        wide = rounds.pivot_table(index=["process", "round"], columns="mode", values="ms")
        if "eager" not in wide:
            return {}
        return {str(mode): _estimate(wide["eager"] / wide[mode], rounds.process.nunique())
                for mode in rounds["mode"].drop_duplicates() if mode in wide}
    latencies = latency_estimates(session, only_process)
    eager = latencies.get("eager")
    if eager is None:
        return {}
    return {mode: Estimate(eager.median / lat.median, eager.low / lat.high, eager.high / lat.low, 0, 1)
            for mode, lat in latencies.items()}


def paired_speedup(session: Session, mode: str, against: str) -> Estimate | None:
    """`mode` against another mode (`against`'s ms / `mode`'s ms in the same round), from rounds paired within a
    process, as `speedup_estimates` takes each mode against eager; None without rounds of both."""
    rounds = round_table(session)
    if not len(rounds):
        return None
    wide = rounds.pivot_table(index=["process", "round"], columns="mode", values="ms")
    if mode not in wide or against not in wide:
        return None
    return _estimate((wide[against] / wide[mode]).dropna(), rounds.process.nunique())


def verdict_of(speedup: Estimate) -> Verdict:
    """Faster or slower only when the whole interval is on one side of 1, not too wide to call, and reaching
    beyond a negligible difference (NEGLIGIBLE) at its far end."""
    if speedup.high / speedup.low > TOO_WIDE:
        return "no clear difference"
    if speedup.low > 1.0 and speedup.high > 1.0 + NEGLIGIBLE:
        return "faster"
    if speedup.high < 1.0 and speedup.low < 1.0 / (1.0 + NEGLIGIBLE):
        return "slower"
    return "no clear difference"

