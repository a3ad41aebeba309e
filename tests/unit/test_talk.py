"""Talk files: the shipped talk reads, and every mistake a speaker can make is refused with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.charts.registry import VIEWS
from fusionviz.errors import FusionvizError, TalkFileError
from fusionviz.records.talk import caption_fields, load_talk, missing_sessions, parse_talk

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TALK = ROOT / "talks" / "fusion_story.toml"

GOOD = '''title = "A talk"

[[scene]]
title = "First"
session = "a.json.gz"
view = "timeline"
mode = "default"
zoom = [0, 250.5]

# a comment between scenes
[[scene]]
session = "b.json.gz"
view = "latency"
caption = """{speedup},
over {eager_kernels} kernels"""
'''


def test_a_talk_reads_into_scenes_that_know_their_lines() -> None:
    talk = parse_talk(GOOD, "good.toml", views=VIEWS)
    first, second = talk.scenes
    assert (talk.title, first.title, first.session, first.view, first.mode, first.zoom) == (
        "A talk", "First", "a.json.gz", "timeline", "default", (0.0, 250.5))
    assert (first.line, first.lines["zoom"]) == (3, 8)
    assert (second.line, second.lines["caption"], second.where("caption"), second.where()) == (
        11, 14, "line 14", "line 11")
    assert second.caption is not None and caption_fields(second.caption) == ["speedup", "eager_kernels"]


def test_the_shipped_talk_tells_the_fusion_story() -> None:
    talk = load_talk(DEFAULT_TALK, views=VIEWS)
    views = [s.view for s in talk.scenes]
    assert {"timeline", "animation", "collapse", "verdict", "latency", "methodology", "grid", "sweep_latency"} <= set(
        views)
    # each scene's file names its GPU: the accounting sessions, the grid and the sweep an H200's, the rest an H100's
    # (the zoo's rows re-recorded with memory, and the real models: the memory and module scenes among them)
    machines = {s.session.split("_")[0] for s in talk.scenes}
    assert machines == {"h200", "h100"}
    assert all(s.session.startswith(("h200_acct_", "h200_grid_", "h200_sweep_")) for s in talk.scenes
               if s.session.startswith("h200_"))
    assert {"modules", "memory"} <= {s.view for s in talk.scenes if s.session.startswith("h100_")}


def scene(*lines: str) -> str:
    return 'title = "T"\n\n[[scene]]\n' + "\n".join(lines) + "\n"


# (talk text, the line the error names, words the message must hold)
BAD = [
    (scene('session = "a.json"', 'view = "timeline"', "mode = "), 6, "not valid TOML"),
    (scene('session = "a.json"', 'view = "timelines"'), 5, "unknown view 'timelines'"),
    (scene('session = "a.json"', 'view = "timeline"', 'mode = "fast"'), 6, "unknown compiled mode 'fast'"),
    (scene('session = "a.json"', 'view = "timeline"', 'mode = "default+nope"'), 6, "unknown option 'nope'"),
    (scene('session = "a.json"', 'view = "timeline"', 'mode = "default+fullgraph+freezing"'), 6,
     "a session names this variant 'default+freezing+fullgraph'"),
    (scene('session = "a.json"', 'view = "latency"', 'mode = "default"'), 6, "leave mode out"),
    (scene('session = "a.json"', 'view = "timeline"', "zoom = [5, 1]"), 6, "from < to"),
    (scene('session = "a.json"', 'view = "timeline"', 'zoom = ["a", 1]'), 6, "zoom is [from, to]"),
    (scene('session = "a.json"', 'view = "verdict"', "zoom = [0, 1]"), 6, "does not zoom"),
    (scene('session = "a.json"', 'view = "verdict"', 'caption = "{speed} wins"'), 6, "unknown field(s) speed"),
    (scene('session = "a.json"', 'view = "verdict"', 'caption = "{mode!r}"'), 6, "not a plain field name"),
    (scene('view = "verdict"'), 3, "no session"),
    (scene('session = "../a.json"', 'view = "verdict"'), 4, "not a path"),
    (scene('session = "a.json"', 'view = "verdict"', 'colour = "red"'), 6, "unknown key 'colour'"),
    (scene('session = 3', 'view = "verdict"'), 4, "session must be a string"),
    ('title = "T"\nscenes = []\n', 2, "unknown key 'scenes'"),
    ('title = "T"\n', 1, "at least one [[scene]]"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_talk_is_refused_naming_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TalkFileError) as caught:
        parse_talk(text, "mine.toml", views=VIEWS)
    assert f"mine.toml, line {line}" in str(caught.value) and words in str(caught.value)
    assert isinstance(caught.value, FusionvizError) and isinstance(caught.value, ValueError)


def test_scenes_whose_session_is_not_in_the_library_are_named_with_their_line() -> None:
    talk = parse_talk(GOOD, "good.toml", views=VIEWS)
    assert missing_sessions(talk, {"a.json.gz"}) == ["good.toml, line 12: b.json.gz is not in the library"]


def test_an_unreadable_talk_file_is_a_talk_error(tmp_path: Path) -> None:
    with pytest.raises(TalkFileError, match="cannot be read"):
        load_talk(tmp_path / "missing.toml", views=VIEWS)


def test_every_view_says_what_it_needs() -> None:
    assert {v.needs for v in VIEWS.values()} == {"runs", "sources", "timing", "naive", "sweep", "grid"}
