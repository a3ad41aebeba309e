"""`grid`: eager against one compiled mode over hidden dim × batch, the cells spread over the devices."""

from __future__ import annotations

import argparse

from fusionviz.cli.flags import add_config_flags, add_memory_flag, config_from, writable
from fusionviz.cli.reporter import Ticker, cell_bar, frame, write
from fusionviz.errors import ConfigError
from fusionviz.records.config import parse_modes, parse_sizes


class Grid:
    name = "grid"
    help = ("a crossover grid: eager against one compiled mode over hidden dim × batch, spread over every visible "
            "GPU (one worker set per GPU), or over a Ray cluster (--ray)")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_config_flags(parser, sizes=False)
        parser.add_argument("--mode", default="default",
                            help="the compiled mode compared with eager, or a variant (MODE+OPTION, as run's --modes)")
        add_memory_flag(parser)
        parser.add_argument("--dims", required=True, help="comma-separated hidden dims")
        parser.add_argument("--batches", required=True, help="comma-separated batch sizes")
        parser.add_argument("--devices", default=None,
                            help="comma-separated devices (default: every visible GPU, else the CPU)")
        parser.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                            help="run each cell as a task on a Ray cluster (one GPU a cell; CPUs on a cluster "
                                 "without GPUs): auto is the cluster running here, else a local one "
                                 "(requirements-ray.txt)")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.report import analyse
        from fusionviz.measure.grid import run_grid

        dims, batches = parse_sizes(args.dims, "--dims"), parse_sizes(args.batches, "--batches")
        if not dims or not batches:
            raise ConfigError("--dims and --batches each need at least one size")
        config = config_from(args, ("eager", *parse_modes(args.mode)), dim=dims[0], batch=batches[0],
                             memory=not args.no_memory)
        devices = [d.strip() for d in args.devices.split(",") if d.strip()] if args.devices else None
        if args.ray is not None and devices is not None:
            raise ConfigError("--devices and --ray exclude each other: Ray places the cells on its cluster's GPUs")
        writable(args.out)
        if args.ray is not None:
            from fusionviz.measure.ray_grid import import_ray

            import_ray()  # before any work: without Ray, the one line that says how to install it
        session = run_grid(config, dims, batches, Ticker(), devices=devices, ray=args.ray, counts=cell_bar)
        path = session.save(args.out)
        grid = analyse(session).grid
        assert session.grid is not None and grid is not None  # run_grid makes a grid session
        write(frame(grid.table, digits=3), f"session written to {path}")
        return 0 if any(c.error is None for c in session.grid.cells) else 1
