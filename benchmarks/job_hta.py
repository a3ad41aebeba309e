"""One run of HolisticTraceAnalysis for bench_job.py: a job's folder of rank traces loaded the way HTA's
documentation opens one (`TraceAnalysis(trace_dir=…)`: every rank parsed, in a pool of processes), every
profiled step included, then its communication/computation overlap per rank.

benchmarks/.venv/bin/python benchmarks/job_hta.py DIR   prints the ranks read and their overlap
"""

from __future__ import annotations

import logging
import os
import sys


def main(folder: str) -> None:
    logging.disable(logging.WARNING)  # HTA logs each stage at WARNING; the timing is what matters here
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=os.path.abspath(folder), include_last_profiler_step=True)
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    print(len(analysis.t.traces), overlap.to_dict("records"))


if __name__ == "__main__":
    main(sys.argv[1])
