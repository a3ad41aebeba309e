"""The crossover grid on a Ray cluster: each cell one Ray task that asks for a GPU (`num_gpus=1`; on a cluster
without GPUs, CPUs), run in a fresh Ray worker process (`max_calls=1`) on whichever node Ray chooses, where it
measures the cell as a local run does (`client.run_session`, its own fusionviz workers). Ray schedules; fusionviz
only submits the cells and gathers them, each with the node and the GPU it ran on. The library's rows
(scripts/record_library.py) go the same way, each a `python -m fusionviz run` command in its task.

Ray is an optional extra (requirements-ray.txt), imported only here and only when a grid asks for it. The
cluster's nodes need torch; fusionviz itself travels with the tasks (Ray's `py_modules`). No torch here.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from fusionviz.errors import ConfigError, FusionvizError
from fusionviz.measure.client import run_session
from fusionviz.measure.protocol import CellCounts, CellProgress
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Environment, GridCell

INSTALL = "pip install -r requirements-ray.txt"
POLL_S = 1.0  # how often the progress is told while cells run
Key = TypeVar("Key")


@dataclasses.dataclass(frozen=True)
class CommandRun:
    """One CLI command run as a Ray task: where it ran (the node's own numbering of its GPU), and how it ended."""

    node: str
    device: str
    returncode: int
    output: str  # its stdout, then its stderr


def import_ray() -> Any:
    """Ray, or a ConfigError saying how to install it, in one line."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray needs Ray, which is not installed here: {INSTALL}") from None
    return ray


@contextmanager
def cluster(address: str) -> Iterator[Any]:
    """Ray, connected to the cluster at `address` ("auto": the one running here, else a local one started for the
    caller and stopped after it); a connection made before is used as it is."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        package = str(Path(__file__).resolve().parents[1])
        ray.init(address=None if address == "auto" else address, runtime_env={"py_modules": [package]},
                 logging_level="ERROR", log_to_driver=False)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def as_tasks(ray: Any, function: Callable[..., Any], calls: dict[Key, tuple[Any, ...]], cpus: int,
             counts: CellProgress | None = None) -> Iterator[tuple[Key, Any]]:
    """Each call of `function` (its arguments, then whether it has a GPU) as a Ray task in a fresh worker process
    (`max_calls=1`) that asks for one GPU (on a cluster without GPUs, `cpus` CPUs), yielded as (key, its result, or
    the RayError of a task that failed) as they finish; `counts` is told the calls done, running and queued."""
    gpus = int(ray.cluster_resources().get("GPU", 0))
    task = ray.remote(max_calls=1)(function).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else cpus)
    slots = gpus or max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus)
    pending = {task.remote(*arguments, bool(gpus)): key for key, arguments in calls.items()}
    done = 0
    told = None
    while pending:
        running = min(len(pending), slots)
        if counts and told != (now := CellCounts(done, running, len(pending) - running)):
            counts(now)
            told = now
        finished, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
        for ref in finished:
            key = pending.pop(ref)
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError as exc:
                result = exc
            done += 1
            yield key, result
    if counts:
        counts(CellCounts(done, 0, 0))


def run_cells(base: RunConfig, cells: list[tuple[int, int]], address: str,
              counts: CellProgress | None = None) -> tuple[dict[tuple[int, int], GridCell], Environment | None]:
    """Every (dim, batch) cell of `base` as a Ray task on the cluster at `address`, gathered as they finish; a cell
    whose task failed keeps the failure as its error. Returns the cells and the environment of the first that ran."""
    with cluster(address) as ray:
        calls = {(dim, batch): (base, dim, batch) for dim, batch in cells}
        done: dict[tuple[int, int], GridCell] = {}
        environment: Environment | None = None
        for (dim, batch), result in as_tasks(ray, _cell, calls, max(1, base.threads or 1), counts):
            if isinstance(result, ray.exceptions.RayError):
                cell, env = GridCell(dim=dim, batch=batch, device="", error=f"the Ray task failed: {result}"), None
            else:
                cell, env = result
            done[(dim, batch)] = cell
            environment = environment or env
        return done, environment


def run_command(argv: list[str], on_gpu: bool) -> CommandRun:
    """`python -m fusionviz ARGV --device D` inside its Ray task, in a process of its own (D: the GPU Ray gave the
    task, the only one visible, cuda:0; else the CPU); fusionviz is found where the task's copy of it lies."""
    import ray

    gpu = ray.get_gpu_ids()[0] if on_gpu else None
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "fusionviz", *argv, "--device", "cuda:0" if on_gpu else "cpu"],
                          capture_output=True, text=True, env=env, check=False)
    return CommandRun(node=socket.gethostname(), device=f"cuda:{gpu}" if gpu is not None else "cpu",
                      returncode=done.returncode, output=done.stdout + done.stderr)


def _cell(base: RunConfig, dim: int, batch: int, on_gpu: bool) -> tuple[GridCell, Environment | None]:
    """One cell, inside its Ray task: Ray has made the GPU it gave the task the only one visible (cuda:0)."""
    import ray

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
