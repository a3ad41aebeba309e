"""The app's middleware (ui/web/middleware.py) around a real Starlette app: every page of HTML names plotly.js in
its head, compressed or not, and the file itself is answered for under any path prefix, cached for good."""

from __future__ import annotations

import asyncio
import hashlib
import re
from typing import Any

from plotly.offline import get_plotlyjs_version
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ui.web.bundle import BUNDLE, bundle_version, head_lines, plotly_js, plotly_name
from ui.web.middleware import PageHead

PAGE = "<html><head><title>t</title></head><body>" + "x" * 2000 + "</body></html>"  # past gzip's minimum size


def page(_request: Any) -> Response:
    return HTMLResponse(PAGE, headers={"etag": '"abc"'})


def not_modified(_request: Any) -> Response:
    return Response(status_code=304, headers={"content-type": "text/html", "etag": '"abc"'})


APP = PageHead(Starlette(routes=[Route("/", page), Route("/Story", page), Route("/cached", not_modified),
                                 Route("/data", lambda _r: JSONResponse({"a": 1}))],
                         middleware=[Middleware(GZipMiddleware, minimum_size=500)]))


def ask(path: str, method: str = "GET", gzip: bool = False) -> tuple[int, dict[bytes, bytes], bytes]:
    """The status, headers and body the app answers `path` with."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"host", b"t"), *([(b"accept-encoding", b"gzip")] if gzip else [])],
             "scheme": "http", "server": ("t", 80), "client": ("c", 1), "root_path": "", "http_version": "1.1"}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(APP(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


def test_plotly_js_is_the_vendored_bundle_s_code_run_as_the_script_with_its_module_kept() -> None:
    text, shipped = plotly_js().decode(), BUNDLE.read_text()
    assert text.startswith('"use strict";var Plotly=') and "window.Plotly = Plotly;" in text
    assert text.endswith("globalThis.fusionvizPlotly = window.Plotly;\n") and "module.exports" not in text[:200]
    assert text[:-len(";globalThis.fusionvizPlotly = window.Plotly;\n")].strip() in shipped
    digest = hashlib.sha256(plotly_js()).hexdigest()[:12]
    assert plotly_name() == f"fusionviz-plotly-{get_plotlyjs_version()}-{digest}.js"


def test_the_bundle_is_the_plotly_js_plotly_py_ships() -> None:
    """The browser draws with the plotly.js plotly.py builds its figures for (and kaleido's slides are drawn
    with): after a change of plotly, run scripts/vendor_plotly.py."""
    assert bundle_version() == get_plotlyjs_version()


def test_every_page_names_plotly_js_once_before_its_head_ends_compressed_or_not() -> None:
    for path in ("/", "/Story"):
        for gzip in (False, True):
            status, headers, body = ask(path, gzip=gzip)
            assert status == 200 and b"content-encoding" not in headers
            assert body == PAGE.encode().replace(b"</head>", head_lines() + b"</head>")
            assert int(headers[b"content-length"]) == len(body)
            assert b"etag" not in headers  # a browser's copy would name the plotly.js of its day
    lines = head_lines().decode()
    assert lines.count(plotly_name()) == 2  # the preload, and the script run on the page's load
    assert re.search(rf'<link rel="preload" href="\./{re.escape(plotly_name())}" as="script">', lines)
    assert 'addEventListener("load"' in lines


def test_plotly_js_is_answered_under_any_prefix_and_cached_for_good() -> None:
    for prefix in ("/", "/some/base/"):
        status, headers, body = ask(prefix + plotly_name())
        assert status == 200 and body == plotly_js()
        assert headers[b"content-type"].startswith(b"text/javascript")
        assert b"immutable" in headers[b"cache-control"] and int(headers[b"content-length"]) == len(body)
    assert ask("/" + plotly_name(), method="HEAD")[2] == b""


def test_what_is_not_a_page_passes_as_it_came() -> None:
    status, headers, body = ask("/data", gzip=True)
    assert status == 200 and body == b'{"a":1}' and headers[b"content-type"] == b"application/json"
    status, headers, body = ask("/cached")
    assert status == 304 and body == b"" and headers[b"etag"] == b'"abc"'
    status, headers, body = ask("/", method="HEAD")
    assert plotly_name().encode() not in body
    status, _, _ = ask("/fusionviz-plotly-0.0.0-000000000000.js")  # another build's name is not ours
    assert status == 404
