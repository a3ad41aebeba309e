"""Every sentence fusionviz writes about the shipped sessions (sessions/, tests/data/) and the talk: the file a
reviewer reads (docs/sentences.txt, scripts/sentences.py) as a golden, every headline within its budgets, each
mode in one class wherever a sentence puts it in one, and each figure said at one precision in each block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fusionviz.analysis.bound import KINDS
from fusionviz.analysis.headline import Headline, sentences, times
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.view_captions import view_headline
from fusionviz.charts.views import view_problem
from fusionviz.records.files import open_path
from scripts.sentences import OUT, render, shipped_sessions

SESSIONS = shipped_sessions()
# The classification's words, and those the verdict put a mode in a class with before it ("the kernels dominate"
# at a busy GPU beside "host-bound"): no sentence says two of them.
CLASS_WORDS = (*KINDS, "launch-bound", "kernels dominate", "host work dominate", "kernels dominated",
               "host side dominated")


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {path.name: analyse(open_path(path)) for path in SESSIONS}


def headlines(report: Report) -> Iterator[tuple[str, Headline]]:
    """Every headline the tool writes of a session, named by where it is shown."""
    yield "session", report.headline
    for mode, headline in report.mode_headlines.items():
        yield f"mode {mode}", headline
    for name in VIEWS:
        for mode in [None, *(r.mode for r in report.drawable if r.mode != "eager")] if VIEWS[name].takes_mode \
                else [None]:
            if view_problem(report, name, mode) is None:
                yield f"view {name} ({mode})", view_headline(report, name, mode)


def texts(report: Report) -> Iterator[str]:
    """Every text of a session: its headlines' parts and its ladder's steps."""
    for _, headline in headlines(report):
        yield headline.text
        yield headline.mechanism
        yield from headline.details
    for step in report.ladder:
        yield step.mechanism


def test_the_sentences_file_is_the_code_s(golden: Callable[[str, str], None]) -> None:
    """python scripts/sentences.py writes it; pytest --update-golden does too."""
    golden(str(OUT), render())  # an absolute path: the golden is docs/sentences.txt, for a reviewer to read


def test_the_walk_covers_every_shipped_session() -> None:
    assert len(SESSIONS) >= 50 and {p.parent.name for p in SESSIONS} == {"sessions", "data"}


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_every_headline_keeps_its_budgets(path: Path, reports: dict[str, Report]) -> None:
    for where, headline in headlines(reports[path.name]):
        assert headline.text and not headline.problems(), (where, headline.problems())


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_no_sentence_puts_a_mode_in_two_classes(path: Path, reports: dict[str, Report]) -> None:
    report = reports[path.name]
    kinds = {mode: b.kind for mode, b in report.bounds.items()}
    for text in texts(report):
        for sentence in sentences(text):
            said = [w for w in CLASS_WORDS if w in sentence.lower()]
            assert len(said) <= 1, sentence
            # "default is host-bound: …", and the bound view's "Host-bound: eager, default"
            for mode, kind in re.findall(r"(\S+) is (host-bound|device-bound|balanced)\b", sentence):
                assert kinds[mode.lower()] == kind, sentence
            listed = re.match(r"(Host-bound|Device-bound|Balanced): ([\w, -]+)$", sentence.rstrip("."))
            if listed and not listed.group(2).startswith(tuple("0123456789")):
                for mode in listed.group(2).split(", "):
                    assert kinds[mode] == listed.group(1).lower(), sentence
    for mode, headline in report.mode_headlines.items():  # a mode's line of mechanism is its class
        kind = kinds.get(mode)
        assert headline.mechanism.lower().startswith(kind) if kind else True, (mode, headline.mechanism)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_each_figure_is_said_at_one_precision_in_each_block(path: Path, reports: dict[str, Report]) -> None:
    """A mode's speedup reads "10x" in its headline and "10.00x (…)" in the details, the same number rounded; no
    block says both."""
    report = reports[path.name]
    for mode, headline in report.mode_headlines.items():
        median = report.comparisons[mode].speedup.median
        rounded, exact = times(median if median >= 1 else 1 / median), f"{median:.2f}x"
        read = f"{headline.text} {headline.mechanism}"
        details = " ".join(headline.details)
        if report.comparisons[mode].verdict != "no clear difference":
            assert re.search(rf"(?<![\d.]){re.escape(rounded)} (faster|slower)", read), (read, rounded)
        assert f"{exact} (" in details, (details, exact)
        if rounded != exact:  # the interval's ends may be the rounded figure by chance (0.98x: 0.82–1.02x)
            said = re.sub(r"\([^)]*\)", "", details)
            assert not re.search(rf"(?<![\d.]){re.escape(rounded)}(?![\d])", said), details
            assert exact not in read, read
