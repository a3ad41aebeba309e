"""Shared fixtures: real sessions from real CPU runs, made once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fusionviz.config import RunConfig, SweepRequest
from fusionviz.runner import run_session, run_sweep_session
from fusionviz.session import Session
from fusionviz.worker import Worker

DATA = Path(__file__).parent / "data"
SHIPPED_SWEEP = Path(__file__).parent.parent / "sessions" / "8_h200_sweep_transformer_block.json.gz"


def has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("FUSIONVIZ_GPU_TESTS") == "1" or has_cuda():
        return
    skip = pytest.mark.skip(reason="needs CUDA: run on the GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def worker() -> Worker:
    with Worker() as w:
        yield w


@pytest.fixture(scope="session")
def ln_gelu_session(worker: Worker) -> Session:
    """linear_ln_gelu on the CPU: LayerNorm and GELU fuse into one C++ kernel."""
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, device="cpu",
                       modes=("eager", "default", "reduce-overhead"), repeats=3, warmup_calls=3)
    return run_session(config, worker=worker)


@pytest.fixture(scope="session")
def small_sweep(worker: Worker) -> Session:
    """mlp on the CPU over batch 4, 8, 12 twice, static and dynamic: three static compiles, one dynamic."""
    config = RunConfig(model="mlp", dim=32, batch=12, device="cpu")
    request = SweepRequest(schedule="list", sizes=[4, 8, 12, 4, 8, 12], strategies=["static", "dynamic"],
                           steady_repeats=3)
    return run_sweep_session(config, request, worker=worker)


@pytest.fixture(scope="session")
def shipped_sweep() -> Session:
    """The H200 sweep shipped in sessions/: transformer_block over seq 64..512 twice, all five strategies."""
    return Session.load(SHIPPED_SWEEP)
