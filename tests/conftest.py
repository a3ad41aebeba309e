"""Test tiers and shared fixtures.

Tiers by folder: `unit/` (hand-made traces, sessions and tables; seconds), `recorded/` (real traces and
sessions recorded on the H200), `integration/` (real torch.compile on the CPU, real Streamlit AppTest),
`e2e/` (a real headless Chromium), `gpu/` (CUDA). The last three are marked `slow`, so
`pytest -m "not slow"` is the fast loop. Real sessions from real CPU runs are made once per test session.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fusionviz.measure.client import run_session, run_sweep_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig, SweepRequest
from fusionviz.records.session import Session

ROOT = Path(__file__).parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"
SHIPPED_SWEEP = ROOT / "sessions" / "h200_sweep_transformer_block_seq.json.gz"


SLOW_TIERS = ("integration", "e2e", "gpu")


def has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--refresh-screenshots", action="store_true",
                     help="write the browser tests' screenshots into docs/screenshots (default: a temporary folder)")
    parser.addoption("--update-golden", action="store_true",
                     help="write the golden outputs (tests/golden) from what the code prints now, instead of "
                          "comparing with them")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folders = item.path.relative_to(Path(__file__).parent).parts[:-1]
        if any(part in SLOW_TIERS for part in folders):
            item.add_marker(pytest.mark.slow)
        if "e2e" in folders:
            item.add_marker(pytest.mark.e2e)
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items or os.environ.get("FUSIONVIZ_GPU_TESTS") == "1" or has_cuda():
        return
    skip = pytest.mark.skip(reason="needs CUDA: run on the GPU machine")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """`golden(name, text)`: `text` must equal tests/golden/NAME, or, under `--update-golden`, becomes it. The
    caller normalises what legitimately varies first; a mismatch is shown as a diff."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update:
            path.write_text(text)
            return
        assert path.exists(), f"no golden file {path.relative_to(ROOT)}: run pytest --update-golden"
        kept = path.read_text()
        diff = "".join(difflib.unified_diff(kept.splitlines(keepends=True), text.splitlines(keepends=True),
                                            f"golden/{name}", "now", n=1))
        if text != kept:
            pytest.fail(f"{name} differs from its golden file (pytest --update-golden accepts it):\n{diff}")

    return check


@pytest.fixture(scope="session")
def worker() -> Worker:
    with Worker() as w:
        yield w


@pytest.fixture(scope="session")
def ln_gelu_session(worker: Worker) -> Session:
    """linear_ln_gelu on the CPU: LayerNorm and GELU fuse into one C++ kernel."""
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, device="cpu",
                       modes=("eager", "default", "reduce-overhead"), rounds=3, processes=2, warmup_calls=3)
    return run_session(config, worker=worker)


@pytest.fixture(scope="session")
def small_sweep(worker: Worker) -> Session:
    """mlp on the CPU over batch 4, 8, 12 twice, static and dynamic: three static compiles, one dynamic."""
    config = RunConfig(model="mlp", dim=32, batch=12, device="cpu")
    request = SweepRequest(schedule="list", sizes=[4, 8, 12, 4, 8, 12], strategies=["static", "dynamic"],
                           steady_repeats=3)
    return run_sweep_session(config, request, worker=worker)


# A tiny crossover grid on the CPU: each executor's test runs it (the local one, and Ray's).
GRID_ARGS = ["grid", "--model", "pointwise_chain", "--dims", "16,32", "--batches", "4,8", "--device", "cpu",
             "--mode", "default", "--rounds", "3", "--processes", "1", "--no-memory"]


@pytest.fixture(scope="session")
def cpu_grid(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """GRID_ARGS measured by the local executor, through the CLI, and read back from its file."""
    from fusionviz.cli import main

    out = tmp_path_factory.mktemp("grid") / "grid.json.gz"
    assert main([*GRID_ARGS, "--devices", "cpu", "--out", str(out)]) == 0
    return Session.load(out)


@pytest.fixture(scope="session")
def shipped_sweep() -> Session:
    """The H200 sweep shipped in sessions/: transformer_block over seq 64..512 twice, all five strategies."""
    return Session.load(SHIPPED_SWEEP)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fuzz suite's count of inputs tried (tests/unit/test_fuzz.py), when it ran. Its helpers are read only
    if the suite imported them: a run without hypothesis (the fuzz tests skipped) must not import them here."""
    fuzzing = sys.modules.get("tests.fuzzing")
    tally = fuzzing.TALLY if fuzzing is not None else None
    if tally:
        total = sum(tally.values())
        failed = [r for r in terminalreporter.stats.get("failed", []) if "test_fuzz" in r.nodeid]
        escaped = f"{len(failed)} fuzz test(s) failed: see above" if failed else "no other exception escaped"
        terminalreporter.write_line(f"fuzz: {total:,} inputs tried: {tally['opened']:,} opened, "
                                    f"{tally['refused']:,} refused with fusionviz's own error; {escaped}")


@pytest.fixture
def local_cluster() -> Iterator[None]:
    """A Ray cluster of two CPUs started here for one test (the Ray tests' modules skip without Ray)."""
    import ray

    ray.init(num_cpus=2, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
