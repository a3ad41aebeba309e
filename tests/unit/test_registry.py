"""The registry of views, read by every door: each entry is offered by a presentation mode (the lab's or the
Dynamic shapes page's), read from a talk's scene and shown by the Story page, and drawn by export through
the CLI's --view choices, on one hand-made session that holds what every view needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.views import scene_caption, view_figure, view_problem
from fusionviz.cli import main
from fusionviz.records.session import (
    GraphNode,
    GraphProvenance,
    Grid,
    GridCell,
    MemoryEvent,
    ModeMemory,
    NaiveResult,
    OpSource,
    Session,
    StrategyRun,
    Sweep,
    SweepCall,
)
from fusionviz.records.talk import parse_talk
from tests.unit.factories import k, run, session, timing
from ui import lab, sweep_view
from ui.web.bundle import BUNDLE_TRACES

EAGER = run("eager", [k("aten::mul", 0, 10, ops=("mul",), op_id=1), k("aten::add", 20, 10, ops=("add",), op_id=2)])
EAGER.op_sources = [OpSource(op, op, "", "/m.py:3", "return x * 2 + 1") for op in ("aten::mul", "aten::add")]
FUSED = run("default", [k("triton_poi_fused_add_mul_0", 0, 10, ops=("add", "mul"))], compile_s=2.0)
FUSED.output_code = ["        # [Provenance debug handles] triton_poi_fused_add_mul_0:1\n"]
FUSED.provenance = [GraphProvenance(output_code=0, node_mappings=json.dumps(
    {"cppCodeToPost": {"triton_poi_fused_add_mul_0:1": ["mul", "add"]}, "postToPre": {"mul": ["mul"], "add": ["add"]},
     "version": 2.0}))]
FUSED.graph_nodes = [GraphNode(0, op, op, "", "/m.py:3", "return x * 2 + 1") for op in ("mul", "add")]
# each mode's memory over one iteration: eager's two intermediates, the fused kernel's one output
EAGER.memory = ModeMemory("cuda_allocator", inputs_bytes=64, held_bytes=64, peak_allocated_bytes=128, timeline=[
    MemoryEvent(1.0, 64, "aten::mul"), MemoryEvent(21.0, 64, "aten::add"), MemoryEvent(25.0, -64, "aten::mul")],
    timeline_start_bytes=64)
FUSED.memory = ModeMemory("cuda_allocator", inputs_bytes=64, held_bytes=64, peak_allocated_bytes=64, timeline=[
    MemoryEvent(1.0, 64, "triton_poi_fused_add_mul_0")], timeline_start_bytes=64)
ROOT = Path(__file__).resolve().parents[2]
MS = {"eager": [[0.30, 0.31, 0.29]], "default": [[0.10, 0.10, 0.11]]}


def _strategy(name: str) -> StrategyRun:
    calls = [SweepCall(index=i, size=size, latency_ms=ms, compiled=i == 0, compile_s=0.1 if i == 0 else 0.0)
             for i, (size, ms) in enumerate(((8, 90.0), (16, 1.0), (8, 0.8)))]
    return StrategyRun(strategy=name, calls=calls, compiles=1, steady_ms_by_size={"8": 0.8, "16": 1.0})


def everything() -> Session:
    """Runs, timing, the naive snippet, a shape sweep and a crossover grid in one session."""
    s = session(EAGER, FUSED, ms=MS)
    s.naive = NaiveResult(mode="default", calls=100, naive_eager_ms=1.0, naive_mode_ms=0.1, naive_speedup=10.0,
                          key_averages_rows_eager=9, key_averages_rows_mode=4)
    s.sweep = Sweep(dimension="batch", schedule=[8, 16, 8], strategies=[_strategy("static"), _strategy("dynamic")])
    s.grid = Grid(dims=[64], batches=[8], cells=[GridCell(dim=64, batch=8, device="cuda:0", runs=[EAGER, FUSED],
                                                          timing=timing(MS))])
    return s


SESSION = everything()
REPORT = analyse(SESSION)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("registry") / "everything.json.gz"
    SESSION.save(path)
    return path


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_view_is_reachable_from_presentation_the_story_export_and_the_cli(name: str, saved: Path,
                                                                               tmp_path: Path) -> None:
    view = VIEWS[name]
    offered = [name in lab.presented(REPORT, grid=REPORT), name in sweep_view.PRESENTED]
    assert offered.count(True) == 1, "presented by the lab or by the Dynamic shapes page, not both"
    lines = [f'session = "{saved.name}"', f'view = "{name}"']
    lines += ['mode = "default"'] if view.takes_mode else []
    lines += ["zoom = [0, 50]"] if view.zooms else []
    lines += ['caption = "{model} on {device}"'] if "model" in view.caption_fields else []
    (scene,) = parse_talk('title = "T"\n\n[[scene]]\n' + "\n".join(lines) + "\n", "t.toml", views=VIEWS).scenes
    assert view_problem(REPORT, name, scene.mode) is None  # the Story page shows it
    assert scene_caption(REPORT, None, name, scene.mode)
    out = tmp_path / f"{name}.html"
    mode = ["--mode", "default"] if view.takes_mode else []
    assert main(["export", str(saved), "--view", name, "--out", str(out), *mode]) == 0
    assert b"<title>everything.json.gz: " + name.encode() in out.read_bytes()


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_view_draws_only_trace_types_the_app_s_plotly_js_holds(name: str) -> None:
    """The browser draws with plotly.js's cartesian bundle (ui/web/bundle.py), which draws a type it lacks as a
    scatter, without a word."""
    figure = view_figure(REPORT, name, mode="default" if VIEWS[name].takes_mode else None)
    types = {trace.type for trace in figure.data} | {trace.type for frame in figure.frames for trace in frame.data}
    assert types <= BUNDLE_TRACES, types - BUNDLE_TRACES


def test_reading_the_registry_imports_neither_plotly_nor_pandas() -> None:
    """The CLI's parser takes its --view choices from the registry and starts in 0.1 s: the figures and captions
    an entry names are imported when first drawn."""
    code = ("import sys, fusionviz.cli, fusionviz.charts.registry\n"
            "assert not {'plotly', 'pandas'} & set(sys.modules), 'plotly or pandas was imported'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
