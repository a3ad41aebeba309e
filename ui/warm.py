"""What a first visit needs, made in the background as soon as the app process runs its first script: the
worker started and asked for its devices, the pages' modules imported, the recorded library opened and the
first session's report and figures built into the caches the lab reads. A visitor's page that asks for one of
them while it is being made waits for that one (Streamlit's caches compute a value once, under a lock), so the
first chart comes when the slowest of them is ready, not after all of them in turn (10 s from a page load to
the first chart on a fresh server before).
"""

from __future__ import annotations

import threading

import streamlit as st

from ui import backend


def _library_and_first_session() -> None:
    from ui import lab  # the pages' modules: Plotly, pandas and the charts imported here, once

    shelf = [s for s in backend.library()[0].values() if s.runs]
    if shelf:
        lab.warm(shelf[0])


@st.cache_resource(show_spinner=False)
def start() -> list[threading.Thread]:
    """Start the warm-up once per app process (again after "Clear caches", which the caches it fills follow);
    the threads are daemons, so they never hold up the server's exit."""
    threads = [threading.Thread(target=backend.devices_or_cpu, name="fusionviz-warm-devices", daemon=True),
               threading.Thread(target=_library_and_first_session, name="fusionviz-warm-library", daemon=True)]
    for thread in threads:
        thread.start()
    return threads
