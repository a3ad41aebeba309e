"""The app's own URLs for JSON made on demand (a presentation's next views, ui/served_views.py): a name prefix and
the table the pages register an answer into; the middleware (ui/web/middleware.py) answers from it. It imports
nothing of the pages, so the server's middleware depends on no page code.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable

from fusionviz.lru import LRU

PREFIX = "fusionviz-view-"  # the last part of every such URL starts with this, under any path
KEPT = 256  # answers registered, most recently used first: every presented view of a few sessions, modes and sizes

Answer = Callable[[], str | None]  # the JSON to answer with, or None (gone: 404)
_ANSWERS: LRU[str, Answer] = LRU(KEPT)


def register(answer: Answer) -> str:
    """A new name, relative to the page's URL, that the middleware answers with `answer()` while it is kept."""
    name = f"{PREFIX}{secrets.token_urlsafe(16)}.json"
    _ANSWERS.put(name, answer)
    return name


def registered(name: str) -> bool:
    """Whether `name` is still answered (asking keeps it as recently used)."""
    return _ANSWERS.get(name) is not None


async def answer(name: str) -> str | None:
    """The answer registered under `name`, made in a thread of its own (the server's event loop answers the
    browser meanwhile); None for a name never registered or no longer kept."""
    make = _ANSWERS.get(name)
    return None if make is None else await asyncio.to_thread(make)
