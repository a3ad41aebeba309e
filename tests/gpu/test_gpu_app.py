"""The fusion lab under AppTest on the GPU machine: one live GPU configuration end to end, with intervals."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.verdict import exact_words, result_words
from fusionviz.measure.catalog import REAL_MODELS, installed
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig
from scripts.check_real_models import check_run
from tests.app_pages import figures, kernels_per_mode
from tests.lab_runs import to_the_end
from tests.texts import unescaped
from ui import state
from ui.lab import interval_words

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
    to_the_end(at.sidebar.button(key="run").click().run())
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", modes=("eager", "default", "reduce-overhead"))
    session = state.results().get(SessionRun(config).key)
    assert session.environment.device_kind == "cuda" and len(session.timing.processes) == 3
    compared = analyse(session).comparisons
    for mode in ("default", "reduce-overhead"):
        metric = next(m for m in at.metric if unescaped(m.label) == f"{mode} against eager")
        assert (metric.value, metric.delta) == (result_words(compared[mode]), interval_words(compared[mode]))
        assert exact_words(compared[mode]) in metric.help
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


# Each real model of the catalogue through the lab at small sizes (as scripts/gpu_real_models.sh runs them)
LAB_SIZES: dict[str, dict[str, int]] = {
    "hf:gpt2": {"dim": 256, "layers": 2, "seq": 128}, "hf:bert": {"dim": 256, "layers": 2, "seq": 128},
    "hf:llama": {"dim": 256, "layers": 2, "seq": 128}, "hf:vit": {"dim": 256, "layers": 2, "seq": 64},
    "timm:resnet50": {"seq": 64}, "timm:convnext_tiny": {"dim": 48, "seq": 64}, "tv:resnet18": {"seq": 64},
}


@pytest.mark.parametrize("model", list(LAB_SIZES))
def test_the_lab_runs_a_real_model_with_the_kernels_of_its_trace(model: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab's widgets run the model on the GPU (batch 8, eager and default, one timing process), and the
    kernels per step on screen equal a plain JSON count of the trace the session keeps."""
    if not installed(str(REAL_MODELS[model].library)):
        pytest.skip(f"{REAL_MODELS[model].library} is not installed")
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=600).run()
    at.sidebar.selectbox(key="device").set_value("cuda:0")
    at.sidebar.selectbox(key="model").set_value(model).run()
    for setting, value in LAB_SIZES[model].items():
        at.sidebar.number_input(key=state.model_key(setting, model)).set_value(value)
    at.sidebar.select_slider(key="batch").set_value(8)
    at.sidebar.slider(key="processes").set_value(1)
    at.sidebar.multiselect(key="modes").set_value(["default"]).run()
    to_the_end(at.sidebar.button(key="run").click().run())
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    sizes = {"dim": REAL_MODELS[model].default_dim, **LAB_SIZES[model]}
    config = RunConfig(model=model, batch=8, device="cuda:0", modes=("eager", "default"), processes=1, **sizes)
    session = state.results().get(SessionRun(config).key)
    assert session.environment.device_kind == "cuda"
    timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
    plain = {run.mode: check_run(session, run, modules=False) for run in session.runs}
    assert all(not problems for _, problems in plain.values()), plain
    assert kernels_per_mode(timeline) == {run.mode: int(run.summary.kernels_per_iteration) for run in session.runs}
    memory = {run.mode: int(run.summary.memory_ops_per_iteration) for run in session.runs}
    assert kernels_per_mode(timeline, "memory") == {mode: n for mode, n in memory.items() if n}
    print(f"\n{model} through the lab:", {mode: line for mode, (line, _) in plain.items()}, "memory ops:", memory)
