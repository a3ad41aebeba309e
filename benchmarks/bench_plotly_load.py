"""plotly.js read by a blank page (issue 22): the file the app serves (ui/web/bundle.py: plotly.js's cartesian
bundle, run as the script itself) against plotly.py's full bundle unwrapped the same way (the peer: what the app
served until 2026-12-03), in the real headless Chromium, each load in a fresh browser context over HTTP, the
two taken in turn. Timed from the navigation's start to a first plot (a bar and a heatmap) drawn: what a first
visit's first chart waits on in the browser, without Streamlit.

    .venv/bin/python benchmarks/bench_plotly_load.py [--loads 8]

Seconds, median (min–max); every value, in the order taken, goes to stderr.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from plotly.offline import get_plotlyjs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app import CHROMIUM, report

from ui.web.bundle import plotly_js, unwrapped

PAGE = """<html><head><script src="{script}"></script></head><body><div id="plot" style="width: 1500px"></div>
<script>fusionvizPlotly.newPlot(plot, [{{type: "bar", x: [1, 2, 3], y: [3, 1, 2]}},
  {{type: "heatmap", z: [[1, 2], [3, 4]], xaxis: "x2", yaxis: "y2"}}])
  .then(() => {{ window.drawn = performance.now(); }});
</script></body></html>"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Nothing: the table is the output."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=8)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="fusionviz-plotly-"))
    contenders = {"this checkout: the served bundle": plotly_js(),
                  "peer: plotly.py's full bundle": unwrapped(get_plotlyjs())}
    for at, (name, script) in enumerate(contenders.items()):
        (folder / f"{at}.js").write_bytes(script)
        (folder / f"{at}.html").write_text(PAGE.format(script=f"{at}.js"))
        print(f"{name}: {len(script) / 1e6:.1f} MB")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    times: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        for _ in range(args.loads):
            for at, name in enumerate(contenders):
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/{at}.html")
                times.setdefault(f"{name}: navigation to the first plot drawn", []).append(
                    page.wait_for_function("window.drawn").json_value() / 1000)
                context.close()
    server.shutdown()
    print(f"\nChromium, a blank page; seconds, median of {args.loads} (min–max):\n")
    report(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
