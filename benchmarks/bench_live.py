"""Live-run benchmark (issue 22): the lab's default configuration, mlp 256 × 64 eager + default on the CPU, from
Run to result, against a plain torch script doing the least a user would to compare the two (the peer).

    .venv/bin/python benchmarks/bench_live.py [--checkout OTHER ...] [--rounds 3]

`--checkout` adds another checkout's CLI and app to every round (a worktree of the code before a change: before
and after in one run).

Every round takes each contender in turn:
- peer: `python -c` importing torch, compiling the same model and timing eager and default with
  `torch.utils.benchmark` (`blocked_autorange`), in one process; with a fresh temporary folder (nothing compiled
  on the machine before: no Inductor cache, no precompiled header, as the app's first case), with a fresh
  Inductor cache (`TORCHINDUCTOR_CACHE_DIR`; the header, which Inductor keeps outside it, is found), and with a
  warm cache;
- the CLI: `python -m fusionviz run` (a fresh worker, three timing processes), with `--cold-compile` (a fresh
  Inductor cache) and without (the cache warm from the round's earlier runs);
- the app: a freshly started server on an empty library (the widgets keep the lab's defaults, which are this
  configuration), in Chromium: from the Run button pressed to the result drawn ("This run was measured in"); once
  with a fresh temporary folder and user cache folder for the server (nothing compiled on this machine before:
  Inductor's cache and its precompiled header, nor the device's ceilings calibrated), then on a server started
  again on those folders (compiled before; a result is kept only in its server's store, so this is a run, not an
  answer from the cache).

Seconds, median (min–max) of the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app import ARGS, CHROMIUM, ROOT, open_page, serve, stop

import ui.web.selectors as ST  # on the path: bench_app puts the checkout there

RUN_TIMEOUT_MS = 300_000
PEER = """
import time
started = time.perf_counter()
import torch
from torch.utils.benchmark import Timer
torch.set_num_threads(1)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                          torch.nn.Linear(256, 256))  # the zoo's mlp at dim 256
x = torch.randn(64, 256)
compiled = torch.compile(net)
with torch.no_grad():
    compiled(x)
    for f in (net, compiled):
        Timer("f(x)", globals={"f": f, "x": x}).blocked_autorange(min_run_time=0.3)
print(f"{time.perf_counter() - started:.2f}")
"""


def peer(**env: str) -> float:
    """The plain script's wall time, with `env` (its Inductor cache, its temporary folder) set."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", PEER], check=True, capture_output=True, env={**os.environ, **env})
    return time.perf_counter() - started


def cli(root: Path, cold: bool) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fusionviz", "run", "--model", "mlp", "--dim", "256", "--batch", "64",
                    "--modes", "eager,default", "--device", "cpu", "--out", os.devnull,
                    *(["--cold-compile"] if cold else [])], check=True, capture_output=True, cwd=root,
                   env={**os.environ, "PYTHONPATH": str(root)})
    return time.perf_counter() - started


def app_run(page: Page, url: str) -> float:
    """From Run pressed on the lab's defaults to the result drawn."""
    open_page(page, url)
    run = page.locator(ST.SIDEBAR).get_by_role("button", name="Run", exact=True)
    run.wait_for(timeout=RUN_TIMEOUT_MS)
    started = time.perf_counter()
    run.click()
    page.get_by_text("This run was measured in").wait_for(timeout=RUN_TIMEOUT_MS)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[], help="another checkout, timed in the same run")
    args = parser.parse_args()
    checkouts = [("this checkout", ROOT)] + [(Path(c).name, Path(c).resolve()) for c in args.checkout]
    times: dict[str, list[float]] = {}
    warm_cache = tempfile.mkdtemp(prefix="fusionviz-bench-live-cache-")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for r in range(args.rounds):
            record = times.setdefault
            record("peer: plain torch script, nothing compiled on the machine before", []).append(
                peer(TMPDIR=tempfile.mkdtemp(prefix="fusionviz-bench-live-tmp-")))
            record("peer: plain torch script, fresh Inductor cache", []).append(
                peer(TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(prefix="fusionviz-bench-live-cold-")))
            if r == 0:
                peer(TORCHINDUCTOR_CACHE_DIR=warm_cache)  # fills it
            record("peer: plain torch script, warm cache", []).append(peer(TORCHINDUCTOR_CACHE_DIR=warm_cache))
            for name, root in checkouts if r % 2 == 0 else checkouts[::-1]:
                record(f"{name}: CLI: fusionviz run --cold-compile", []).append(cli(root, cold=True))
                record(f"{name}: CLI: fusionviz run, cache warm", []).append(cli(root, cold=False))
                library = tempfile.mkdtemp(prefix="fusionviz-bench-live-library-")
                env = {**os.environ, "FUSIONVIZ_SESSIONS_DIR": library,
                       "TMPDIR": tempfile.mkdtemp(prefix="fusionviz-bench-live-tmp-"),
                       "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="fusionviz-bench-live-user-cache-")}
                for label in ("app: Run to result, nothing compiled on the machine before",
                              "app: Run to result, compiled before (a server started again)"):
                    server, url = serve(root / "app.py", env, cwd=root)  # the same folders: the second finds the
                    try:                                                 # caches
                        page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
                        record(f"{name}: {label}", []).append(app_run(page, url))
                        page.context.close()
                    finally:
                        stop(server)
            print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()[0]:.1f}", file=sys.stderr,
                  flush=True)
        browser.close()
    width = max(map(len, times))
    for label, values in times.items():
        print(f"{label:<{width}}  {statistics.median(values):6.2f} s ({min(values):.2f}–{max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
