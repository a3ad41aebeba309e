"""Parsing benchmark: fusionviz's reader against HolisticTraceAnalysis on a small, a medium and a large trace,
each contender a fresh process, alternating, several rounds in one run; wall time and peak RSS of every process
(os.wait4's rusage).

    python3 -m venv benchmarks/.venv && benchmarks/.venv/bin/pip install holistictraceanalysis==0.5.0
    .venv/bin/python benchmarks/bench_parse.py [TRACE ...] [--rounds 5] [--checkout OTHER ...]

Without TRACE, the three sizes: small, a recorded H200 trace of tests/data (three iterations of Linear →
LayerNorm → GELU); medium, the first three of the big trace's five steps (`first_steps.py`, made into a
temporary folder); large, benchmarks/data/transformer_train.trace.json.gz. `--checkout` adds `inspect --json`
of another checkout of fusionviz (a worktree of the code before a change), so that before and after are
measured in one run. Compare the ratios, measured in one run: on a shared machine absolute times drift between
runs, and within a run, so each ratio to HTA is the median of the rounds' own ratios.

Every contender runs once untimed first, and all of them with their bytecode cached in a temporary folder
(PYTHONPYCACHEPREFIX), as an installed package or a second run has it: PYTHONDONTWRITEBYTECODE in the
environment would otherwise have fusionviz, run from its source, compile every module on every run while HTA
reads the bytecode pip wrote.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
HTA_PYTHON = ROOT / "benchmarks" / ".venv" / "bin" / "python"
SMALL = ROOT / "tests" / "data" / "h200_linear_ln_gelu_fp32_eager.trace.json.gz"
LARGE = ROOT / "benchmarks" / "data" / "transformer_train.trace.json.gz"
MEDIUM_STEPS = 3
COUNT = ("import gzip, json, sys; raw = open(sys.argv[1], 'rb').read(); raw = gzip.decompress(raw) "
         "if raw[:2] == b'\\x1f\\x8b' else raw; d = json.loads(raw); "
         "print(len(d['traceEvents'] if isinstance(d, dict) else d))")
ROWS, FRAME, INSPECT, HTA = "kernel rows", "DataFrame", "inspect --json", "HTA"
LABELS = {
    ROWS: "fusionviz: kernel table (rows; inspect's and the worker's path)",
    FRAME: "fusionviz: kernel table as a pandas DataFrame (the app's)",
    INSPECT: "fusionviz inspect --json (whole CLI: report, top kernels, idle breakdown)",
    HTA: "HolisticTraceAnalysis: TraceAnalysis, kernel rows",
}
Contender = tuple[list[str], Path]  # the command line and the checkout it runs in


class Sample(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds of CPU, user and system: what the load of other work moves least
    peak: float  # MB of the process's own peak RSS


def measure(cmd: list[str], checkout: Path, env: dict[str, str]) -> tuple[Sample, str]:
    """One run's sample (wait4 on the child) and its stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=checkout, env={**env, "PYTHONPATH": str(checkout)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024), out.decode().strip()


def contenders(trace: Path, checkouts: dict[str, Path]) -> dict[str, Contender]:
    """Each contender's command line on `trace`, and where it runs."""
    py = sys.executable
    inspect = [py, "-m", "fusionviz", "inspect", "--json", str(trace.resolve())]
    return {ROWS: ([py, "benchmarks/parse_ours.py", str(trace), "rows"], ROOT),
            FRAME: ([py, "benchmarks/parse_ours.py", str(trace), "frame"], ROOT),
            INSPECT: (inspect, ROOT),
            **{f"{INSPECT} at {name}": (inspect, path) for name, path in checkouts.items()},
            HTA: ([str(HTA_PYTHON), "benchmarks/parse_hta.py", str(trace)], ROOT)}


def child_output(cmd: list[str]) -> str:
    # In a child process: a child's peak RSS starts from its parent's at the fork, so this process must stay
    # small for the contenders' figures to be their own.
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkout", action="append", default=[], type=Path,
                        help="another checkout of fusionviz whose inspect --json runs beside this one's")
    args = parser.parse_args()
    if not HTA_PYTHON.exists():
        raise SystemExit(f"HTA's venv is missing: {__doc__}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.traces:
            traces = {t.name: t for t in args.traces}
        else:
            medium = Path(tmp) / f"transformer_train_{MEDIUM_STEPS}_steps.trace.json.gz"
            child_output([sys.executable, "benchmarks/first_steps.py", str(medium), "--steps", str(MEDIUM_STEPS)])
            traces = {"small": SMALL, "medium": medium, "large": LARGE}
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
        checkouts = {c.resolve().name: c.resolve() for c in args.checkout}
        return bench({size: contenders(trace, checkouts) for size, trace in traces.items()}, traces, env,
                     args.rounds)


def bench(runs: dict[str, dict[str, Contender]], traces: dict[str, Path], env: dict[str, str], rounds: int) -> int:
    """Every contender on every trace, `rounds` alternating rounds after one untimed; prints a table per trace,
    then the sizes side by side."""
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {load()} at the start")
    hta_version = child_output([str(HTA_PYTHON), "-c", "import importlib.metadata as m; "
                                "print(m.version('holistictraceanalysis'), m.version('pandas'))"]).split()
    print(f"HolisticTraceAnalysis {hta_version[0]} (pandas {hta_version[1]})")
    events = {size: int(child_output([sys.executable, "-c", COUNT, str(t)])) for size, t in traces.items()}
    for size, trace in traces.items():
        print(f"{size}: {trace.name}, {trace.stat().st_size / 1e6:.2f} MB on disk, {events[size]:,} events")
    for each in runs.values():  # untimed: the bytecode written, the files in the page cache
        for cmd, checkout in each.values():
            measure(cmd, checkout, env)
    results: dict[tuple[str, str], list[Sample]] = {}
    found: dict[tuple[str, str], str] = {}
    for r in range(rounds):  # alternating, so drift of the machine hits every contender alike
        for size, each in runs.items():
            for name, (cmd, checkout) in each.items():
                sample, out = measure(cmd, checkout, env)
                results.setdefault((size, name), []).append(sample)
                found[size, name] = out.splitlines()[0][:40] if out else ""
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"load average {load()} at the end")

    def median(size: str, name: str) -> Sample:
        return Sample(*(statistics.median(column) for column in zip(*results[size, name], strict=True)))

    def faster(size: str, name: str, on: str = "wall") -> float:
        """HTA's time over this contender's, round by round (the two ran seconds apart), the median of them."""
        return statistics.median(getattr(h, on) / getattr(w, on)
                                 for h, w in zip(results[size, HTA], results[size, name], strict=True))

    print(f"\nmedian of {rounds} alternating rounds, each a fresh process; HTA / this: the median of each round's "
          "ratio")
    for size, each in runs.items():
        hta_peak = median(size, HTA).peak
        print(f"\n{size} ({events[size]:,} events): kernels found: fusionviz {found[size, ROWS]}, "
              f"HTA {found[size, HTA]}\n")
        print("| contender | wall s (median, min–max) | CPU s | peak RSS MB | HTA / this, wall | HTA / this, CPU "
              "| this peak / HTA peak |")
        print("|---|---|---|---|---|---|---|")
        for name in each:
            walls = [s.wall for s in results[size, name]]
            m = median(size, name)
            print(f"| {LABELS.get(name, f'fusionviz {name}')} | {m.wall:.2f} ({min(walls):.2f}–{max(walls):.2f}) "
                  f"| {m.cpu:.2f} | {m.peak:.0f} | {faster(size, name):.1f}x | {faster(size, name, 'cpu'):.1f}x "
                  f"| {m.peak / hta_peak:.2f} |")
    print("\nthe sizes side by side (`inspect --json` against HTA; s and MB are medians):\n")
    others = [n for n in next(iter(runs.values())) if n.startswith(f"{INSPECT} at ")]
    print("| size | events | inspect wall s | CPU s | MB | HTA wall s | CPU s | MB | HTA / inspect, wall | CPU "
          "| inspect peak / HTA's | HTA / kernel rows, wall |" + "".join(f" HTA / {n}: wall, CPU |" for n in others))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(others))
    for size in runs:
        ours, hta = median(size, INSPECT), median(size, HTA)
        print(f"| {size} | {events[size]:,} | {ours.wall:.2f} | {ours.cpu:.2f} | {ours.peak:.0f} | {hta.wall:.2f} "
              f"| {hta.cpu:.2f} | {hta.peak:.0f} | **{faster(size, INSPECT):.1f}x** "
              f"| {faster(size, INSPECT, 'cpu'):.1f}x "
              f"| {ours.peak / hta.peak:.2f} | {faster(size, ROWS):.1f}x |"
              + "".join(f" {faster(size, n):.1f}x, {faster(size, n, 'cpu'):.1f}x ({median(size, n).wall:.2f} s) |"
                        for n in others))
    return 0


if __name__ == "__main__":
    sys.exit(main())
