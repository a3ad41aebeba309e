"""Fold Nsight Compute's DRAM byte counts into a session, beside the estimate, for `inspect --json` and the views:

    python3 scripts/fold_counters.py SESSION --ncu FOLDER [--out OUT]

For each mode of SESSION, FOLDER's `ncu_<model>_<dim>x<batch>_<dtype>_<mode>.csv` (written by
`ncu ... scripts/dram_bytes.py`, see scripts/gpu_accounting.sh) goes into the run's `dram_counters`, one
iteration's kernels in launch order; the session is written to OUT (SESSION itself where OUT is not given).
Modes without a CSV are named: they keep the estimate only."""

from __future__ import annotations

import argparse
from pathlib import Path

from fusionviz.analysis.dram_counts import counted_costs
from fusionviz.records.dram import read_ncu_csv
from fusionviz.records.files import open_path


def fold(session_path: Path, ncu: Path, out: Path) -> list[str]:
    """Fold the counts in and write the session to `out`; one line per mode saying what was folded."""
    session = open_path(session_path)
    c = session.config
    if session.environment.device_kind != "cuda":
        return [f"{session_path.name}: recorded on {session.environment.device_kind}: no hardware counters"]
    lines = []
    for run in session.runs:
        csv = ncu / f"ncu_{c.model}_{c.dim}x{c.batch}_{c.dtype}_{run.mode}.csv"
        if not csv.exists():
            lines.append(f"  {run.mode}: no {csv.name}: estimate only")
            continue
        run.dram_counters = read_ncu_csv(csv.read_text(errors="replace"), csv.name)
        counted = counted_costs(run)
        lines.append(f"  {run.mode}: {len(run.dram_counters)} kernels, {counted.per_iteration} DRAM bytes per "
                     f"iteration{': ' + counted.note if counted.note else ''}")
    session.save(out)
    return [f"{session_path.name} -> {out}", *lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", type=Path)
    parser.add_argument("--ncu", type=Path, required=True, help="folder of ncu CSV files (scripts/dram_bytes.py)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    print("\n".join(fold(args.session, args.ncu, args.out or args.session)))


if __name__ == "__main__":
    main()
