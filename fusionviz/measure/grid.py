"""The crossover grid: `config` at every dim × batch, each cell a session of its own, run on this host's devices
(one worker set per device, its cells one after another) or as tasks on a Ray cluster (`ray_grid`). It stands on
`client` (a cell is `run_session`) and on `ray_grid`, which stands on `client` alone. No torch here."""

from __future__ import annotations

import dataclasses
import socket
import threading

from fusionviz.errors import ConfigError, FusionvizError
from fusionviz.measure.catalog import validated
from fusionviz.measure.client import in_background, list_devices, run_session
from fusionviz.measure.protocol import CellCounts, CellProgress, Progress
from fusionviz.measure.ray_grid import run_cells
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Environment, Grid, GridCell, Session


def run_grid(config: RunConfig, dims: list[int], batches: list[int], progress: Progress | None = None,
             devices: list[str] | None = None, ray: str | None = None, counts: CellProgress | None = None) -> Session:
    """`config` at every dim × batch. By default the cells are spread over `devices` (default: every visible GPU,
    else the CPU), one worker set per device running its cells one after another; with `ray` (an address, or
    "auto"), each cell is a task on that Ray cluster (`ray_grid`). `counts` hears how many cells are done,
    running and queued. A cell that cannot run keeps its error; the grid goes on."""
    if not dims or not batches:
        raise ConfigError("a grid needs at least one dim and one batch")
    base = validated(config)
    cells = [(dim, batch) for batch in batches for dim in dims]
    for dim, batch in cells:  # refuse a bad size before any work starts
        validated(dataclasses.replace(base, dim=dim, batch=batch))
    if ray is not None:
        done, env = run_cells(base, cells, ray, counts)
        device = next((c.device for c in done.values() if c.device), base.device)
    else:
        if devices is None:
            with Worker() as probe:
                gpus = [d.device for d in list_devices(probe) if d.device.startswith("cuda")]
            devices = gpus or ["cpu"]
        done, env = _local_cells(base, cells, devices, progress, counts)
        device = devices[0]
    grid = Grid(dims=list(dims), batches=list(batches), cells=[done[c] for c in cells])
    return Session(config=dataclasses.replace(base, device=device),
                   environment=env or Environment(device_kind=base.device), grid=grid, source="live")


def _local_cells(base: RunConfig, cells: list[tuple[int, int]], devices: list[str], progress: Progress | None,
                 counts: CellProgress | None) -> tuple[dict[tuple[int, int], GridCell], Environment | None]:
    """The cells on this host, one thread per device running its share one after another."""
    queues: dict[str, list[tuple[int, int]]] = {d: cells[i::len(devices)] for i, d in enumerate(devices)}
    environment: dict[str, Environment] = {}
    lock = threading.Lock()  # progress lines and counts from several devices, one at a time
    node = socket.gethostname()
    started: set[tuple[int, int]] = set()
    finished: set[tuple[int, int]] = set()

    def tell_counts() -> None:
        if counts:
            running = len(started) - len(finished)
            counts(CellCounts(len(finished), running, len(cells) - len(finished) - running))

    def cell_on(device: str, dim: int, batch: int) -> GridCell:
        def told(stage: str) -> None:
            if progress:
                with lock:
                    progress(f"{device} dim {dim} batch {batch}: {stage}")
        with lock:
            started.add((dim, batch))
            tell_counts()
        try:
            cell = run_session(dataclasses.replace(base, dim=dim, batch=batch, device=device), told)
            environment.setdefault("env", cell.environment)
            return GridCell(dim=dim, batch=batch, device=device, node=node, runs=cell.runs, timing=cell.timing)
        except FusionvizError as exc:
            return GridCell(dim=dim, batch=batch, device=device, node=node, error=str(exc))
        finally:
            with lock:
                finished.add((dim, batch))
                tell_counts()

    def serve(device: str) -> dict[tuple[int, int], GridCell]:
        return {(dim, batch): cell_on(device, dim, batch) for dim, batch in queues[device]}

    # One thread per device, its cells one after another; an error that is no FusionvizError is raised here.
    # Daemons (`in_background`): a Ctrl-C leaves at once, the exit hook ending the workers they wait on.
    shares = [in_background(serve, device) for device in devices]
    done = {key: cell for share in shares for key, cell in share.result().items()}
    return done, environment.get("env")
