"""The recorded library in sessions/: every file opens anywhere, and says what the H200 measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusionviz.analysis.grid import grid_table
from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_file
from fusionviz.records.session import SCHEMA_VERSION, Session

SESSIONS = Path(__file__).parents[2] / "sessions"
LIBRARY = sorted(SESSIONS.glob("*.json.gz"))
ACCOUNTING = sorted(SESSIONS.glob("h200_acct_*.json.gz"))  # schema 3, with provenance and DRAM counters


def opened(name: str) -> Session:
    path = SESSIONS / name
    return open_file(path.read_bytes(), path.name)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.name)
def test_every_recorded_session_opens_and_names_its_machine(path: Path) -> None:
    session = open_file(path.read_bytes(), path.name)
    machine = {"h200": "NVIDIA H200", "h100": "NVIDIA H100 80GB HBM3"}[path.name.split("_")[0]]  # as its name says
    assert session.source == "recorded" and session.environment.device_name == machine
    assert session.environment.torch_version.startswith("2.11")
    if session.sweep is None:  # the sweep predates the interleaved timing (schema 2); every other file has it
        assert 2 <= session.schema_version <= SCHEMA_VERSION
        timed = session.timing or next(c.timing for c in session.grid.cells)  # type: ignore[union-attr]
        assert timed is not None and all(p.pinned_cpu is not None for p in timed.processes)


RERECORDED = [p for p in LIBRARY if p not in ACCOUNTING and open_file(p.read_bytes(), p.name).schema_version >= 3]
OLDER = [p for p in LIBRARY if p not in ACCOUNTING and p not in RERECORDED]


@pytest.mark.parametrize("path", OLDER, ids=lambda p: p.name)
def test_sessions_recorded_before_provenance_are_linked_by_names(path: Path) -> None:
    session = open_file(path.read_bytes(), path.name)
    eager = session.run("eager")
    for run in (r for r in session.runs if r.ok and r.mode != "eager" and eager is not None and eager.ok):
        assert run.provenance == [] and run_links(eager, run).kind == "names"


def test_the_library_was_re_recorded_with_provenance_and_the_ladder() -> None:
    # 2026-12-01: the 36 zoo rows of scripts/library_rows.txt on an H200; 2026-12-06: its six real-model rows (GPT-2
    # small in inference and train, Llama, BERT, ViT, ResNet-50) on an H100; only the grid and the sweep are from
    # 2026-11-30
    rows = [line for line in (Path(__file__).parents[2] / "scripts" / "library_rows.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(RERECORDED) == len(rows) == 42 and [p.name for p in OLDER] == [
        "h200_grid_mlp_default.json.gz", "h200_sweep_transformer_block_seq.json.gz"]


@pytest.mark.parametrize("path", RERECORDED, ids=lambda p: p.name)
def test_re_recorded_sessions_link_by_provenance_and_climb_the_ladder(path: Path) -> None:
    session = open_file(path.read_bytes(), path.name)
    eager = session.run("eager")
    assert eager is not None and eager.ok and session.ceilings is not None
    for run in (r for r in session.runs if r.ok and r.mode not in ("eager", "eager_cuda_graph")):
        assert run.provenance and run_links(eager, run).kind == "provenance", run.mode
    graphed = session.run("eager_cuda_graph")
    assert graphed is not None  # run, or not applicable with the reason
    steps = {s.step: s for s in analyse(session).ladder}
    assert "eager → default" in steps
    if graphed.ok:
        assert steps["eager → eager_cuda_graph"].delta_us is not None
    else:
        assert graphed.status == "not_applicable" and "captured as one CUDA graph" in (graphed.error or "")
        assert steps["eager → eager_cuda_graph"].not_applicable


@pytest.mark.parametrize("path", ACCOUNTING, ids=lambda p: p.name)
def test_accounting_sessions_carry_provenance_counters_and_the_ladder(path: Path) -> None:
    session = open_file(path.read_bytes(), path.name)
    eager, default = session.run("eager"), session.run("default")
    assert eager is not None and default is not None and default.provenance
    assert run_links(eager, default).kind == "provenance"
    assert eager.dram_counters and default.dram_counters  # ncu counted eager and default, one iteration each
    assert session.run("eager_cuda_graph") is not None and session.ceilings is not None
    assert {s.step for s in analyse(session).ladder} >= {"eager → eager_cuda_graph", "eager → default"}


@pytest.mark.parametrize("path", [p for p in RERECORDED if p.name.startswith("h100_")], ids=lambda p: p.name)
def test_every_mode_of_the_h100_s_recordings_carries_its_memory(path: Path) -> None:
    # the H100's recordings (2026-12-06 and after) measured each mode's memory in a fresh process of its own
    session = open_file(path.read_bytes(), path.name)
    ran = [r for r in session.runs if r.ok]
    assert len(ran) >= 3 and [r.mode for r in ran if r.memory is None] == []
    assert {r.memory.method for r in ran if r.memory is not None} == {"cuda_allocator"}
    assert all(r.memory.held_bytes >= r.memory.inputs_bytes > 0 for r in ran if r.memory is not None)


def test_the_bandwidth_bound_chain_collapses_and_wins() -> None:
    session = opened("h100_pointwise_chain_4096x4096_float32.json.gz")
    assert [len(iteration_kernels(session.run(m))) for m in ("eager", "default")] == [18, 1]
    default = analyse(session).comparisons["default"]
    assert default.verdict == "faster" and default.speedup.low > 5


def test_the_launch_bound_mlp_loses_under_default_and_the_naive_loop_is_kept() -> None:
    session = opened("h100_mlp_512x256_float32.json.gz")
    compared = analyse(session).comparisons
    assert compared["default"].verdict == "slower" and compared["default"].speedup.high < 1
    assert session.naive is not None and session.naive.mode == "default"


def test_the_grid_holds_every_cell() -> None:
    session = opened("h200_grid_mlp_default.json.gz")
    table = grid_table(session)
    assert len(table) == len(session.grid.dims) * len(session.grid.batches)  # type: ignore[union-attr]
    assert set(table.verdict) <= {"faster", "slower", "no clear difference"}


def test_inspect_json_carries_latency_speedup_and_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    from fusionviz.cli import main

    path = SESSIONS / "h100_mlp_512x256_float32.json.gz"
    assert main(["inspect", str(path), "--json"]) == 0
    runs = {r["label"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    compared = analyse(opened(path.name)).comparisons
    assert runs["eager"]["speedup"] is None and runs["eager"]["verdict"] is None
    default = runs["default"]
    assert default["verdict"] == compared["default"].verdict == "slower"
    assert default["speedup"] == pytest.approx({"median": compared["default"].speedup.median,
                                                "low": compared["default"].speedup.low,
                                                "high": compared["default"].speedup.high})
    assert default["latency_ms"]["low"] <= default["latency_ms"]["median"] <= default["latency_ms"]["high"]
    trace = Path(__file__).parents[1] / "data" / "h200_linear_ln_gelu_fp32_default.trace.json.gz"
    assert main(["inspect", str(trace), "--json"]) == 0
    (plain,) = json.loads(capsys.readouterr().out)["runs"]
    assert (plain["latency_ms"], plain["speedup"], plain["verdict"]) == (None, None, None)


def test_inspect_says_which_busy_figure_is_which(capsys: pytest.CaptureFixture[str]) -> None:
    """The header's busy share is over a timed call, each iteration's over its profiled span: they differ (44%
    against 8–21% for eager here), and the text says so and by how much the profiler stretched the iterations."""
    from fusionviz.cli import main

    path = SESSIONS / "h100_mlp_512x256_float32.json.gz"
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    report = analyse(opened(path.name))
    stretched = report.stretch["eager"]  # the median profiled span over the median timed call
    assert f"GPU busy {report.busy['eager']:.0%} of a timed call" in text
    assert "GPU time of each profiled iteration (µs; busy = kernels over the profiled span" in text
    assert f"the profiled iterations ran {stretched:.1f}x as long as a timed call" in text
