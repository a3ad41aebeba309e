"""Shared fixtures: real sessions from real CPU runs, made once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fusionviz.config import RunConfig
from fusionviz.runner import run_session
from fusionviz.session import Session
from fusionviz.worker import Worker

DATA = Path(__file__).parent / "data"


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
