"""What a first visit meets on the recorded library, through AppTest (issue 22): nothing on screen contradicts
anything else, slower never looks good, and a choice made in one session is not carried into another."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_file
from fusionviz.records.limits import read_file
from tests.texts import unescaped

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MLP = "h200_mlp_512x256_float32.json.gz"  # default is slower than eager (0.58×) and adds kernels
CHAIN = "h200_pointwise_chain_256x256_float32.json.gz"  # every compiled mode faster
TIMEOUT = 120


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A library of two recorded H200 sessions, the mlp one first (by name)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in (MLP, CHAIN):
        shutil.copy(ROOT / "sessions" / name, folder / name)
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def lab(library: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_slower_mode_is_red_and_a_faster_one_green(library: Path) -> None:
    at = lab(library)
    speedups = {m.label: m for m in at.metric if m.label.endswith("speedup")}
    slower = speedups["default speedup"]
    assert unescaped(slower.value) == "0.58×" and slower.proto.delta.startswith("slower")
    assert slower.proto.color == Metric.MetricColor.RED
    assert slower.proto.direction == Metric.MetricDirection.DOWN
    unclear = speedups[r"reduce\-overhead speedup"]
    assert unclear.proto.delta.startswith("no clear difference") and unclear.proto.color == Metric.MetricColor.GRAY
    at.sidebar.selectbox(key="lab_library").select(CHAIN).run()
    faster = {m.label: m for m in at.metric}["default speedup"]
    assert faster.proto.delta.startswith("faster") and faster.proto.color == Metric.MetricColor.GREEN


def test_a_recorded_sessions_load_is_a_note_under_the_verdict_not_a_warning(library: Path) -> None:
    at = lab(library)
    report = analyse(open_file(read_file(library / MLP), MLP))
    assert report.warnings  # recorded with the machine busy
    assert not at.warning, [w.value for w in at.warning]
    verdict = next(i for i, m in enumerate(at.main.children.values())
                   if getattr(m, "value", "") and unescaped(str(m.value)) == f"#### {report.verdict}")
    after = list(at.main.children.values())[verdict + 1]
    assert after.type == "caption" and "machine was busy" in unescaped(after.value)


def kernel_shown(at: AppTest) -> list[str]:
    """What the page says about one kernel picked by the user: its source, or why it has none."""
    return [unescaped(e.value) for e in [*at.markdown, *at.info]
            if "Generated source of" in e.value or "library kernel PyTorch ships" in unescaped(e.value)
            or "was not captured" in e.value]


def test_a_kernel_row_picked_in_one_session_is_not_picked_in_the_next(library: Path) -> None:
    at = lab(library)
    assert not kernel_shown(at)
    table = next(d for d in at.dataframe if "kernels_table_" in d.proto.id)
    key = table.proto.id.split("-", 2)[2]  # "$$ID-<hash>-<the page's key>"
    at.session_state[key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert kernel_shown(at)  # the row picked shows its kernel
    at.sidebar.selectbox(key="lab_library").select(CHAIN).run()
    assert not at.exception
    assert not kernel_shown(at), kernel_shown(at)  # another session: nothing picked in it yet
