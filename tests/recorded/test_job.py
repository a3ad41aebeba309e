"""A distributed job's figures on the recorded gloo DDP jobs (tests/data/ddp_gloo_*, scripts/record_ddp_job.py),
each checked against a count made here from the raw events, another way: every figure from the JSON by brute
force (containment by pairs, coverage by elementary segments), none from fusionviz's reader. Times agree to a
hundredth of a µs: the stamps are about 5e12 µs, and the reader subtracts each step's start first."""

from __future__ import annotations

import gzip
import itertools
import json
import statistics
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.job import job_figures, job_report
from fusionviz.records.job import read_job
from fusionviz.records.kernels import CPU_VIEW_OPS

DATA = Path(__file__).parent.parent / "data"
JOBS = ("ddp_gloo_eager", "ddp_gloo_compiled")


def raw_events(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    trace = json.loads(gzip.decompress(path.read_bytes()))
    return trace["distributedInfo"], [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def is_compute(e: dict[str, Any]) -> bool:
    """The README's CPU kernel: an ATen compute op (no view or allocation op) or an Inductor C++ kernel."""
    name = e["name"]
    return "cpp_fused" in name or (e.get("cat") == "cpu_op" and name.startswith("aten::")
                                   and name not in CPU_VIEW_OPS)


def inside(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """a lies within b on b's thread (b is not a itself)."""
    return a is not b and a["tid"] == b["tid"] and b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]


def coverage(step: tuple[float, float], spans: list[tuple[float, float]], other: list[tuple[float, float]]
             ) -> tuple[float, float]:
    """Time within `step` covered by `spans`, and by `spans` and `other` both, over elementary segments."""
    cuts = sorted({t for s in spans + other for t in s} | set(step))
    alone = both = 0.0
    for lo, hi in itertools.pairwise(cuts):
        mid = (lo + hi) / 2
        if any(s <= mid < e for s, e in spans):
            alone += hi - lo
            both += hi - lo if any(s <= mid < e for s, e in other) else 0.0
    return alone, both


def independent(path: Path) -> dict[str, Any]:
    info, events = raw_events(path)
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    compute = [e for e in events if is_compute(e)]
    top = [e for e in compute if not any(inside(e, o) for o in compute)]
    gloo = [e for e in events if e["name"].startswith("gloo:")]
    regions = [e for e in events if e["name"].startswith("Torch-Compiled Region")]
    calls = [e for e in events if e["name"].startswith("## Call CompiledFxGraph")]
    kernels = comm = both = graphs = splits = 0.0
    for step in steps:
        lo, hi = step["ts"], step["ts"] + step["dur"]
        mine = [e for e in top if lo <= e["ts"] and e["ts"] + e["dur"] <= hi]
        kernels += len(mine)
        collectives = [(e["ts"], e["ts"] + e["dur"]) for e in gloo if lo <= e["ts"] <= hi]
        c, b = coverage((lo, hi), collectives, [(e["ts"], e["ts"] + e["dur"]) for e in mine])
        comm, both = comm + c, both + b
        for region in (r for r in regions if lo <= r["ts"] <= hi):
            own = [g for g in calls if inside(g, region)
                   and not any(inside(g, r) and inside(r, region) for r in regions)]
            graphs += len(own)
            splits += max(len(own) - 1, 0)
    durations = sorted(s["dur"] for s in steps)
    return {"rank": info["rank"], "steps": len(steps), "median_ms": statistics.median(durations) / 1e3,
            "durations": [s["dur"] for s in steps], "kernels_per_step": kernels / len(steps),
            "communication_us": comm / len(steps), "overlap_pct": 100 * both / comm,
            "graphs_per_step": graphs / len(steps), "splits_per_step": splits / len(steps)}


@pytest.mark.parametrize("name", JOBS)
def test_every_rank_matches_its_raw_events(name: str) -> None:
    job = read_job([DATA / name])
    figures = job_figures(job)
    assert [r.rank for r in figures.ranks] == [0, 1]
    assert all(r.rank_from == "distributedInfo" and r.backend == "gloo" and r.world_size == 2 for r in job.ranks)
    for figure in figures.ranks:
        raw = independent(Path(figure.file))
        assert figure.rank == raw["rank"]
        assert figure.steps == raw["steps"] == 3
        assert figure.step_ms.median == pytest.approx(raw["median_ms"])
        assert figure.step_ms.low <= figure.step_ms.median <= figure.step_ms.high
        assert figure.kernels_per_step == raw["kernels_per_step"]
        assert figure.communication_us == pytest.approx(raw["communication_us"], abs=0.01)  # stamps of 5e12 µs
        assert figure.communication_us > 0
        assert figure.overlap_pct == pytest.approx(raw["overlap_pct"], abs=1e-4)
        assert figure.graphs_per_step == raw["graphs_per_step"]
        assert figure.graph_splits_per_step == raw["splits_per_step"]


def test_the_compiled_job_is_split_at_every_bucket() -> None:
    """Four blocks of 1 MB weights in 1 MB buckets: DDPOptimizer cuts the model's graph into four, on both
    ranks, which compiled the same graphs; the eager job has no compiled region at all."""
    compiled = job_figures(read_job([DATA / "ddp_gloo_compiled"]))
    assert [(r.graphs_per_step, r.graph_splits_per_step) for r in compiled.ranks] == [(4.0, 3.0), (4.0, 3.0)]
    assert compiled.same_graphs
    eager = job_figures(read_job([DATA / "ddp_gloo_eager"]))
    assert [(r.compiled_regions, r.graphs_per_step) for r in eager.ranks] == [(0, 0.0), (0, 0.0)]


@pytest.mark.parametrize("name", JOBS)
def test_the_slowest_rank_and_the_diverging_step(name: str) -> None:
    report = job_report(read_job([DATA / name]))
    raws = [independent(DATA / name / f"rank{r}.trace.json.gz") for r in (0, 1)]
    assert report["slowest_rank"] == max(raws, key=lambda r: r["median_ms"])["rank"]
    spreads = [abs(a - b) for a, b in zip(raws[0]["durations"], raws[1]["durations"], strict=True)]
    assert report["diverging_step"] == spreads.index(max(spreads))
    assert report["diverging_spread_ms"] == pytest.approx(max(spreads) / 1e3)
    assert {"rank", "file", "steps", "step_ms", "kernels_per_step", "communication_us",
            "overlap_pct"} <= set(report["ranks"][0])


def test_inspect_a_folder_gives_every_ranks_run_and_the_job(capsys: pytest.CaptureFixture[str]) -> None:
    from fusionviz.cli import main

    assert main(["inspect", str(DATA / "ddp_gloo_compiled"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [run["label"] for run in report["runs"]] == ["rank 0 · rank0.trace", "rank 1 · rank1.trace"]
    assert [run["kernels_per_iteration"] for run in report["runs"]] == [
        r["kernels_per_step"] for r in report["job"]["ranks"]]
    expected = job_report(read_job([DATA / "ddp_gloo_compiled"]))
    assert report["job"] == json.loads(json.dumps(expected))
    files = [str(DATA / "ddp_gloo_eager" / f"rank{r}.trace.json.gz") for r in (1, 0)]
    assert main(["inspect", *files]) == 0
    text = capsys.readouterr().out
    assert "the job, rank by rank" in text and "slowest rank:" in text
    table = text.split("the job, rank by rank")[1]
    assert table.index("rank0.trace.json.gz") < table.index("rank1.trace.json.gz")  # rank order, not the files'


def test_a_gloo_job_over_cuda_tensors_on_one_gpu_is_read_and_said_so() -> None:
    """Two ranks sharing one H100 (scripts/record_ddp_job.py --backend gloo --device cuda): GPU kernels, and gloo's
    collectives on the CPU as the communication; the kernels per step equal the trace's kernel events over its
    profiled steps, counted here from the JSON."""
    from ui.job_view import callouts

    folder = Path(__file__).parents[2] / "sessions" / "h100_ddp_gloo_cuda_compiled"
    job = read_job([folder])
    figures = job_figures(job)
    for rank, found in zip(job.ranks, figures.ranks, strict=True):
        _, events = raw_events(Path(rank.file))
        kernels = sum(e.get("cat") == "kernel" for e in events)
        steps = sum(e["name"].startswith("ProfilerStep#") and e.get("cat") == "user_annotation" for e in events)
        assert rank.parsed.device_kind == "cuda" and found.steps == steps
        assert found.kernels_per_step == pytest.approx(kernels / steps)
        assert found.communication_us > found.compute_us > 0  # gloo through the host dwarfs the small GEMMs
    assert "of a gloo job over CUDA tensors" in callouts(job)[0]


def test_a_pool_reading_a_job_under_streamlit_never_runs_the_page_again(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit installs each run's script as `__main__`; multiprocessing runs the parent's main file again in
    each child. A page that reads a job starts no copy of itself: none of the pool's processes runs the script,
    which notes each run of it, and `__main__` is the script's again afterwards."""
    runs = tmp_path / "runs.txt"
    page = tmp_path / "page.py"
    page.write_text(f"import os\nwith open({str(runs)!r}, 'a') as f:\n    f.write(str(os.getpid()) + '\\n')\n")
    script = types.ModuleType("__main__")
    script.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", script)
    job = read_job([DATA / "ddp_gloo_eager"], processes=2)
    assert [r.rank for r in job.ranks] == [0, 1]
    assert not runs.exists(), f"the pool's processes ran the page: {runs.read_text()}"
    assert sys.modules["__main__"] is script
