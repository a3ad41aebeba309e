"""The fusion lab under AppTest on the GPU machine: one live GPU configuration end to end, with intervals."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig
from tests.integration.test_app import figures
from tests.texts import unescaped
from ui import state

pytestmark = pytest.mark.gpu
APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_lab_runs_a_live_gpu_configuration_and_shows_intervals(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=600).run()
    at.sidebar.selectbox(key="device").set_value("cuda:0")
    at.sidebar.select_slider(key="dim").set_value(512)
    at.sidebar.select_slider(key="batch").set_value(256)
    at.sidebar.multiselect(key="modes").set_value(["default", "reduce-overhead"]).run()
    at.sidebar.button(key="run").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", modes=("eager", "default", "reduce-overhead"))
    session = state.results().get(SessionRun(config).key)
    assert session.environment.device_kind == "cuda" and len(session.timing.processes) == 3
    compared = analyse(session).comparisons
    for mode in ("default", "reduce-overhead"):
        s = compared[mode].speedup
        metric = next(m for m in at.metric if unescaped(m.label) == f"{mode} speedup")
        assert metric.delta == f"{compared[mode].verdict} ({s.low:.2f}–{s.high:.2f}×)"
    latency = figures(at)["Latency per call"]["data"][0]
    assert latency["error_x"]["type"] == "data" and "(" in latency["text"][1]
    print("\nlive GPU run through the lab:", [(m, compared[m].verdict, round(compared[m].speedup.median, 3),
                                               round(compared[m].speedup.low, 3), round(compared[m].speedup.high, 3))
                                              for m in compared])


def test_the_mode_picker_offers_eager_as_a_cuda_graph_on_a_gpu() -> None:
    at = AppTest.from_file(APP, default_timeout=600).run()
    at.sidebar.selectbox(key="device").set_value("cuda:0").run()
    picker = at.sidebar.multiselect(key="modes")
    assert "eager_cuda_graph" in picker.options
    picker.set_value(["default", "eager_cuda_graph"]).run()
    assert not at.exception and at.sidebar.multiselect(key="modes").value == ["default", "eager_cuda_graph"]
