"""What a first visit meets on the recorded library, through AppTest (issue 22): nothing on screen contradicts
anything else, slower never looks good, and a choice made in one session is not carried into another."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.verdict import result_words
from fusionviz.charts.view_captions import view_headline
from fusionviz.records.files import open_file
from fusionviz.records.limits import read_file
from tests.servers import free_port, measuring_workers
from tests.texts import unescaped
from ui import memo, warm
from ui.background import scheduler

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MLP = "h100_mlp_512x256_float32.json.gz"  # default is slower than eager (0.61×) and adds kernels
BUSY = "h200_busy_graph_break_512x256_bfloat16.json.gz"  # tests/data: recorded beside another GPU's recording
CHAIN = "h100_pointwise_chain_256x256_float32.json.gz"  # every compiled mode faster
SWEEP = "h200_sweep_transformer_block_seq.json.gz"  # transformer_block over seq
TIMEOUT = 120


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A library of two recorded H200 sessions, the mlp one first (by name), and a shape sweep."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in (MLP, CHAIN, SWEEP):
        shutil.copy(ROOT / "sessions" / name, folder / name)
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def lab(library: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_slower_mode_is_red_and_a_faster_one_green(library: Path) -> None:
    at = lab(library)
    speedups = {m.label: m for m in at.metric if m.label.endswith("against eager")}
    slower = speedups["default against eager"]
    shown = analyse(open_file(read_file(library / MLP), MLP)).comparisons["default"]
    assert unescaped(slower.value) == result_words(shown) and slower.value.endswith("slower")
    assert slower.proto.color == Metric.MetricColor.RED
    assert slower.proto.direction == Metric.MetricDirection.DOWN
    unclear = speedups[r"reduce\-overhead against eager"]
    assert unclear.value == "no clear difference" and unclear.proto.color == Metric.MetricColor.GRAY
    at.sidebar.selectbox(key="lab_library").select(CHAIN).run()
    faster = {m.label: m for m in at.metric}["default against eager"]
    assert faster.value.endswith("faster") and faster.proto.color == Metric.MetricColor.GREEN


def test_a_recorded_sessions_load_is_a_note_under_the_headline_not_a_warning(library: Path) -> None:
    first = lab(library)
    assert not first.warning and not analyse(open_file(read_file(library / MLP), MLP)).warnings  # a quiet machine
    shutil.copy(ROOT / "tests" / "data" / BUSY, library / BUSY)
    at = lab(library)
    at.sidebar.selectbox(key="lab_library").select(BUSY).run()
    report = analyse(open_file(read_file(library / BUSY), BUSY))
    assert report.warnings  # recorded with the machine busy
    assert not at.warning, [w.value for w in at.warning]
    shown = flat(at.main)
    texts = [unescaped(e.value) if e.type in ("markdown", "caption") else "" for e in shown]
    heading = texts.index(f"### {report.headline.text}")
    note = next(i for i, (e, text) in enumerate(zip(shown, texts, strict=True))
                if e.type == "caption" and "machine was busy" in text)
    metrics = next(i for i, e in enumerate(shown) if e.type == "metric")
    assert heading < note < metrics


def flat(block: Any) -> list[Any]:
    """Every element under `block`, at any depth (the lab's desk is a container of its own), in page order."""
    found = []
    for element in block.children.values():
        found.append(element)
        if hasattr(element, "children"):
            found += flat(element)
    return found


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


def test_methodology_shows_a_recorded_naive_loop_before_anything_is_measured(library: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/2_Methodology.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="m_recorded").value == MLP  # the one session recorded with the naive loop
    report = analyse(open_file(read_file(library / MLP), MLP))
    assert report.methodology is not None and report.methodology.note
    table = next(d.value for d in at.dataframe if "naive loop" in d.value.columns)
    assert table.equals(report.methodology.shown)  # its figures as text: no "None" cell
    assert any(unescaped(m.value) == f"### {view_headline(report, 'methodology').text}" for m in at.main.markdown)
    folded = next(e for e in at.main.expander if e.label == "How far apart they are")
    assert report.methodology.note in unescaped(folded.markdown[0].value)
    assert not any("Press **Measure both ways**" in i.value for i in at.info)


def test_the_dynamic_shapes_sidebar_shows_the_sweep_on_screen(library: Path) -> None:
    sweep = open_file(read_file(library / SWEEP), SWEEP)
    assert sweep.sweep is not None and sweep.config.model == "transformer_block" and sweep.sweep.dimension == "seq"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/3_Dynamic_shapes.py").run()
    assert not at.exception and not at.error and not at.warning
    side = at.sidebar
    assert side.selectbox(key="s_model").value == "transformer_block"
    assert side.radio(key="s_dimension_transformer_block").value == "seq"
    assert (side.number_input(key="s_dim").value, side.number_input(key="s_batch").value) == (
        sweep.config.dim, sweep.config.batch)
    assert side.text_input(key="s_sizes").value == ", ".join(map(str, sweep.sweep.schedule))
    assert side.multiselect(key="s_strategies").value == [s.strategy for s in sweep.sweep.strategies]
    side.number_input(key="s_dim").set_value(32).run()  # the user's edit stays: followed once per sweep shown
    assert at.sidebar.number_input(key="s_dim").value == 32


def test_a_plain_traces_timeline_caption_speaks_of_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    trace = "h200_linear_ln_gelu_fp32_default.trace.json.gz"
    shutil.copy(ROOT / "tests" / "data" / trace, folder / trace)
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    at = lab(folder)
    (caption,) = [unescaped(c.value) for c in at.caption if "lane is the CPU" in unescaped(c.value)]
    assert caption.startswith("Each block is one trace") and "mode" not in caption and "graph break" not in caption


def test_the_warm_up_starts_with_the_server_and_the_worker_after_a_first_page(tmp_path: Path) -> None:
    """`streamlit run app.py` serves app.py's `st.App`, whose start begins the warm-up (ui/warm.py): the first
    page's modules are imported while no page has been asked for (begun at the first script run, it waited for
    a visitor, whose first chart then came 6-12 s after the page was asked for); the worker, whose torch import
    took a core from the first chart, is not started until a page has been drawn whole."""
    port = free_port()
    with (tmp_path / "streamlit.log").open("wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                   "--server.address", "localhost", "--server.headless", "true"],
                                  cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline, imported = time.monotonic() + TIMEOUT, False
            while not imported and time.monotonic() < deadline and server.poll() is None:
                time.sleep(0.5)  # pandas, which Streamlit's start leaves alone, is the lab's: its C code mapped
                imported = any("/pandas/_libs/" in m.path for m in psutil.Process(server.pid).memory_maps())
            assert imported, (tmp_path / "streamlit.log").read_text()
            assert not measuring_workers(server.pid)
            with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=10) as answer:
                assert answer.status == 200  # and it serves
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_a_switch_to_a_session_not_yet_shown_draws_what_the_warm_up_built(
        library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the compiler's warm-up has ended, the warm-up builds the desk of every other session of the picker
    (ui/warm.py): a switch to one never shown makes none of its figures in its own run."""
    at = lab(library)
    warm.start().queue_ahead()  # this test's library: the process's warm-up may have queued another test's
    assert scheduler().drain(timeout=TIMEOUT)
    made: list[str] = []
    put = memo._KEPT.put

    def counted(key: Any, value: Any) -> None:
        made.append(threading.current_thread().name)
        put(key, value)

    monkeypatch.setattr(memo._KEPT, "put", counted)
    at.sidebar.selectbox(key="lab_library").select(CHAIN).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(CHAIN in unescaped(c.value) for c in at.caption)  # the session switched to is on screen
    assert [name for name in made if name != "fusionviz-background"] == []
