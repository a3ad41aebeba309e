"""`run`: eager and compiled modes measured in the worker, written as a session file."""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import pickle
from pathlib import Path

from fusionviz.cli.flags import add_config_flags, add_memory_flag, config_from, writable
from fusionviz.cli.reporter import Ticker, frame, note, write
from fusionviz.records.config import MODES, RunConfig, parse_modes
from fusionviz.records.session import Session
from fusionviz.records.variants import SYNTAX, option_help

SHOWN = ["mode", "median_ms", "p10_ms", "p90_ms", "speedup", "speedup_low", "speedup_high", "verdict",
         "kernels_per_iteration", "busy_pct", "compile_s", "break_even_calls"]  # of the summary table


class Run:
    name = "run"
    help = "run eager and compiled modes, write a session file"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_run_flags(parser)
        parser.add_argument("--memory-snapshot", default=None, metavar="OUT.pickle",
                            help="also write each mode's GPU allocator history over one steady iteration as PyTorch's "
                                 "memory viewer reads it (pytorch.org/memory_viz), one file a mode: OUT.<mode>.pickle")
        parser.add_argument("--naive-calls", type=int, default=0,
                            help="also run the naive snippet (no warm-up, wall clock) with this many calls, for the "
                                 "methodology view")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.report import analyse
        from fusionviz.analysis.verdict import verdict

        writable(args.out)
        if args.memory_snapshot:
            writable(args.memory_snapshot)
        session = measure(args, naive_calls=args.naive_calls)
        path = session.save(args.out)
        report = analyse(session)
        write(frame(report.summary[SHOWN], digits=4))
        for run in session.runs:
            if not run.ok:
                note(f"{run.mode}: {run.status}: {run.error}")
        for warning in report.warnings:
            note(f"warning: {warning}")
        if args.memory_snapshot:
            written = write_snapshots(session, Path(args.memory_snapshot))
            note(f"memory snapshots written: {', '.join(str(p) for p in written)}" if written else
                 "no memory snapshot: the allocator history is recorded on a GPU only")
        write(verdict(session, report.latencies, report.speedups, report.comparisons, report.busy),
              f"session written to {path}")
        return 0 if any(r.ok for r in session.runs) else 1


def add_run_flags(parser: argparse.ArgumentParser, out: str = "session file to write (.json or .json.gz)") -> None:
    """The flags that say what `run` measures (a configuration, its modes, how it compiles and calibrates) and the
    file it writes (`out` its help): `snapshot` takes the same."""
    add_config_flags(parser, out=out)
    parser.add_argument("--modes", default=",".join(RunConfig.modes),
                        help=f"comma-separated: {', '.join(MODES)}; or a variant: {SYNTAX}, "
                             f"default+mark_dynamic=0, reduce-overhead+fullgraph. Options: {option_help()}")
    parser.add_argument("--cold-compile", action="store_true",
                        help="compile in a fresh process with an empty cache")
    add_memory_flag(parser)
    parser.add_argument("--recalibrate", action="store_true",
                        help="measure the device's ceilings (copy bandwidth, matmul rates) again instead of "
                             "reading them from the cache of an earlier run")


def measure(args: argparse.Namespace, naive_calls: int = 0) -> Session:
    """The session the run flags (`add_run_flags`) describe, measured with progress on stderr, after the notes a
    user should read before a run."""
    return measure_config(config_from(args, parse_modes(args.modes), cold_compile=args.cold_compile,
                                      memory=not args.no_memory),
                          naive_calls=naive_calls, recalibrate=args.recalibrate)


def measure_config(config: RunConfig, naive_calls: int = 0, recalibrate: bool = False) -> Session:
    """`config` measured through the client, with its notes first and progress on stderr."""
    from fusionviz.measure.client import run_session
    from fusionviz.records.config import warnings_for

    for warning in warnings_for(config):
        note(f"note: {warning}")
    return run_session(config, Ticker(), naive_calls=naive_calls, recalibrate=recalibrate)


def write_snapshots(session: Session, out: Path) -> list[Path]:
    """Each mode's allocator history (`ModeMemory.snapshot_gz_b64`) as PyTorch's memory viewer reads it: the
    snapshot's dict (`segments`, `device_traces`) pickled, one file a mode beside `out` (`OUT.<mode>.pickle`);
    the modes without one (the CPU's) are passed over. Returns the files written."""
    written = []
    for run in session.runs:
        kept = run.memory.snapshot_gz_b64 if run.memory is not None else None
        if not kept:
            continue
        snapshot = json.loads(gzip.decompress(base64.b64decode(kept)))
        path = out.with_name(f"{out.stem}.{run.mode}{out.suffix or '.pickle'}")
        path.write_bytes(pickle.dumps(snapshot))
        written.append(path)
    return written
