"""plotly.js as the app serves it: plotly.js's own cartesian bundle (vendor/, fetched by scripts/vendor_plotly.py
at the version plotly.py ships), named in the head of every page's HTML (ui/web/middleware.py), so that a first
visit's browser fetches it with Streamlit's own bundle and reads it while the server runs the first page. Figures:
benchmarks/RESULTS.md, "plotly.js's cartesian bundle: the first chart on a fresh server within 3 s in every round".
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

UMD_HEAD = '} (typeof self !== "undefined" ? self : this, () => {\n'  # plotly.js's UMD wrapper, opened
UMD_TAIL = "\nreturn Plotly;\n}));"  # and closed

# The bundle holds the trace types below, every one the app draws (tests/unit/test_registry.py; in the browser,
# tests/e2e/pages.py): a type outside it is drawn as a scatter, without a word.
BUNDLE = Path(__file__).with_name("vendor") / "plotly-cartesian.min.js"
BUNDLE_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                           "image", "pie", "scatter", "scatterternary", "violin"})


def bundle_version() -> str:
    """The version its first lines name ("plotly.js (cartesian - minified) v4.1.1"): those read alone, not the
    whole file that `plotly_js` reads once."""
    with BUNDLE.open() as bundle:
        found = re.search(r"plotly\.js \(cartesian - minified\) v(\S+)", bundle.read(200))
    return found.group(1) if found else ""


@cache
def plotly_js() -> bytes:
    """The bundle as served (`unwrapped`)."""
    return unwrapped(BUNDLE.read_text())


def unwrapped(shipped: str) -> bytes:
    """A plotly.js build, its module then kept as `fusionvizPlotly`, and its code run as the script itself rather
    than as the factory its UMD wrapper hands to a loader: Chromium compiles a script's own code off the main
    thread while it loads, a function only when it is called, on it (benchmarks/RESULTS.md, "A first visit:
    plotly.js read off the main thread, the worker after the first page"). The code is strict inside the wrapper,
    and stays so (its first statement is "use strict"); a build laid out otherwise is served whole. The module is
    kept under its own name because the global `Plotly` is set by whichever copy loads last (Streamlit's own
    charts carry another version)."""
    shipped = shipped.rstrip()
    start = shipped.find(UMD_HEAD)
    code = shipped[start + len(UMD_HEAD):-len(UMD_TAIL)] if start > 0 and shipped.endswith(UMD_TAIL) else shipped
    return (code + "\n;globalThis.fusionvizPlotly = window.Plotly;\n").encode()


@cache
def plotly_name() -> str:
    """The file's name, relative to the page's URL (so under any `server.baseUrlPath`): plotly.js's version and
    the content's digest, so a new build is a new URL to browsers."""
    return f"fusionviz-plotly-{bundle_version()}-{hashlib.sha256(plotly_js()).hexdigest()[:12]}.js"


def head_lines() -> bytes:
    """What the middleware adds to a page's head: plotly.js fetched at once, and run on the page's `load`, once
    Streamlit's own scripts have run (run first, it held their start back by as long as it took)."""
    name = plotly_name()
    return (f'<link rel="preload" href="./{name}" as="script">'
            '<script>addEventListener("load", () => {'
            f' const src = new URL("{name}", document.baseURI).href;'
            ' const script = document.createElement("script"); script.src = src;'
            ' document.head.appendChild(script); }, { once: true });</script>').encode()
