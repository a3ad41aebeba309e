"""A job of hand-made GPU traces: ranks from distributedInfo or file names, and every per-rank figure written
out as arithmetic (communication, its overlap with compute, busy time, the slowest rank, the diverging step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.job import intersection, job_figures, job_report, merged
from fusionviz.errors import SessionFileError
from fusionviz.records.job import read_job, read_uploaded_job
from tests.synthetic import encoded

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def rank_trace(rank: int | None, steps: list[tuple[float, list[tuple[str, float, float, int]]]]) -> dict[str, Any]:
    """Steps of (duration, kernels as (name, start, dur, stream) from the step's start), one after another; each
    kernel launched by its own op at the step's start."""
    events: list[dict[str, Any]] = []
    t0, corr = 1000.0, 0
    for s, (dur, kernels) in enumerate(steps):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "ts": t0, "dur": dur,
                       "pid": 1, "tid": 1})
        for name, start, length, stream in kernels:
            corr += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t0 + 1, "dur": 1,
                           "pid": 1, "tid": 1, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "ts": t0 + start, "dur": length, "pid": 0,
                           "tid": stream, "args": {"correlation": corr, "stream": stream}})
        t0 += dur + 10
    trace: dict[str, Any] = {"traceEvents": events}
    if rank is not None:
        trace["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    return trace


# rank 0, each step 100 µs: a GEMM at 10–50 on stream 7, an all-reduce at 40–80 on stream 13: communication
# 40 µs, of which 10 (40–50) overlaps compute; busy 70 of 100 µs. Rank 1 computes longer (10–70): 30 of its
# 40 µs of all-reduce (40–80) overlap, busy 70 of 100 in step 0; its second step lasts 130 µs.
RANK0 = rank_trace(0, [(100.0, [("sm90_xmma_gemm", 10, 40, 7), (NCCL, 40, 40, 13)])] * 2)
RANK1 = rank_trace(1, [(100.0, [("sm90_xmma_gemm", 10, 60, 7), (NCCL, 40, 40, 13)]),
                       (130.0, [("sm90_xmma_gemm", 10, 60, 7), (NCCL, 40, 40, 13)])])


def test_per_rank_figures_as_arithmetic() -> None:
    job = read_uploaded_job([("b.json", encoded(RANK1, gz=False)), ("a.json.gz", encoded(RANK0))], processes=1)
    figures = job_figures(job)
    r0, r1 = figures.ranks
    assert (r0.rank, r1.rank) == (0, 1)  # rank order, whatever the order of the files
    assert r0.steps == 2 and r0.kernels_per_step == 2
    assert r0.step_ms.median == pytest.approx(0.1)
    assert r0.communication_us == pytest.approx(40)
    assert r0.compute_us == pytest.approx(40)
    assert r0.overlap_pct == pytest.approx(100 * 10 / 40)
    assert r0.busy_pct == pytest.approx(100 * 70 / 100)
    assert r1.overlap_pct == pytest.approx(100 * 30 / 40)
    assert r1.busy_pct == pytest.approx(100 * (70 + 70) / (100 + 130))
    assert r1.step_ms.median == pytest.approx(0.115)  # of 100 and 130 µs
    assert r1.step_ms.low == pytest.approx(0.103) and r1.step_ms.high == pytest.approx(0.127)
    assert figures.slowest_rank == 1
    assert (figures.diverging_step, figures.diverging_spread_ms) == (1, pytest.approx(0.03))
    report = job_report(job)
    assert report["ranks"][0]["step_ms"] == {"median": pytest.approx(0.1), "low": pytest.approx(0.1),
                                             "high": pytest.approx(0.1)}
    assert report["slowest_rank"] == 1


def test_a_rank_from_the_file_name_when_the_trace_does_not_say(tmp_path: Path) -> None:
    for name in ("worker0.pt.trace.json", "host_rank-1.json.gz"):
        trace = rank_trace(None, [(100.0, [(NCCL, 0, 10, 13)])])
        (tmp_path / name).write_bytes(encoded(trace, gz=name.endswith(".gz")))
    (tmp_path / "notes.txt").write_text("not a trace")
    job = read_job([tmp_path], processes=1)
    assert [(r.rank, r.rank_from, Path(r.file).name) for r in job.ranks] == [
        (0, "file name", "worker0.pt.trace.json"), (1, "file name", "host_rank-1.json.gz")]
    assert job.ranks[0].backend is None and job.ranks[0].world_size is None
    assert job_figures(job).ranks[0].overlap_pct == 0.0  # communication alone, nothing to overlap


def test_refusals_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="holds no trace files"):
        read_job([tmp_path])
    (tmp_path / "a.json").write_bytes(encoded(RANK0, gz=False))
    (tmp_path / "b.json").write_bytes(encoded(RANK0, gz=False))
    with pytest.raises(SessionFileError, match=r"a\.json and .*b\.json are both rank 0"):
        read_job([tmp_path], processes=1)
    with pytest.raises(SessionFileError, match=r"cannot tell which rank wrote trace\.json"):
        read_uploaded_job([("trace.json", encoded(rank_trace(None, [(10.0, [])]), gz=False))], processes=1)
    with pytest.raises(SessionFileError, match=r"x\.json is not a torch\.profiler trace"):
        read_uploaded_job([("x.json", b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": \"0\"}]}")],
                          processes=1)


def test_one_rank_has_no_slowest() -> None:
    figures = job_figures(read_uploaded_job([("r.json", encoded(RANK0, gz=False))]))
    assert figures.slowest_rank is None and figures.diverging_step is None


def test_intervals() -> None:
    assert merged([(5, 6), (0, 2), (1, 3), (3, 4)]) == [(0, 4), (5, 6)]
    assert intersection([(0, 4), (5, 6)], [(3, 5.5)]) == [(3, 4), (5, 5.5)]
    assert intersection([(0, 1)], [(1, 2)]) == []
