"""The app's state in one place: one key function for results, a bounded store of finished runs shared by
every browser session (a configuration that already ran answers at once), and typed accessors for what
each user's own session keeps (what is on screen, the presentation toggle, their own runs that failed).

Uploads and what a user looks at stay in that user's `st.session_state`; only complete results of
configurations, which are the same for everyone, are shared. A run that failed in part (a crashed, timed-out
or out-of-memory mode, a failed timing process or sweep strategy) is a fault of that run, not an answer for
its configuration: its user sees it, nobody else does, and the next request runs again.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import streamlit as st

from fusionviz.lru import LRU
from fusionviz.records.session import Session

Page = Literal["lab", "methodology", "sweep"]
RESULTS_KEPT = 32  # finished runs kept across all browser sessions; the oldest goes first
OWN_KEPT = 4  # a user's own incomplete runs kept for them alone; the oldest goes first


def result_key(kind: str, *parts: Any) -> str:
    """The key of a result: its kind and the dataclasses (or plain values) that determine it, as JSON."""
    values = [dataclasses.asdict(p) if dataclasses.is_dataclass(p) and not isinstance(p, type) else p
              for p in parts]
    return f"{kind}|{json.dumps(values, sort_keys=True, default=str)}"


@st.cache_resource(show_spinner=False)
def results() -> LRU[str, Any]:
    """Finished runs by `result_key`, shared by every browser session of this app process."""
    return LRU(RESULTS_KEPT)


def complete(value: Any) -> bool:
    """Whether a result may be shared: no mode, timing process or sweep strategy of it failed."""
    if not isinstance(value, Session):
        return True
    return (all(run.status != "error" for run in value.runs)
            and (value.timing is None or all(p.error is None for p in value.timing.processes))
            and (value.sweep is None or all(s.status != "error" for s in value.sweep.strategies)))


def _own() -> LRU[str, Any]:
    """This user's own incomplete results, by `result_key`."""
    own: LRU[str, Any] = st.session_state.setdefault("own_results", LRU(OWN_KEPT))
    return own


def keep_own(key: str, value: Any) -> None:
    """Keep an incomplete result for this user alone (never in the shared store)."""
    _own().put(key, value)


def forget_own(key: str) -> None:
    """Drop this user's incomplete result of `key` (a complete one is shared now)."""
    _own().pop(key)


def result(key: str | None) -> Any:
    """The result of `key` this user may see: the shared one, else their own incomplete run; None if neither."""
    if key is None:
        return None
    shared = results().get(key)
    return shared if shared is not None else _own().get(key)


def presentation() -> bool:
    """Whether this page presents: the user's toggle is on, or the page always presents (a talk)."""
    return bool(st.session_state.get("presentation", False) or st.session_state.get("page_presents", False))


def set_page_presents(on: bool) -> None:
    """Mark the page being drawn as one that always presents, or not; every page sets it at its start."""
    st.session_state["page_presents"] = on


def set_presentation(on: bool) -> None:
    st.session_state["presentation"] = on


def shown(page: Page) -> str | None:
    """The result key of what this user's page shows, if a run of theirs is on screen."""
    key = st.session_state.get(f"shown_{page}")
    return str(key) if key is not None else None


def show(page: Page, key: str, took: str) -> None:
    """Put a finished result on this user's page, with how it was obtained ("measured in 3.1 s")."""
    st.session_state[f"shown_{page}"] = key
    st.session_state[f"took_{page}"] = took


def took(page: Page) -> str:
    return str(st.session_state.get(f"took_{page}", ""))
