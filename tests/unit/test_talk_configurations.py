"""The shipped talks against the recorded library: one recording per configuration (a talk drew eager mlp 512 × 256
at 122 µs in scene 6 and 73 µs in scene 18, from two sessions of one configuration), and every scene's words
within the headline grammar's budgets, so that its line fits one line of a slide at a fixed size (issue 45)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from fusionviz.analysis.headline import MECHANISM_CHARS
from fusionviz.analysis.report import analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.views import view_problem
from fusionviz.records.files import open_path
from fusionviz.records.session import Session
from fusionviz.records.talk import Talk, configuration, configurations_drawn_twice, load_talk, parse_talk
from ui.story import scene_headline

ROOT = Path(__file__).resolve().parents[2]
TALKS = sorted((ROOT / "talks").glob("*.toml"))


def library(talk: Talk) -> dict[str, Session]:
    return {s.session: open_path(ROOT / "sessions" / s.session) for s in talk.scenes}


@pytest.mark.parametrize("path", TALKS, ids=[p.name for p in TALKS])
def test_a_shipped_talk_draws_each_configuration_from_one_session(path: Path) -> None:
    talk = load_talk(path, views=VIEWS)
    shelf = library(talk)
    assert configurations_drawn_twice(talk, shelf) == []
    by_configuration: dict[tuple[str, ...], set[str]] = {}
    for scene in talk.scenes:
        by_configuration.setdefault(configuration(shelf[scene.session]), set()).add(scene.session)
    assert all(len(files) == 1 for files in by_configuration.values())


def test_two_recordings_of_one_configuration_in_one_talk_are_named_with_their_lines() -> None:
    text = ('title = "T"\n\n[[scene]]\nsession = "a.json.gz"\nview = "verdict"\n\n'
            '[[scene]]\nsession = "b.json.gz"\nview = "timeline"\n\n'
            '[[scene]]\nsession = "c.json.gz"\nview = "timeline"\n')
    talk = parse_talk(text, "mine.toml", views=VIEWS)
    mlp = open_path(ROOT / "sessions" / "h200_acct_mlp_512x256_float32.json.gz")
    again = open_path(ROOT / "tests" / "data" / "h200_prov_mlp_512x256_float32.json.gz")  # both on an H200
    other = open_path(ROOT / "sessions" / "h100_mlp_512x256_bfloat16.json.gz")
    assert configuration(mlp) == configuration(again) != configuration(other)
    assert configurations_drawn_twice(talk, {"a.json.gz": mlp, "b.json.gz": other, "c.json.gz": again}) == [
        "mine.toml: mlp 512 × 256 float32 is drawn from a.json.gz (line 3) and from c.json.gz (line 11): keep one "
        "recording per configuration"]
    sweep = msgspec.structs.replace(mlp, sweep=open_path(ROOT / "sessions" / "h200_sweep_transformer_block_seq.json.gz")
                                .sweep)
    assert configuration(sweep) != configuration(mlp)  # a sweep of a configuration is not a run of it


@pytest.mark.parametrize("path", TALKS, ids=[p.name for p in TALKS])
def test_every_scene_keeps_the_budgets_its_one_line_is_set_in(path: Path) -> None:
    """A scene's line (its caption template filled in, else its view's mechanism) fits one line of a slide at the
    caption's fixed size; its headline keeps the grammar's budgets."""
    talk = load_talk(path, views=VIEWS)
    for number, scene in enumerate(talk.scenes, start=1):
        report = analyse(open_path(ROOT / "sessions" / scene.session))
        if view_problem(report, scene.view, scene.mode):
            continue
        headline = scene_headline(report, scene.view, scene.mode, scene.caption)
        assert headline.problems() == [], f"scene {number}"
        assert len(headline.mechanism) <= MECHANISM_CHARS, f"scene {number}: {headline.mechanism!r}"
