"""The job view of the Trace explorer: a distributed job's traces (one per rank) opened together, a row per rank
with the slowest rank and the diverging step called out, any one rank for the usual views, and two jobs (eager
against compiled) side by side. Figures and their definitions are `fusionviz.analysis.job`'s."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from fusionviz.analysis.job import JobFigures, job_figures
from fusionviz.errors import FusionvizError
from fusionviz.records.job import Job, RankTrace
from ui import backend, tables
from ui.memo import memo
from ui.text import plain

RANK_COLUMNS: dict[str, str] = {
    "rank": "the rank (from the trace's distributedInfo, else its file name)",
    "file": "the trace's file",
    "steps": "profiled steps",
    "step_ms": "median step time",
    "step_p10_ms": "its p10",
    "step_p90_ms": "its p90",
    "kernels_per_step": "kernels per step as fusionviz counts them (on the CPU: top-level compute ops)",
    "busy_pct": "kernel time over the step's span",
    "compute_us": "compute kernels' time per step (their union)",
    "communication_us": "communication per step: NCCL/RCCL kernels, gloo's collectives (their union)",
    "overlap_pct": "of the communication time, the share during which compute runs",
    "graphs_per_step": "compiled graphs called inside compiled regions",
    "graph_splits_per_step": "of those, the ones beyond the first in one region call: DDP's bucket splits",
}
FOLDER, UPLOAD, RECORDED = "A folder on this machine", "Upload rank traces", "Recorded job (sessions/)"


def pick_job(label: str, key: str) -> Job | None:
    """A job from a folder, uploaded files or sessions/; errors shown, never raised."""
    recorded = backend.recorded_jobs()
    sources = [FOLDER, UPLOAD] + ([RECORDED] if recorded else [])
    source = st.radio(label, sources, horizontal=True, key=f"{key}_source")
    try:
        if source == UPLOAD:
            uploads = st.file_uploader("One torch.profiler trace per rank", type=["json", "gz"],
                                       accept_multiple_files=True, key=f"{key}_files")
            if not uploads:
                return None
            return backend.open_job_uploads(tuple((u.name, u.getvalue()) for u in uploads))
        if source == RECORDED:
            folder = st.selectbox("Recorded job", recorded, format_func=lambda p: p.name, key=f"{key}_recorded")
            return backend.open_job_folder(folder)
        typed = st.text_input("Folder of the job's traces (.json, .json.gz: one per rank)", key=f"{key}_folder",
                              placeholder="/path/to/profiler/traces")
        return backend.open_job_folder(Path(typed).expanduser()) if typed.strip() else None
    except FusionvizError as exc:
        st.error(plain(exc))
        return None


def figures(job: Job) -> JobFigures:
    return memo(job, ("job_figures",), lambda: job_figures(job))  # type: ignore[no-any-return]


def rank_table(job: Job) -> pd.DataFrame:
    """One row per rank (RANK_COLUMNS)."""
    rows = [{"rank": r.rank, "file": Path(r.file).name, "steps": r.steps, "step_ms": r.step_ms.median,
             "step_p10_ms": r.step_ms.low, "step_p90_ms": r.step_ms.high, "kernels_per_step": r.kernels_per_step,
             "busy_pct": r.busy_pct, "compute_us": r.compute_us, "communication_us": r.communication_us,
             "overlap_pct": r.overlap_pct, "graphs_per_step": r.graphs_per_step,
             "graph_splits_per_step": r.graph_splits_per_step} for r in figures(job).ranks]
    return pd.DataFrame(rows, columns=list(RANK_COLUMNS))


def callouts(job: Job) -> list[str]:
    """Sentences on the job: its ranks, the slowest, the step where they diverge, graphs that differ."""
    found = figures(job)
    first = job.ranks[0]
    over_gpu = first.backend == "gloo" and first.parsed.device_kind == "cuda"
    said = [f"{len(job.ranks)} ranks" + (f" of a {first.backend} job" if first.backend else "")
            + (" over CUDA tensors (gloo's collectives run on the CPU, each through a copy to the host and back)"
               if over_gpu else "")
            + (f" of {first.world_size}" if first.world_size and first.world_size != len(job.ranks) else "")]
    if found.slowest_rank is not None:
        slowest = next(r for r in found.ranks if r.rank == found.slowest_rank)
        others = sorted(r.step_ms.median for r in found.ranks if r.rank != slowest.rank)
        typical = others[len(others) // 2]
        said.append(f"slowest rank: **{slowest.rank}**, median step {slowest.step_ms.median:.3g} ms "
                    f"({100 * (slowest.step_ms.median / typical - 1):+.0f}% against the others' median)")
    if found.diverging_step is not None and found.diverging_spread_ms is not None:
        said.append(f"the ranks diverge most in step {found.diverging_step}: "
                    f"{found.diverging_spread_ms:.3g} ms between the fastest and the slowest")
    if not found.same_graphs:
        said.append("the ranks did not all call the same compiled graphs")
    return said


def show_job(job: Job, key: str) -> None:
    st.caption(f"Source of data: **{plain(job.source)}**")
    st.markdown(" · ".join(callouts(job)))
    tables.show(rank_table(job), f"{key}_ranks", helps=RANK_COLUMNS)


def pick_rank(job: Job, key: str) -> RankTrace:
    ranks = {r.rank: r for r in job.ranks}
    slowest = figures(job).slowest_rank
    chosen = st.selectbox("Rank to look into", list(ranks), key=f"{key}_rank",
                          index=list(ranks).index(slowest) if slowest is not None else 0,
                          format_func=lambda r: f"{ranks[r].label}" + (" (slowest)" if r == slowest else ""))
    return ranks[chosen]


def job_summary(jobs: dict[str, Job]) -> pd.DataFrame:
    """Jobs side by side: the median over their ranks of each figure, and the slowest rank."""
    rows = []
    for name, job in jobs.items():
        frame = rank_table(job)
        rows.append({"job": name, "ranks": len(frame), **{c: frame[c].median() for c in list(RANK_COLUMNS)[3:]},
                     "slowest_rank": figures(job).slowest_rank})
    return pd.DataFrame(rows)


def show_side_by_side(a: Job, b: Job) -> None:
    st.markdown("**Two jobs side by side** (each figure the median over the job's ranks)")
    tables.show(job_summary({"A": a, "B": b}), "jobs_summary")
    left, right = st.columns(2)
    for side, job, column in (("A", a, left), ("B", b, right)):
        with column:
            st.markdown(f"**{side}**")
            show_job(job, f"job_{side}")
