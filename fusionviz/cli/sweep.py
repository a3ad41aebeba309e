"""`sweep`: dynamic against static shapes over a schedule of sizes, written as a sweep session."""

from __future__ import annotations

import argparse

from fusionviz.cli.flags import add_config_flags, config_from, writable
from fusionviz.cli.reporter import Ticker, frame, write
from fusionviz.records.config import SWEEP_DIMENSIONS, SWEEP_SCHEDULES, SWEEP_STRATEGIES, SweepRequest, parse_sizes


class Sweep:
    name = "sweep"
    help = "dynamic vs static shapes over a schedule of sizes"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_config_flags(parser)
        parser.add_argument("--over", choices=SWEEP_DIMENSIONS, default=SweepRequest.dimension,
                            help="the dimension that changes")
        parser.add_argument("--sizes", default="", help="comma-separated sizes; default: --schedule")
        parser.add_argument("--schedule", choices=SWEEP_SCHEDULES, default=SweepRequest.schedule)
        parser.add_argument("--calls", type=int, default=SweepRequest.calls, help="calls in a generated schedule")
        parser.add_argument("--strategies", default=",".join(SWEEP_STRATEGIES))
        parser.add_argument("--buckets", default="", help="bucket sizes for the pad-to-buckets strategy")
        parser.add_argument("--cold-caches", action="store_true",
                            help="each strategy in a fresh process with an empty Inductor cache (compile times cold)")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.report import analyse
        from fusionviz.measure.client import run_sweep_session

        config = config_from(args, ("eager",))
        sizes = parse_sizes(args.sizes, "--sizes")
        request = SweepRequest(dimension=args.over, schedule="list" if sizes else args.schedule, sizes=sizes,
                               calls=args.calls,
                               strategies=[s.strip() for s in args.strategies.split(",") if s.strip()],
                               buckets=parse_sizes(args.buckets, "--buckets"), cold_caches=args.cold_caches)
        writable(args.out)
        session = run_sweep_session(config, request, Ticker())
        path = session.save(args.out)
        sweep = analyse(session).sweep
        assert sweep is not None  # run_sweep_session makes a sweep session
        write(frame(sweep.summary, digits=4), f"session written to {path}")
        return 0
