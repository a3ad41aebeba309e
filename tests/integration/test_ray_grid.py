"""The crossover grid on a Ray cluster started here on the CPU (two CPUs), through the CLI, against the local
executor on the same four cells (`cpu_grid`): the same cells, each measured, with the same kernel counts, each
with the node and device it ran on; the cells' progress as a bar."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from fusionviz.cli import main
from fusionviz.records.session import Session
from tests.conftest import GRID_ARGS

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")


def kernel_counts(session: Session) -> list[tuple[int, int, dict[str, float]]]:
    assert session.grid is not None
    return [(c.dim, c.batch, {r.mode: r.summary.kernels_per_iteration for r in c.runs if r.summary})
            for c in session.grid.cells]


def test_the_grid_on_ray_gives_the_local_executors_cells(local_cluster: None, cpu_grid: Session, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main([*GRID_ARGS, "--ray", "auto", "--out", str(tmp_path / "ray.json.gz")]) == 0
    bars = [line for line in capsys.readouterr().err.splitlines() if "cells done" in line]
    on_ray = Session.load(tmp_path / "ray.json.gz")
    assert on_ray.grid is not None and cpu_grid.grid is not None
    assert [(c.dim, c.batch) for c in on_ray.grid.cells] == [(c.dim, c.batch) for c in cpu_grid.grid.cells] == [
        (16, 4), (32, 4), (16, 8), (32, 8)]
    assert all(c.error is None and c.timing is not None for c in on_ray.grid.cells)
    assert kernel_counts(on_ray) == kernel_counts(cpu_grid)
    assert all(counts["eager"] > counts["default"] for _, _, counts in kernel_counts(on_ray))  # the chain fuses
    here = socket.gethostname()
    assert {(c.node, c.device) for c in on_ray.grid.cells} == {(here, "cpu")} == {
        (c.node, c.device) for c in cpu_grid.grid.cells}
    assert bars[0].endswith("0/4 cells done · 2 running · 2 queued"), bars
    assert bars[-1].startswith("[" + "#" * 30 + "] 4/4 cells done · 0 running · 0 queued"), bars
