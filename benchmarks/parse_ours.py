"""One run of fusionviz's reader for bench_parse.py: a Chrome trace into the kernel table, as a fresh process.

python benchmarks/parse_ours.py TRACE [rows|frame]   prints the kernel rows found

`rows` is the table as `inspect` and the GPU worker use it (KernelRow Structs, no pandas); `frame` also builds
the pandas DataFrame the app draws from.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.trace import parse_trace


def main(path: str, form: str = "rows") -> None:
    parsed = parse_trace(Path(path).read_bytes())
    if form == "frame":
        kernels = int((parsed.kernels.kernel_class != MEMORY_CLASS).sum())
    else:
        kernels = sum(r.kernel_class != MEMORY_CLASS for r in parsed.kernel_rows)
    print(kernels)  # device kernels (memory operations are rows too, counted apart)


if __name__ == "__main__":
    main(*sys.argv[1:])
