"""DRAM bytes counted by the GPU's hardware counters (Nsight Compute), per kernel of one iteration.

`scripts/dram_bytes.py` runs one iteration of a mode under `ncu --metrics dram__bytes_read.sum,
dram__bytes_write.sum --csv`; `scripts/fold_counters.py` reads that CSV here and keeps its rows in the session's
run (`ModeRun.dram_counters`), launch order kept, so the analysis can set them beside the estimate kernel by
kernel. These are bytes that reached DRAM: a working set that stays in L2 (the H200 has 60 MB) is read once or
not at all, so they can be far below what the kernels ask for."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from fusionviz.errors import FusionvizError

READ, WRITTEN = "dram__bytes_read.sum", "dram__bytes_write.sum"
UNITS = {"byte": 1, "Kbyte": 1_000, "Mbyte": 1_000_000, "Gbyte": 1_000_000_000}


@dataclass
class DramCount:
    """One kernel launch's DRAM traffic as the counters saw it."""

    kernel: str
    read: int
    written: int


def read_ncu_csv(text: str, source: str) -> list[DramCount]:
    """The kernels of an `ncu --csv` output in launch order (ncu's `==PROF==` lines skipped); `source` names
    the file in the error raised where it holds no DRAM metric."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    found: dict[str, DramCount] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        metric = row.get("Metric Name")
        if metric not in (READ, WRITTEN):
            continue
        try:
            value = round(float(row["Metric Value"].replace(",", "")) * UNITS[row.get("Metric Unit") or "byte"])
        except (KeyError, ValueError) as err:
            raise FusionvizError(f"{source}: a {metric} value that is not a byte count ({err})") from err
        count = found.setdefault(row["ID"], DramCount(row["Kernel Name"], 0, 0))
        if metric == READ:
            count.read = value
        else:
            count.written = value
    if not found:
        raise FusionvizError(f"{source} holds no {READ} or {WRITTEN} rows: was it written by "
                             "`ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv`?")
    return [found[key] for key in sorted(found, key=int)]
