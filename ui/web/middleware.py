"""The app's ASGI middleware (`PageHead`, which app.py hands to `st.App` unless the app runs plain, ui/web/switch.py):
it answers for plotly.js (ui/web/bundle.py) and for the URLs the pages registered (ui/web/routes.py) under any path
prefix, and adds plotly.js to the head of every page of HTML Streamlit serves. It imports nothing of the pages.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import ui.web.routes as routes
from ui.web.bundle import head_lines, plotly_js, plotly_name

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class PageHead:
    """ASGI middleware: answers for plotly.js (`plotly_name`) and for the registered routes under any path prefix,
    and adds `head_lines` to every HTML response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
        elif (name := scope["path"].rsplit("/", 1)[-1]) == plotly_name():
            await _answer(scope, send, 200, plotly_js(), b"text/javascript; charset=utf-8",
                          b"public, max-age=31536000, immutable")
        elif name.startswith(routes.PREFIX):
            view = await routes.answer(name)
            await _answer(scope, send, 404 if view is None else 200, b"" if view is None else view.encode(),
                          b"application/json", b"no-store")
        else:
            await self.app(scope, receive, _HeadAdder(send) if scope["method"] == "GET" else send)


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
