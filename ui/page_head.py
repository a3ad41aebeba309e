"""plotly.js served by the app itself, and named in the head of every page's HTML, so that a first visit's
browser fetches it with Streamlit's own bundle and reads it while the server runs the first page.

Asked for by the page's first element, as before, a first visit's first chart waited for plotly.js twice: its
fetch (4.6 MB from `static/`, gzipped anew for every request by Streamlit's middleware, 0.9 s while the server
ran the page) and then its reading (1.2-1.4 s of Chromium's main thread on the benchmark machine,
benchmarks/RESULTS.md). `PageHead`, the app's ASGI middleware (app.py), answers for the file itself,
uncompressed as Streamlit serves its own bundles and cached by the browser for good (its name holds its digest),
and adds two lines to the head of the HTML Streamlit serves for any page: a preload, and a script that runs it
once the page's own scripts have loaded. The plots (ui/plotly_view.js) wait for the module it keeps.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from functools import cache
from pathlib import Path
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


VIEW_PREFIX = "fusionviz-view-"  # the names of ui/served_views.py, which imports the pages' modules
UMD_HEAD = '} (typeof self !== "undefined" ? self : this, () => {\n'  # plotly.js's UMD wrapper, opened
UMD_TAIL = "\nreturn Plotly;\n}));"  # and closed


# plotly.js's own cartesian bundle (scripts/vendor_plotly.py fetches it), at the version plotly.py ships: 1.5 MB
# against the full bundle's 4.8 MB, a blank page drew its first plot 0.29 s after the navigation began, against
# 0.62 s (benchmarks/bench_plotly_load.py, RESULTS.md). It holds the trace types below, every one the app draws
# (tests/unit/test_registry.py; in the browser, tests/e2e/pages.py): a type outside it is drawn as a scatter,
# without a word.
BUNDLE = Path(__file__).with_name("vendor") / "plotly-cartesian.min.js"
BUNDLE_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                           "image", "pie", "scatter", "scatterternary", "violin"})


def bundle_version() -> str:
    """The version its first lines name ("plotly.js (cartesian - minified) v4.1.1"): those read alone, not the
    1.5 MB that `plotly_js` reads once."""
    with BUNDLE.open() as bundle:
        found = re.search(r"plotly\.js \(cartesian - minified\) v(\S+)", bundle.read(200))
    return found.group(1) if found else ""


@cache
def plotly_js() -> bytes:
    """The bundle as served (`unwrapped`)."""
    return unwrapped(BUNDLE.read_text())


def unwrapped(shipped: str) -> bytes:
    """A plotly.js build, its module then kept as `fusionvizPlotly`, and its code run as the script itself rather
    than as the factory its UMD wrapper hands to a loader. Chromium compiles a script's own code while it loads, off
    the main thread, and a function only when it is called, on it: the factory (the whole library) took 0.3 s of
    the main thread to compile, and a blank page read the full bundle in 0.92 s against 1.28 s as it ships (six
    loads each, benchmarks/RESULTS.md). The code is strict inside the wrapper, and stays so (its first statement
    is "use strict"); a build laid out otherwise is served whole."""
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
    """What the middleware adds to a page's head: plotly.js fetched at once, and run on the page's `load`,
    once Streamlit's own scripts have run (run first, it held their start back by as long as it took)."""
    name = plotly_name()
    return (f'<link rel="preload" href="./{name}" as="script">'
            '<script>addEventListener("load", () => {'
            f' const src = new URL("{name}", document.baseURI).href;'
            ' const script = document.createElement("script"); script.src = src;'
            ' document.head.appendChild(script); }, { once: true });</script>').encode()


class PageHead:
    """ASGI middleware: answers for plotly.js (`plotly_name`) and for the presentation's views
    (ui/served_views.py) under any path prefix, and adds `head_lines` to every HTML response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
        elif (name := scope["path"].rsplit("/", 1)[-1]) == plotly_name():
            await self._plotly(scope, send)
        elif name.startswith(VIEW_PREFIX):
            await self._view(name, scope, send)
        else:
            await self.app(scope, receive, _HeadAdder(send) if scope["method"] == "GET" else send)

    @staticmethod
    async def _plotly(scope: Scope, send: Send) -> None:
        await _answer(scope, send, 200, plotly_js(), b"text/javascript; charset=utf-8",
                      b"public, max-age=31536000, immutable")

    @staticmethod
    async def _view(name: str, scope: Scope, send: Send) -> None:
        from ui import served_views  # the pages' modules: imported with the first page, not with the server

        view = await served_views.answer(name)
        await _answer(scope, send, 404 if view is None else 200, b"" if view is None else view.encode(),
                      b"application/json", b"no-store")


async def _answer(scope: Scope, send: Send, status: int, body: bytes, content_type: bytes, cache: bytes) -> None:
    """A whole response of the app's own; for HEAD, its headers alone."""
    headers = [(b"content-type", content_type), (b"content-length", b"%d" % len(body)), (b"cache-control", cache)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


class _HeadAdder:
    """A response's `send`, which passes everything on but a page of HTML: that it gathers (a few kB), adds
    `head_lines` before `</head>` and sends whole, uncompressed (Streamlit's gzip middleware sits inside), and
    without the file's ETag, which would let a browser keep a page that names an older plotly.js."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.start: Message | None = None
        self.body: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers", []))
            if message.get("status") == 200 and headers.get(b"content-type", b"").startswith(b"text/html"):
                self.start = message
                return
        if self.start is None or message["type"] != "http.response.body":
            await self.send(message)
            return
        self.body.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        await self._send_page()

    async def _send_page(self) -> None:
        assert self.start is not None
        dropped = (b"content-length", b"content-encoding", b"etag", b"last-modified")
        headers = [(k, v) for k, v in self.start.get("headers", []) if k not in dropped]
        page = b"".join(self.body)
        if dict(self.start.get("headers", [])).get(b"content-encoding") == b"gzip":
            page = zlib.decompress(page, wbits=31)
        page = page.replace(b"</head>", head_lines() + b"</head>", 1)
        headers.append((b"content-length", b"%d" % len(page)))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": page})
