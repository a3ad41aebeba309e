"""Which cores a GPU's timing workers run on: one each, so that they warm side by side."""

from __future__ import annotations

import pytest

from fusionviz.measure.client import timing_cores


@pytest.fixture
def sixteen_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: set(range(16)))


def test_each_timing_worker_of_a_gpu_has_a_core_of_its_own(sixteen_cores: None) -> None:
    assert timing_cores("cuda:0", 3) == [15, 14, 13]
    assert timing_cores("cuda", 1) == [15]


def test_gpus_timing_at_once_share_no_core_while_there_are_enough(sixteen_cores: None) -> None:
    taken = [core for gpu in range(5) for core in timing_cores(f"cuda:{gpu}", 3)]
    assert len(set(taken)) == len(taken) == 15
    assert timing_cores("cuda:5", 3) == [0, 15, 14]  # past the machine's cores they wrap around
