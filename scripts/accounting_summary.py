"""The accounting of recorded sessions in one table per session, for the closing note of the accounting issue:

    python3 scripts/accounting_summary.py sessions/*.json.gz [--ncu FOLDER]

Per session: the device's measured ceilings, each mode's latency, GPU time, kernels and bytes per iteration
(estimated; with --ncu, also the DRAM bytes Nsight Compute counted in `ncu_<model>_<dim>x<batch>_<dtype>_<mode>.csv`
of FOLDER, from scripts/dram_bytes.py), every ladder step with its interval and mechanism, and the kernel closest
to its ceiling."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fusionviz.analysis.report import analyse
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.dram import read_ncu_csv
from fusionviz.records.files import open_path


def ncu_bytes(path: Path) -> tuple[int, int, int] | None:
    """(bytes read, bytes written, kernels) summed over an ncu --csv file's kernels; None where there is none."""
    if not path.exists():
        return None
    counts = read_ncu_csv(path.read_text(errors="replace"), path.name)
    return sum(c.read for c in counts), sum(c.written for c in counts), len(counts)


def summary(path: Path, ncu: Path | None) -> list[str]:
    session = open_path(path)
    report = inspect_report(analyse(session), path.name, top=None)
    c = session.config
    lines = [f"== {path.name}: {c.model} {c.dim}x{c.batch} {c.dtype}"]
    ceilings = report["ceilings"]
    if ceilings:
        rates = ", ".join(f"{d} {t:.1f}" for d, t in ceilings["matmul_tflops"].items())
        lines.append(f"ceilings: copy {ceilings['copy_gbps']:.0f} GB/s; matmul TFLOP/s {rates}")
    best: tuple[float, str, str] | None = None
    for run in report["runs"]:
        if run["iterations"] == 0:
            continue  # a mode that did not run: its line below says why
        latency = run["latency_ms"]
        timed = f"{latency['median'] * 1e3:8.1f} µs ({latency['low'] * 1e3:.1f}-{latency['high'] * 1e3:.1f})" \
            if latency else "not timed"
        moved = run["bytes_per_iteration"]
        line = (f"  {run['label']:28} {timed:28} GPU {run['gpu_time_us']:8.1f} µs  kernels "
                f"{run['kernels_per_iteration']:5.1f}  bytes/iter {moved if moved is not None else '-':>12} "
                f"(of {run['bytes_known_pct']:.0f}% of kernel time)")
        measured = ncu_bytes(ncu / f"ncu_{c.model}_{c.dim}x{c.batch}_{c.dtype}_{run['label']}.csv") if ncu else None
        if measured:
            line += f"  DRAM (ncu) {measured[0] + measured[1]:>12} ({measured[0]} read, {measured[1]} written)"
        lines.append(line)
        for kernel in run["kernels"]:
            got: Any = kernel["achieved"]
            if got and got["pct_of_ceiling"] is not None and (best is None or got["pct_of_ceiling"] > best[0]):
                best = (got["pct_of_ceiling"], kernel["name"][:70], run["label"])
    for run in session.runs:
        if not run.ok:
            lines.append(f"  {run.mode}: {run.status}: {run.error}")
    for step in report["ladder"]:
        if step["delta_us"] is None:
            lines.append(f"  step {step['step']}: not applicable ({step['not_applicable']})")
        else:
            d = step["delta_us"]
            widened = " (widened to the spread between processes)" if step["widened"] else ""
            lines.append(f"  step {step['step']}: {d['median']:+.1f} µs ({d['low']:+.1f} to {d['high']:+.1f})"
                         f"{widened}: {step['mechanism']}")
    if best:
        lines.append(f"  closest to its ceiling: {best[1]} ({best[2]}) at {best[0]:.0f}%")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    parser.add_argument("--ncu", type=Path, default=None, help="folder of ncu CSV files (scripts/dram_bytes.py)")
    args = parser.parse_args()
    for path in sorted(args.sessions):
        print("\n".join(summary(path, args.ncu)))


if __name__ == "__main__":
    main()
