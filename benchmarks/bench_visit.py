"""First-visit benchmark (issue 22), in the real headless Chromium against `streamlit run`, on the recorded
library, for this checkout and each other `--checkout` given (a worktree of the code before a change: before and
after in one run): page load to the first chart on a freshly started server, a session switch, the presentation
toggle, a view switch in presentation mode, a story step and a page switch; its peer, started fresh in the same
run, is Streamlit alone drawing the lab's latency chart (a figure kept in a file) and swapping it for another
session's on a checkbox. Each round takes every contender in turn (the order reversed every other round), a fresh
server each for the first chart. The clicks are timed from the end of the server's first visit (the lab drawn
whole) on, while its warm-up compiles a first model in the worker and builds the library ahead; `--settled` times
them once it has ended. Until 2026-12-03 this was `bench_app.py --visit` (benchmarks/RESULTS.md).

    .venv/bin/python benchmarks/bench_visit.py [--checkout OTHER ...] [--settled] [--rounds 3]

Each figure is the median of `--rounds` (min–max); every value, in the order taken, goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app import (
    ARGS,
    CHROMIUM,
    ROOT,
    TIMEOUT_MS,
    idle,
    key_flip,
    open_page,
    report,
    serve,
    stop,
    timed,
    timeline_title,
)

import ui.web.selectors as ST  # on the path: bench_app puts the checkout there

VISIT_PEER_APP = """
import pathlib

import plotly.io as pio
import streamlit as st

HERE = pathlib.Path(__file__).parent
other = st.checkbox("Another session")
st.plotly_chart(pio.from_json((HERE / ("other.json" if other else "first.json")).read_text()), key="peer")
"""

CHART_DRAWN = "[...document.querySelectorAll('.js-plotly-plot .main-svg')].some(s => s.checkVisibility())"
# The lab drawn whole (its rest after a first run's top, and the measuring widgets, which wait for the worker): the
# server's warm-up of the compiler and of the library ahead starts then (ui/warm.py).
DRAWN_WHOLE = (f"!!document.querySelector('{ST.keyed('run')} button')?.checkVisibility() && "
               f"document.querySelector('{ST.MAIN_BLOCK}').innerText.includes('Kernel timeline') && " + CHART_DRAWN)
STORY_STEPS = 4  # from the talk's first scene: a timeline, the animation, a verdict, what fused into what
FIRST_SESSION, OTHER_SESSION = "h100_pointwise_chain_4096x4096_float32.json.gz", "h100_mlp_512x256_float32.json.gz"


# A plot on screen that was not on screen at `OLD_PLOTS`, by its drawing (Plotly lays a figure out anew for each
# drawing): a step to the next scene, which may redraw the plot in place or show one drawn ahead, hidden, is
# timed to the new scene's chart on screen, not to its heading.
PLOTS = "[...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullLayout && p.checkVisibility())"
OLD_PLOTS = f"window.fvOld = new Set({PLOTS}.map(p => p._fullLayout))"
NEW_PLOT = f"{PLOTS}.some(p => !window.fvOld.has(p._fullLayout) && p.querySelector('.main-svg'))"


# The lab presenting: its view's selector shown and its chart drawn at the width it is shown at (a page that keeps
# the view on the page at the desk, hidden, draws it again at that width once shown).
PRESENTED = f"""(() => {{
  const view = document.querySelector('{ST.keyed('present_view')}');
  const plot = document.querySelector('{ST.keyed('fv_present_lab')} .js-plotly-plot');
  return !!view && view.checkVisibility() && !!plot && plot.checkVisibility() && !!plot._fullLayout
    && Math.abs(plot._fullLayout.width - plot.clientWidth) < 2;
}})()"""


def visit_peer(folder: Path) -> Path:
    """Streamlit alone: the lab's latency chart of the first session and of another, as files it swaps."""
    from fusionviz.analysis.report import analyse
    from fusionviz.charts.latency import latency_figure
    from fusionviz.charts.style import ChartSettings
    from fusionviz.records.session import Session

    for name, session in (("first.json", FIRST_SESSION), ("other.json", OTHER_SESSION)):
        report = analyse(Session.load(ROOT / "sessions" / session))
        (folder / name).write_text(latency_figure(report, ChartSettings()).to_json())
    (folder / "peer.py").write_text(VISIT_PEER_APP)
    return folder / "peer.py"


def first_chart(page: Page, url: str) -> float:
    """Seconds from asking for the page (the server just started and answering) to its first chart drawn."""
    open_page(page, f"{url}/_stcore/health")  # the server is up; nothing has run a script yet
    started = time.perf_counter()
    page.goto(url, timeout=TIMEOUT_MS)
    page.wait_for_function(CHART_DRAWN, timeout=TIMEOUT_MS, polling=16)
    return time.perf_counter() - started


def verdict_of(session: str) -> str:
    """The lab showing `session`: its name in the source line (the sidebar's box shows it as soon as it is
    chosen), and its charts drawn."""
    return f"document.querySelector('{ST.MAIN_BLOCK}').innerText.includes({session!r}) && " + CHART_DRAWN


def visit_round(page: Page, url: str, name: str, times: dict[str, list[float]]) -> None:
    """A first visit's clicks on a server already warm: page load, a session switch and back, the
    presentation toggle, a view switch in presentation mode, a story step and a page switch."""
    record = times.setdefault
    started = time.perf_counter()
    page.goto(url, timeout=TIMEOUT_MS)
    page.wait_for_function(CHART_DRAWN, timeout=TIMEOUT_MS, polling=16)
    idle(page)
    record(f"{name}: page load to the lab drawn (server warm)", []).append(time.perf_counter() - started)
    sidebar = page.locator(ST.SIDEBAR)
    for session in (OTHER_SESSION, FIRST_SESSION):
        box = sidebar.locator(ST.SELECTBOX).filter(has_text="Session")
        box.click()  # the list opens in the browser alone: timed from the choice
        page.keyboard.type(session)  # the list draws only the options in view: typed, the one asked is among them
        option = page.get_by_role("option", name=session)
        record(f"{name}: session switch", []).append(timed(page, option.click, verdict_of(session)))
    flip = key_flip(page, "Presentation")
    record(f"{name}: presentation toggle on", []).append(timed(page, flip, PRESENTED))
    views = page.locator(ST.keyed("present_view"))
    record(f"{name}: view switch (presentation: to the timeline)", []).append(timed(
        page, lambda: views.get_by_text("Timeline", exact=True).click(), timeline_title("Kernel timeline")))
    record(f"{name}: view switch (presentation: back to the verdict)", []).append(timed(
        page, lambda: views.get_by_text("Verdict", exact=True).click(), "!(" + timeline_title("Kernel timeline")
        + ") && " + CHART_DRAWN))
    record(f"{name}: presentation toggle off", []).append(timed(
        page, flip, f"!document.querySelector('{ST.keyed('present_view')}')?.checkVisibility() && " + CHART_DRAWN))
    nav = page.locator(ST.SIDEBAR_NAV)
    record(f"{name}: page switch to the Story", []).append(timed(
        page, lambda: nav.get_by_text("Story").click(), f"!!document.querySelector('{ST.keyed('story_next')}') && "
        + CHART_DRAWN))
    at = page.locator(f"{ST.keyed('story_next')} button")
    for _ in range(STORY_STEPS):
        before = page.evaluate("document.body.innerText.length")
        page.evaluate(OLD_PLOTS)
        record(f"{name}: story step", []).append(timed(
            page, at.click, f"document.body.innerText.length !== {before} && " + NEW_PLOT))


def settle_down(process: subprocess.Popen[bytes], quiet: float = 0.05, window_s: float = 2.0,
                limit_s: float = 300.0) -> float:
    """Wait until a server and its children (the measuring worker) have used under `quiet` of a core for
    `window_s`: its warm-up has ended. Returns the seconds waited."""
    started = time.perf_counter()
    root = psutil.Process(process.pid)

    def used() -> float:
        total = 0.0
        for p in [root, *root.children(recursive=True)]:
            try:
                times = p.cpu_times()
                total += times.user + times.system
            except psutil.Error:  # ended meanwhile
                pass
        return total

    while time.perf_counter() - started < limit_s:
        before = used()
        time.sleep(window_s)
        if used() - before < quiet * window_s:
            break
    return time.perf_counter() - started


def visit(args: argparse.Namespace) -> int:
    """The first-visit benchmark (`--visit`). Every round alternates between the peer and the checkouts, so a
    change in the machine's load falls on all of them: first each on a freshly started server, for its first
    chart; then a visitor of its own on each one's server, started once and kept for every round."""
    folder = Path(tempfile.mkdtemp(prefix="fusionviz-visit-"))
    env = {k: v for k, v in os.environ.items() if k != "FUSIONVIZ_SESSIONS_DIR"}
    peer_script = visit_peer(folder)
    checkouts = [("this checkout", ROOT)] + [(Path(c).name, Path(c).resolve()) for c in args.checkout]
    contenders = [("peer: Streamlit alone", None)] + checkouts
    times: dict[str, list[float]] = {}

    def start(root: Path | None) -> tuple[subprocess.Popen[bytes], str]:
        return serve(peer_script, env) if root is None else serve(root / "app.py", env, cwd=root)

    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)

            def fresh_page() -> Page:
                return browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()

            for r in range(args.rounds):
                for name, root in contenders if r % 2 == 0 else contenders[::-1]:
                    server, url = start(root)
                    try:
                        page = fresh_page()
                        times.setdefault(f"{name}: first chart on a fresh server", []).append(first_chart(page, url))
                        idle(page)
                        page.context.close()
                    finally:
                        stop(server)
            servers = {name: start(root) for name, root in contenders}
            peer = fresh_page()
            open_page(peer, servers[contenders[0][0]][1])
            timed(peer, lambda: None, CHART_DRAWN)
            box = peer.get_by_text("Another session").first
            for name, _ in checkouts:  # each server's first visit, untimed: the rounds time a warm server
                page = fresh_page()
                open_page(page, servers[name][1])
                page.wait_for_function(DRAWN_WHOLE, timeout=TIMEOUT_MS, polling=16)
                idle(page)
                page.context.close()
            if args.settled:
                for name, _ in checkouts:
                    print(f"{name}: warm-up ended {settle_down(servers[name][0]):.0f} s after its first visit",
                          file=sys.stderr, flush=True)
            for r in range(args.rounds):
                for _ in range(2):
                    times.setdefault("peer: Streamlit alone, swapping the chart", []).append(
                        timed(peer, box.click, CHART_DRAWN))
                for name, _ in checkouts if r % 2 == 0 else checkouts[::-1]:
                    visitor = fresh_page()  # a visitor of its own each round (the story collapses the sidebar)
                    visit_round(visitor, servers[name][1], name, times)
                    visitor.context.close()
                print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()[0]:.1f}", file=sys.stderr,
                      flush=True)
            version = browser.version
            browser.close()
    finally:
        for server, _ in servers.values():
            stop(server)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nChromium {version} at 1920 × 1080, streamlit run app.py; seconds, median of {args.rounds} "
          "(min–max):\n")
    report(times)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[],
                        help="another checkout to time in the same run (the code before a change)")
    parser.add_argument("--settled", action="store_true",
                        help="time the clicks once each server's warm-up has ended, not during it")
    return visit(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
