"""Following a lab run through AppTest to its end."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

POLL_S = 0.5


def to_the_end(at: AppTest, timeout_s: float = 600.0) -> AppTest:
    """`at` run again until the lab waits for no run: a run timed in several processes is drawn first from its
    first process (ui/backend.follow's previews) and then refined; in a browser the status box's fragment reruns
    the page each second, here each `run()` does."""
    deadline = time.monotonic() + timeout_s
    while "pending_lab" in at.session_state:
        assert time.monotonic() < deadline, "the lab's run did not end"
        at.session_state["pending_lab"].ticket.wait(POLL_S)  # at once when it ends, else to draw its progress
        at.run()
    return at
