"""Parsing benchmark: fusionviz's reader against HolisticTraceAnalysis on one trace, each a fresh process,
alternating, several rounds in one run; wall time and peak RSS of every process (os.wait4's rusage).

    python3 -m venv benchmarks/.venv && benchmarks/.venv/bin/pip install holistictraceanalysis==0.5.0
    .venv/bin/python benchmarks/bench_parse.py [TRACE] [--rounds 5]

TRACE defaults to benchmarks/data/transformer_train.trace.json.gz. Compare the ratios, measured in one run:
on a shared machine absolute times drift between runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTA_PYTHON = ROOT / "benchmarks" / ".venv" / "bin" / "python"
DEFAULT_TRACE = ROOT / "benchmarks" / "data" / "transformer_train.trace.json.gz"
COUNT = ("import gzip, json, sys; raw = open(sys.argv[1], 'rb').read(); raw = gzip.decompress(raw) "
         "if raw[:2] == b'\\x1f\\x8b' else raw; d = json.loads(raw); "
         "print(len(d['traceEvents'] if isinstance(d, dict) else d))")


def measure(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, the child's own peak RSS in MB (wait4 on the child) and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, out.decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not HTA_PYTHON.exists():
        raise SystemExit(f"HTA's venv is missing: {__doc__}")
    trace = Path(args.trace)
    # Counted in a child process: a child's peak RSS starts from its parent's at the fork, so this process
    # must stay small for the children's figures to be their own.
    n_events = int(subprocess.run([sys.executable, "-c", COUNT, str(trace)], capture_output=True, text=True,
                                  check=True).stdout)
    print(f"trace: {trace.name}, {trace.stat().st_size / 1e6:.1f} MB on disk, {n_events:,} events")
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    hta_version = subprocess.run([str(HTA_PYTHON), "-c", "import importlib.metadata as m; "
                                  "print(m.version('holistictraceanalysis'), m.version('pandas'))"],
                                 capture_output=True, text=True, check=True).stdout.split()
    print(f"HolisticTraceAnalysis {hta_version[0]} (pandas {hta_version[1]})")
    py = sys.executable
    contenders = {
        "fusionviz: kernel table (rows; inspect's and the worker's path)":
            [py, "benchmarks/parse_ours.py", str(trace), "rows"],
        "fusionviz: kernel table as a pandas DataFrame (the app's)":
            [py, "benchmarks/parse_ours.py", str(trace), "frame"],
        "fusionviz inspect --json (whole CLI: report, top kernels, idle breakdown)":
            [py, "-m", "fusionviz", "inspect", "--json", str(trace)],
        "HolisticTraceAnalysis: TraceAnalysis, kernel rows": [str(HTA_PYTHON), "benchmarks/parse_hta.py", str(trace)],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    found: dict[str, str] = {}
    for r in range(args.rounds):  # alternating, so drift of the machine hits every contender alike
        for name, cmd in contenders.items():
            wall, peak, out = measure(cmd)
            results[name].append((wall, peak))
            found[name] = out.splitlines()[0][:40] if out else ""
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    hta = next(n for n in contenders if n.startswith("HolisticTraceAnalysis"))
    hta_wall = statistics.median(w for w, _ in results[hta])
    hta_peak = statistics.median(p for _, p in results[hta])
    print(f"\nmedian of {args.rounds} alternating rounds, each a fresh process:\n")
    print("| contender | wall s (median, min–max) | peak RSS MB (median) | HTA wall / this | this peak / HTA peak |")
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        walls = [w for w, _ in rows]
        wall, peak = statistics.median(walls), statistics.median(p for _, p in rows)
        print(f"| {name} | {wall:.2f} ({min(walls):.2f}–{max(walls):.2f}) | {peak:.0f} | {hta_wall / wall:.1f}x "
              f"| {peak / hta_peak:.2f} |")
    ours = next(iter(contenders))
    print(f"\nkernels found: fusionviz {found[ours]}, HTA {found[hta]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
