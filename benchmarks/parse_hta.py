"""One run of HolisticTraceAnalysis for bench_parse.py: a Chrome trace into its kernel table, as a fresh
process, the way HTA's documentation opens a trace (`TraceAnalysis`), every profiled step included.

benchmarks/.venv/bin/python benchmarks/parse_hta.py TRACE   prints the kernel rows found
"""

from __future__ import annotations

import logging
import os
import sys


def main(path: str) -> None:
    logging.disable(logging.WARNING)  # HTA logs each stage at WARNING; the timing is what matters here
    from hta.trace_analysis import TraceAnalysis

    path = os.path.abspath(path)
    analysis = TraceAnalysis(trace_files={0: path}, trace_dir=os.path.dirname(path),
                             include_last_profiler_step=True)
    events = analysis.t.get_trace(0)
    kernel = analysis.t.symbol_table.get_sym_id_map()["kernel"]
    kernels = events[events["cat"] == kernel]
    print(len(kernels))


if __name__ == "__main__":
    main(sys.argv[1])
