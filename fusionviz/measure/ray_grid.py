"""The crossover grid on a Ray cluster: each cell one Ray task that asks for a GPU (`num_gpus=1`; on a cluster
without GPUs, CPUs), run in a fresh Ray worker process (`max_calls=1`) on whichever node Ray chooses, where it
measures the cell as a local run does (`client.run_session`, its own fusionviz workers). Ray schedules; fusionviz
only submits the cells and gathers them, each with the node and the GPU it ran on.

Ray is an optional extra (requirements-ray.txt), imported only here and only when a grid asks for it. The
cluster's nodes need torch; fusionviz itself travels with the tasks (Ray's `py_modules`). No torch here.
"""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path
from typing import Any

from fusionviz.errors import ConfigError, FusionvizError
from fusionviz.measure.protocol import CellCounts, CellProgress
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Environment, GridCell

INSTALL = "pip install -r requirements-ray.txt"
POLL_S = 1.0  # how often the progress is told while cells run


def import_ray() -> Any:
    """Ray, or a ConfigError saying how to install it, in one line."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray needs Ray, which is not installed here: {INSTALL}") from None
    return ray


def run_cells(base: RunConfig, cells: list[tuple[int, int]], address: str,
              counts: CellProgress | None = None) -> tuple[dict[tuple[int, int], GridCell], Environment | None]:
    """Every (dim, batch) cell of `base` as a Ray task on the cluster at `address` ("auto": the one running here,
    else a local one started for the grid and stopped after it), gathered as they finish; a cell whose task
    failed keeps the failure as its error. Returns the cells and the environment of the first that ran."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        package = str(Path(__file__).resolve().parents[1])
        ray.init(address=None if address == "auto" else address, runtime_env={"py_modules": [package]},
                 logging_level="ERROR", log_to_driver=False)
    try:
        gpus = int(ray.cluster_resources().get("GPU", 0))
        cpus = max(1, base.threads or 1)
        task = ray.remote(max_calls=1)(_cell).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else cpus)
        slots = gpus or max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus)
        pending = {task.remote(base, dim, batch, bool(gpus)): (dim, batch) for dim, batch in cells}
        done: dict[tuple[int, int], GridCell] = {}
        environment: Environment | None = None
        told = None
        while pending:
            running = min(len(pending), slots)
            if counts and told != (now := CellCounts(len(done), running, len(pending) - running)):
                counts(now)
                told = now
            finished, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
            for ref in finished:
                dim, batch = pending.pop(ref)
                try:
                    cell, env = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    cell, env = GridCell(dim=dim, batch=batch, device="", error=f"the Ray task failed: {exc}"), None
                done[(dim, batch)] = cell
                environment = environment or env
        if counts:
            counts(CellCounts(len(done), 0, 0))
        return done, environment
    finally:
        if started:
            ray.shutdown()


def _cell(base: RunConfig, dim: int, batch: int, on_gpu: bool) -> tuple[GridCell, Environment | None]:
    """One cell, inside its Ray task: Ray has made the GPU it gave the task the only one visible (cuda:0)."""
    import ray

    from fusionviz.measure.client import run_session

    node = socket.gethostname()
    gpu = ray.get_gpu_ids()[0] if on_gpu else None
    device = f"cuda:{gpu}" if gpu is not None else "cpu"  # the node's own numbering of the GPU
    config = dataclasses.replace(base, dim=dim, batch=batch, device="cuda:0" if on_gpu else "cpu")
    try:
        session = run_session(config)
    except FusionvizError as exc:
        return GridCell(dim=dim, batch=batch, device=device, node=node, error=str(exc)), None
    return (GridCell(dim=dim, batch=batch, device=device, node=node, runs=session.runs, timing=session.timing),
            session.environment)
