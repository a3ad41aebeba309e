"""What a scene leads with (ui/story.py): a headline and one line under it, each at a fixed size no smaller than
issue 45's floors (a caption was set smaller to fit, down to 0.8 rem: 12.8 px on a 1920-wide slide), the
details on hover, and a chart that gives up a headline's second line."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fusionviz.analysis.headline import Headline
from fusionviz.analysis.report import analyse
from fusionviz.charts.view_captions import view_headline
from fusionviz.records.files import open_path
from ui import story

CHAIN = Path(__file__).resolve().parents[2] / "sessions" / "h200_acct_pointwise_chain_4096x4096_float32.json.gz"
SIZE = re.compile(r"font-size: ([^;\"]+)")


def test_the_headline_and_its_line_are_set_at_fixed_sizes_no_smaller_than_the_floors() -> None:
    shown = story.headline_html(Headline("default: 11x faster", "Host-bound: 73 µs of host work per call.",
                                         ("default is faster than eager here: 10.53x.",)), "scene")
    sizes = SIZE.findall(shown)
    assert sizes == [f"{story.HEADLINE_PX}px", f"{story.LINE_PX}px"]
    assert story.HEADLINE_PX >= 40 and story.LINE_PX >= 24
    assert "calc(" not in shown and "clamp(" not in shown and "cqw" not in shown  # nothing scales it down
    assert 'data-fv-caption="scene"' in shown and "white-space: nowrap" in shown
    assert 'title="default is faster than eager here: 10.53x."' in shown  # the details: a hover away


def test_a_word_with_a_hyphen_is_not_broken_at_the_end_of_a_headlines_line() -> None:
    assert story.unbroken("Balanced: reduce-overhead, max-autotune") == (
        'Balanced: <span style="white-space: nowrap">reduce-overhead,</span> '
        '<span style="white-space: nowrap">max-autotune</span>')
    assert story.unbroken("a < b") == "a &lt; b"


def test_a_scene_template_takes_the_place_of_the_mechanism_under_the_views_headline() -> None:
    report = analyse(open_path(CHAIN))
    own = view_headline(report, "verdict", "default")
    templated = story.scene_headline(report, "verdict", "default", "The {compile_s} compile {break_even}.")
    fields = report.caption_fields("default")
    assert (templated.text, templated.details) == (own.text, own.details)
    assert templated.mechanism == f"The {fields['compile_s']} compile {fields['break_even']}."
    assert story.scene_headline(report, "verdict", "default") == own
    assert html.escape(templated.mechanism) in story.headline_html(templated, "scene")


def test_a_headline_of_two_lines_takes_one_lines_height_off_the_chart() -> None:
    per_line = int(story.HEADLINE_ROOM_PX / (story.HEADLINE_EM_PER_CHAR * story.HEADLINE_PX))
    short, long = Headline("x" * per_line), Headline("x" * (per_line + 1))
    assert (story.headline_lines(short.text), story.headline_lines(long.text)) == (1, 2)
    assert story.fitted_height(short, 850) == 850
    assert story.fitted_height(long, 850) == 850 - round(story.HEADLINE_PX * story.HEADLINE_LEADING)
