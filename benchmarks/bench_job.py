"""Job benchmark: a folder of 8 rank traces of about 200,000 events each (benchmarks/make_job.py makes it from the
recorded big trace), opened by fusionviz and by HolisticTraceAnalysis's `TraceAnalysis`, each a fresh process,
alternating, several rounds in one run. Both read the ranks in a pool of processes over every core, so memory is
taken over the whole process tree: the peak of the tree's summed PSS (proportional set size: pages a forked child
shares with its parent counted once between them), sampled every 20 ms from /proc, beside the largest single
process's peak RSS (os.wait4).

    python3 -m venv benchmarks/.venv && benchmarks/.venv/bin/pip install holistictraceanalysis==0.5.0
    .venv/bin/python benchmarks/bench_job.py [--rounds 3]

Compare the ratios, measured in one run: on a shared machine absolute times drift between runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from make_job import DEFAULT_OUT, make_job

ROOT = Path(__file__).resolve().parents[1]
HTA_PYTHON = ROOT / "benchmarks" / ".venv" / "bin" / "python"
SAMPLE_S = 0.02


def tree_pss_mb(root: int) -> float:
    """The summed PSS of `root` and its descendants now, in MB (processes that end meanwhile are skipped)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def measure(cmd: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, the tree's peak summed PSS in MB, the largest process's peak RSS in MB, and stdout."""
    with tempfile.TemporaryFile() as errors:
        return _measured(cmd, errors)


def _measured(cmd: list[str], errors: Any) -> tuple[float, float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errors)
    assert proc.stdout is not None
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_mb(proc.pid))
            time.sleep(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    done.set()  # stdout closes as the process ends: its tree is sampled until then
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        errors.seek(0)
        raise SystemExit(f"{' '.join(cmd)} failed:\n{errors.read().decode()[-2000:]}")
    return wall, peak[0], usage.ru_maxrss / 1024, out.decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--job", type=Path, default=DEFAULT_OUT, help="the job's folder (made when missing)")
    args = parser.parse_args()
    if not HTA_PYTHON.exists():
        raise SystemExit(f"HTA's venv is missing: {__doc__}")
    if not args.job.is_dir():
        make_job(args.job)
    files = sorted(args.job.glob("*.json.gz"))
    count = [sys.executable, "-c", "import gzip, json, sys; print(sum(len(json.loads(gzip.open(p).read())"
             "['traceEvents']) for p in sys.argv[1:]))", *map(str, files)]
    events = int(subprocess.run(count, capture_output=True, text=True, check=True).stdout)
    print(f"job: {args.job.name}, {len(files)} ranks, {events:,} events ({events // len(files):,} a rank), "
          f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB on disk")
    print(f"machine: {platform.node()}, {len(os.sched_getaffinity(0))} CPUs, Python {platform.python_version()}")
    hta_version = subprocess.run([str(HTA_PYTHON), "-c", "import importlib.metadata as m; "
                                  "print(m.version('holistictraceanalysis'), m.version('pandas'))"],
                                 capture_output=True, text=True, check=True).stdout.split()
    print(f"HolisticTraceAnalysis {hta_version[0]} (pandas {hta_version[1]})")
    contenders = {
        "fusionviz: read_job + job_report": [sys.executable, "benchmarks/job_ours.py", str(args.job)],
        "fusionviz inspect DIR --json (whole CLI: every rank's report and the job)":
            [sys.executable, "-m", "fusionviz", "inspect", "--json", str(args.job)],
        "HolisticTraceAnalysis: TraceAnalysis(trace_dir) + comm/comp overlap":
            [str(HTA_PYTHON), "benchmarks/job_hta.py", str(args.job)],
    }
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in contenders}
    found: dict[str, str] = {}
    for r in range(args.rounds):  # alternating, so drift of the machine hits every contender alike
        for name, cmd in contenders.items():
            wall, tree, largest, out = measure(cmd)
            results[name].append((wall, tree, largest))
            found[name] = out.splitlines()[0][:60] if out else ""
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    hta = next(n for n in contenders if n.startswith("HolisticTraceAnalysis"))
    hta_wall = statistics.median(w for w, _, _ in results[hta])
    hta_tree = statistics.median(t for _, t, _ in results[hta])
    print(f"\nmedian of {args.rounds} alternating rounds, each a fresh process:\n")
    print("| contender | wall s (median, min–max) | tree peak PSS MB | largest process RSS MB | HTA wall / this "
          "| this tree / HTA tree |")
    print("|---|---|---|---|---|---|")
    for name, rows in results.items():
        walls = [w for w, _, _ in rows]
        wall, tree = statistics.median(walls), statistics.median(t for _, t, _ in rows)
        largest = statistics.median(x for _, _, x in rows)
        print(f"| {name} | {wall:.2f} ({min(walls):.2f}–{max(walls):.2f}) | {tree:.0f} | {largest:.0f} "
              f"| {hta_wall / wall:.1f}x | {tree / hta_tree:.2f} |")
    for name, out in found.items():
        print(f"{name}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
