"""App benchmark: the Trace explorer on the big trace in the real headless Chromium, against `streamlit run`:
first open, view switches (all iterations, another step, a search), a kernel click, a box drawn on the
timeline, the presentation toggle, and page switches; each the time from the click or key to the answer on
screen (the first frame with the awaited text or chart there and Streamlit's run finished).

The peers, in the same run: Streamlit alone (a two-widget app, `PEER_APP`) swapping the same two timeline
figures, built by fusionviz and kept in memory, on a checkbox; the same app turning the presentation style on
and off with the timeline at its two sizes; the same app swapping a line of text, the floor of any Streamlit
answer on this machine and browser; and Plotly alone, redrawing one plot from one of those figures to another
(`Plotly.react` on a blank page, no server). What fusionviz adds is the difference.

    .venv/bin/python benchmarks/bench_app.py [TRACE] [--rounds 3]

A first visit on the recorded library has a benchmark of its own, `bench_visit.py`; both use the helpers here.

The first open of a trace reads it (once per content: later opens find it in the cache); every other figure
is the median of `--rounds`.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ui.web.selectors as ST  # noqa: E402

DEFAULT_TRACE = ROOT / "benchmarks" / "data" / "transformer_train.trace.json.gz"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage"]
TIMEOUT_MS = 60_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def idle(page: Page) -> None:
    """Until Streamlit has no script run in flight (its running indicator is gone)."""
    page.wait_for_function(f"!document.querySelector({ST.RUNNING!r})", timeout=TIMEOUT_MS, polling=16)


# Checked in every frame once the action has been sent: the time of the first frame in which the answer is on
# screen with Streamlit's run finished (no element left over from the run before, which Streamlit marks stale, and
# no running indicator, which it shows only after 0.7 s). Polled from Python instead, the answer was seen late
# whenever a task of the page's (a plot drawn ahead in its idle time) began after the frame that showed it.
ARM = f"""(done) => {{
  const answered = new Function(`return (${{done}});`);
  window.fvAnswered = null;
  const frame = () => {{
    if (answered() && !document.querySelector('{ST.STALE}, {ST.RUNNING}')) {{
      window.fvAnswered = performance.now();
    }} else requestAnimationFrame(frame);
  }};
  requestAnimationFrame(frame);
}}"""


# The moment the action's input reached the page: its first press of a pointer or a key, by the event's own time
# stamp (when the browser took the input, however long the page then took to handle it). Timed from before the
# action instead, a session switch counted Playwright's wait for the list's option to stop moving, 0.1-0.3 s.
LISTEN = """() => {
  window.fvInput = null;
  const took = (event) => { if (window.fvInput === null) window.fvInput = event.timeStamp; };
  for (const type of ["pointerdown", "keydown"]) window.addEventListener(type, took, {capture: true, once: true});
}"""


def timed(page: Page, action: Callable[[], None], done: str) -> float:
    """Seconds from `action`'s input (its first pointer or key press; the call, for an action without one) to
    the first frame in which `done` (a JS condition) holds with Streamlit idle; a screenshot in the temporary
    folder when it never does."""
    try:
        page.evaluate(LISTEN)
        asked = page.evaluate("performance.now()")
        action()
        page.evaluate(ARM, done)
        page.wait_for_function("window.fvAnswered !== null", timeout=TIMEOUT_MS, polling=16)
        return page.evaluate(f"(window.fvAnswered - (window.fvInput ?? {asked})) / 1000")
    except Exception:
        shot = Path(tempfile.gettempdir()) / "bench_app_failure.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"waiting for {done} failed; the page is in {shot}", file=sys.stderr)
        raise


def text_shown(text: str) -> str:
    return f"document.body.innerText.includes({text!r})"


def timeline_title(text: str) -> str:
    """A chart on screen titled `text`: drawn, and not in a section the mode hides (the lab keeps its desk on
    the page, hidden, while it presents)."""
    return ("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.checkVisibility() && "
            f"t.textContent.startsWith({text!r}))")


# The kernel timeline's plot, scrolled into view: the start of the scripts below.
TIMELINE_PLOT = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.checkVisibility()
      && (p.querySelector('.gtitle')?.textContent || '').startsWith('Kernel timeline'));
  plot.scrollIntoView();
"""

CLICK_KERNEL = TIMELINE_PLOT + """  const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
  const box = plot.querySelector('.nsewdrag').getBoundingClientRect();
  const click = plot._fullData.find(t => t.name === 'click');  // the markers a click selects a kernel by
  if (click) {
    const kind = click.meta.fields.indexOf('kind');  // customdata by name (charts/customdata.py)
    const i = Math.max(0, click.customdata.findIndex(c => c[kind] === 'gemm'));
    return {x: box.left + xa.l2p(click.x[i]), y: box.top + ya.l2p(click.y[i])};
  }
  const bars = plot._fullData.find(t => t.name === 'gemm');  // a small timeline: SVG bars
  if (!bars || !bars.base) return null;  // too many kernels in the window to click one: zoom first
  return {x: box.left + xa.l2p(bars.base[0] + bars.x[0] / 2), y: box.top + ya.l2p(bars.y[0])};
}"""


# The Trace explorer drawn: both its charts (the timeline and the class chart under the statistics) and the
# statistics' heading; a view switch is timed from a page that is there, not one still drawing.
PAGE_DRAWN = (timeline_title("Kernel timeline") + " && " + timeline_title("Kernel time by") + " && "
              + text_shown("Per-kernel statistics"))


def title_size(px: int) -> str:
    """The timeline's title drawn at `px` (16 on screen, 30 in presentation mode)."""
    return ("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent.startsWith("
            f"'Kernel timeline') && parseFloat(t.style.fontSize) === {px})")


PLOT_BOX = TIMELINE_PLOT + """  const r = plot.querySelector('.nsewdrag').getBoundingClientRect();
  return {x: r.left, y: r.top, width: r.width, height: r.height};
}"""


def key_flip(page: Page, label: str) -> Callable[[], None]:
    """Flips the checkbox or toggle labelled `label` by keyboard: in presentation mode the page's header lies
    over it, and a click would land on the header."""
    box = page.locator(f"{ST.CHECKBOX}, {ST.TOGGLE}").filter(has_text=label).locator("input").first

    def flip() -> None:
        box.focus()
        page.keyboard.press("Space")
    return flip


def drag(page: Page, box: dict[str, float], start: float, end: float) -> None:
    """Draw a box on the plot from `start` to `end` (fractions of its width), top to bottom."""
    page.mouse.move(box["x"] + box["width"] * start, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * end, box["y"] + box["height"] - 5, steps=5)
    page.mouse.up()


PEER_APP = """
import pathlib

import plotly.io as pio
import streamlit as st

HERE = pathlib.Path(__file__).parent


@st.cache_resource
def figure(name):
    return pio.from_json((HERE / name).read_text())


view = st.query_params.get("view")
every = st.checkbox("Presentation" if view == "present" else "All profiled iterations")
if view == "text":
    st.write("state: on" if every else "state: off")
else:
    if view == "present" and every:  # the presentation toggle of this page alone: its style, the timeline's size
        st.html((HERE / "present.css").read_text())
    shown = ("present.json" if view == "present" else "all.json") if every else "one.json"
    st.plotly_chart(figure(shown), key="peer", on_select="rerun", selection_mode=("points", "box"),
                    config={"scrollZoom": True})
"""


def write_peer(folder: Path, trace: Path) -> Path:
    """The peer app and the figures it swaps: the big trace's timeline, one iteration and all of them, as the
    Trace explorer draws them (default settings), and one iteration at presentation size with the page's
    presentation style."""
    from fusionviz.charts.style import ChartSettings
    from fusionviz.charts.timeline import timeline_figure
    from fusionviz.charts.timeline_layout import timeline_bars
    from fusionviz.records.files import open_file
    from fusionviz.records.limits import read_file
    from ui.web.presentation import PRESENTATION_RULES

    session = open_file(read_file(trace), trace.name)
    for name, every, settings in (("one.json", False, ChartSettings()), ("all.json", True, ChartSettings()),
                                  ("present.json", False, ChartSettings.presentation())):
        bars = timeline_bars(session, all_iterations=every)
        title = "Kernel timeline: all profiled iterations" if every else None
        (folder / name).write_text(timeline_figure(session, bars, settings, title=title).to_json())
    (folder / "present.css").write_text(f"<style>{PRESENTATION_RULES}</style>")
    (folder / "peer.py").write_text(PEER_APP)
    return folder / "peer.py"


def serve(script: Path, env: dict[str, str], cwd: Path = ROOT) -> tuple[subprocess.Popen[bytes], str]:
    """`streamlit run script` on a free port, as a user starts it (the checkout's .streamlit/config.toml
    applies: run from the checkout)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true", "--server.port",
         str(port), "--browser.gatherUsageStats", "false"], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    return server, f"http://127.0.0.1:{port}"


def open_page(page: Page, url: str) -> None:
    """Go to `url`, waiting for its server to start."""
    for _ in range(120):
        try:
            page.goto(url, timeout=5_000)
            return
        except Exception:
            time.sleep(0.5)


def peer_round(page: Page, url: str, times: dict[str, list[float]], switches: int = 3) -> None:
    """One round of the peer: `switches` on/off pairs of the two figures, of the presentation style with the
    timeline at its size, then of the line of text."""
    open_page(page, url)
    timed(page, lambda: None, timeline_title("Kernel timeline"))
    box = page.get_by_text("All profiled iterations").first
    for _ in range(switches):
        times.setdefault("peer: Streamlit alone, the same figures: all iterations on", []).append(timed(
            page, box.click, timeline_title("Kernel timeline: all profiled iterations")))
        times.setdefault("peer: Streamlit alone, the same figures: all iterations off", []).append(timed(
            page, box.click, timeline_title("Kernel timeline: one steady iteration")))
    open_page(page, f"{url}/?view=present")
    timed(page, lambda: None, timeline_title("Kernel timeline"))
    flip = key_flip(page, "Presentation")
    for _ in range(switches):
        times.setdefault("peer: Streamlit alone, the same style and timeline: presentation on", []).append(timed(
            page, flip, title_size(30)))
        times.setdefault("peer: Streamlit alone, the same style and timeline: presentation off", []).append(timed(
            page, flip, title_size(16)))
    open_page(page, f"{url}/?view=text")
    timed(page, lambda: None, text_shown("state: off"))
    box = page.get_by_text("All profiled iterations").first
    for _ in range(switches):
        for state in ("on", "off"):
            times.setdefault("peer: Streamlit alone, a line of text (the floor)", []).append(timed(
                page, box.click, text_shown(f"state: {state}")))


PLOTLY_REDRAW = """async ([from, to]) => {
  const frame = () => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
  const plot = document.getElementById('plot');
  await Plotly.newPlot(plot, JSON.parse(window.figures[from]));
  await frame();
  const started = performance.now();
  const figure = JSON.parse(window.figures[to]);
  await Plotly.react(plot, figure.data, figure.layout);
  await frame();
  return (performance.now() - started) / 1000;
}"""


def plotly_round(page: Page, folder: Path, times: dict[str, list[float]], switches: int = 3) -> None:
    """Plotly alone: the plot redrawn from one figure to another on a blank page, parse and frame included."""
    from plotly.offline import get_plotlyjs

    page.set_content('<div id="plot" style="width: 1550px"></div>')
    page.add_script_tag(content=get_plotlyjs())
    page.evaluate("figures => { window.figures = figures; }",
                  {name: (folder / f"{name}.json").read_text() for name in ("one", "all", "present")})
    for _ in range(switches):
        times.setdefault("peer: Plotly alone, redrawing the same figures: all iterations on", []).append(
            page.evaluate(PLOTLY_REDRAW, ["one", "all"]))
        times.setdefault("peer: Plotly alone, redrawing the same figures: all iterations off", []).append(
            page.evaluate(PLOTLY_REDRAW, ["all", "one"]))
        times.setdefault("peer: Plotly alone, the timeline at presentation size: on", []).append(
            page.evaluate(PLOTLY_REDRAW, ["one", "present"]))
        times.setdefault("peer: Plotly alone, the timeline at presentation size: off", []).append(
            page.evaluate(PLOTLY_REDRAW, ["present", "one"]))


def report(times: dict[str, list[float]]) -> None:
    """The table of medians (min–max), and on stderr every value in the order taken: which round was slow."""
    print("| action | seconds |\n|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f}) |")
        print(f"{name}: {' '.join(f'{v:.2f}' for v in values)}", file=sys.stderr)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="fusionviz-bench-"))
    trace = folder / Path(args.trace).name
    shutil.copy(args.trace, trace)
    peer_folder = folder / "peer"
    peer_folder.mkdir()
    env = {**os.environ, "FUSIONVIZ_SESSIONS_DIR": str(folder)}
    server, url = serve(ROOT / "app.py", env)
    peer, peer_url = serve(write_peer(peer_folder, trace), env)
    times: dict[str, list[float]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1400})
            open_page(page, f"{url}/Trace_explorer")
            first = timed(page, lambda: None, PAGE_DRAWN)
            print(f"first open of the trace (read, cached from then on): {first:.2f} s", flush=True)
            for r in range(args.rounds):
                record = times.setdefault
                page.goto(f"{url}/Trace_explorer")
                record("page load (Trace explorer, trace cached)", []).append(timed(page, lambda: None, PAGE_DRAWN))
                all_box = page.get_by_text("All profiled iterations").first
                record("view switch: all iterations on", []).append(timed(
                    page, all_box.click, timeline_title("Kernel timeline: all profiled iterations")))
                record("view switch: all iterations off", []).append(timed(
                    page, all_box.click, timeline_title("Kernel timeline: one steady iteration")))
                step = page.locator(ST.SELECTBOX).filter(has_text="Iteration").first

                step.click()  # the list opens in the browser alone: timed from the choice
                options = page.get_by_role("option")
                options.first.wait_for()
                record("view switch: another iteration", []).append(timed(
                    page, options.last.click,  # the last iteration (the median one is drawn already)
                    timeline_title("Kernel timeline: iteration ")))
                search = page.get_by_placeholder("part of a kernel name")

                def type_search(box=search) -> None:
                    box.fill("layer_norm")
                    box.press("Enter")

                record("search and highlight", []).append(timed(page, type_search, text_shown("kernels match")))
                where = page.evaluate(CLICK_KERNEL)
                if where is None:  # kernels become clickable once a zoom has narrowed them to a few hundred
                    narrow = page.evaluate(PLOT_BOX)
                    record("box drawn to a clickable window", []).append(timed(
                        page, functools.partial(drag, page, narrow, 0.40, 0.43),
                        text_shown("click a kernel for its code") + " && !" + text_shown("Every kernel in the whole")))
                    where = page.evaluate(CLICK_KERNEL)
                page.mouse.move(where["x"], where["y"])
                page.wait_for_timeout(300)  # Plotly picks the clicked point from the hover

                record("kernel click: its code or what it is", []).append(timed(
                    page, functools.partial(page.mouse.click, where["x"], where["y"]),
                    text_shown("is a library kernel") + " || " + text_shown("Generated source of")))
                record("view switch: all iterations on (time slices)", []).append(timed(
                    page, all_box.click, timeline_title("Kernel timeline: all profiled iterations")))
                box = page.evaluate(PLOT_BOX)
                try:  # a small trace never is drawn as time slices
                    page.wait_for_function(text_shown("slices of time"), timeout=5_000)
                    sliced = True
                except Exception:
                    sliced = False

                def drag_box(b=box) -> None:
                    drag(page, b, 0.3, 0.36)

                if sliced:
                    record("box drawn on the time slices: every kernel in it", []).append(timed(
                        page, drag_box,
                        text_shown("Every kernel in") + " && !" + text_shown("Every kernel in the whole")))
                    record("back to the whole window", []).append(timed(
                        page, lambda: page.get_by_role("button", name="Whole").click(), text_shown("slices of time")))
                record("view switch: all iterations off again", []).append(timed(
                    page, all_box.click, timeline_title("Kernel timeline: iteration ")))
                flip = key_flip(page, "Presentation")
                record("presentation toggle on", []).append(timed(page, flip, title_size(30)))
                record("presentation toggle off", []).append(timed(page, flip, title_size(16)))
                nav = page.locator(ST.SIDEBAR_NAV)
                record("page switch: to Methodology", []).append(timed(
                    page, nav.get_by_text("Methodology").click,
                    "[...document.querySelectorAll('h1')].some(h => h.textContent.includes('Methodology'))"))
                record("page switch: back to Trace explorer", []).append(timed(
                    page, nav.get_by_text("Trace explorer").click, PAGE_DRAWN))
                peer_round(page, peer_url, times)
                plotly_round(page, peer_folder, times)
                print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
            version = browser.version
            browser.close()
    finally:
        for process in (server, peer):
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nChromium {version}, streamlit run app.py; seconds from the click to the answer on screen, median of "
          f"{args.rounds} (min–max):\n")
    report(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
