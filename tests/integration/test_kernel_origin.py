"""A kernel picked on the page says which line of the user's code it came from (issue 20), through AppTest on a
session recorded on the H200 with Inductor's provenance records."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.captions import stretch_words
from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_path
from tests.texts import unescaped

ROOT = Path(__file__).resolve().parents[2]
SESSION = "h200_prov_mlp_512x256_float32.json.gz"


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "data" / SESSION, folder / SESSION)
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def test_a_kernel_row_picked_shows_the_line_it_came_from(library: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [m for m in at.markdown if "came from" in m.value]
    table = next(d for d in at.dataframe if "kernels_table_" in d.proto.id)
    key = table.proto.id.split("-", 2)[2]
    at.session_state[key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    said = [unescaped(m.value) for m in at.markdown if "came from" in m.value]
    assert len(said) == 1 and said[0].endswith("came from aten::addmm in net.0 · zoo.py:44"), said


def test_the_timeline_caption_says_how_much_the_profiler_stretched_each_mode(library: Path) -> None:
    """Issue 22: the caption under the timeline gives the Report's stretch, the one `inspect` prints."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    report = analyse(open_path(library / SESSION))
    said = [unescaped(c.value) for c in at.caption if "The dark strip above each mode's kernels" in c.value]
    assert len(said) == 1, [c.value for c in at.caption]
    assert stretch_words(report.stretch, report.latencies, [r.mode for r in report.drawable]) in said[0]
    assert f"ran {report.stretch['eager']:.1f}x as long as its timed call" in said[0]
