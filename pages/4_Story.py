"""Story: a talk's scenes, one screen each, from the recorded library. ← and → (or a clicker's Page Up and
Page Down, or the buttons) step through it; the sidebar picks the talk, jumps to a scene and sets the pace.

A talk is a TOML file (fusionviz.records.talk); the default one is talks/fusion_story.toml.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.report import analyse
from fusionviz.charts.views import view_problem
from fusionviz.errors import TalkFileError
from fusionviz.records.talk import Talk, configurations_drawn_twice, missing_sessions
from ui import backend, served_views, story
from ui.page import setup_page
from ui.text import plain

settings = setup_page("Story", "A talk, scene by scene, from the recorded library.", always_presents=True)


def choose_talk() -> Talk | None:
    """A talk shipped in talks/ or an uploaded one; a bad file's error names its line."""
    shipped = {p.name: p for p in backend.talks()}
    upload = st.file_uploader("Your talk (.toml)", type=["toml"], key="story_upload",
                              help="Copy talks/fusion_story.toml and change its scenes")
    name = None if upload else st.selectbox("Talk", list(shipped), key="story_talk")
    try:
        if upload:
            return backend.read_talk(upload.getvalue().decode("utf-8", errors="replace"), upload.name)
        if name:
            return backend.read_talk(shipped[name].read_text(encoding="utf-8"), name)
    except TalkFileError as exc:
        st.error(plain(exc))
    return None


with st.sidebar:
    st.header("Talk")
    talk = choose_talk()
    seconds = story.pace("story_pace")
    if talk is not None:
        story.scene_list(talk)
        shelf = backend.library()[0]
        for line in [*missing_sessions(talk, set(shelf)), *configurations_drawn_twice(talk, shelf)]:
            st.caption(plain(line))
    st.caption("→ / ← or a clicker's Page Down / Page Up step through the scenes.")

if talk is None:
    st.info("No talk to show: pick one in the sidebar (open it with the arrow at the top left), or upload yours.")
    st.stop()

at = story.scene_index(talk)
story.navigation(talk, at)
scene = talk.scenes[at]
library, _ = backend.library()
session = library.get(scene.session)
report = analyse(session) if session is not None else None
problem = (f"{scene.session} is not in the library ({backend.sessions_dir()})" if report is None
           else view_problem(report, scene.view, scene.mode))
if problem or report is None:
    st.warning(plain(f"{talk.name}, {scene.where('session')}: {problem}"))
else:
    story.show_scene(scene, report, settings, seconds,
                     served_views.scene_neighbours(talk, at, library, settings, seconds))
    story.build_next(talk, at, library, settings, seconds)
    with st.sidebar:
        st.markdown("**This scene as a slide**")
        story.slide_downloads(report, scene.view, "story_slide", mode=scene.mode, zoom=scene.zoom, seconds=seconds)
