"""Story mode and the lab's sources through AppTest, on sessions made on the CPU: the default talk stepped
forward and back, a bad talk refused with its line, a library session and a user's pair of traces in the lab."""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
import threading
from pathlib import Path

import msgspec
import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.view_captions import view_headline
from fusionviz.records.session import Grid, GridCell, Session
from fusionviz.records.talk import load_talk
from tests.app_pages import APP, TIMEOUT, figures, kernels_per_mode, no_errors
from tests.texts import unescaped
from ui import story, warm
from ui.background import Priority, scheduler

DEFAULT_TALK = Path(APP).parent / "talks" / "fusion_story.toml"
STORY = "pages/4_Story.py"


@pytest.fixture
def talk_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ln_gelu_session: Session,
                 small_sweep: Session) -> Path:
    """A library holding every session the default talk names that a CPU can make: the CPU LayerNorm + GELU
    session under each mode-run name, the CPU sweep under the sweep's name; the grid stays missing."""
    folder = tmp_path / "library"
    folder.mkdir()
    ln_gelu_session.save(folder / "ln_gelu.json.gz")
    small_sweep.save(folder / "sweep.json.gz")
    for scene in load_talk(DEFAULT_TALK, views=VIEWS).scenes:
        if scene.view != "grid":
            shutil.copy(folder / ("sweep.json.gz" if scene.view.startswith("sweep") else "ln_gelu.json.gz"),
                        folder / scene.session)
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def heading(at: AppTest) -> str:
    return next(unescaped(m.value) for m in at.markdown if m.value.startswith("### "))


def captions(at: AppTest) -> list[tuple[str, str]]:
    """Each scene headline on the page (`story.headline_html`): its text and the line under it."""
    found = []
    for element in at.get("html"):
        parts = re.findall(r"<div data-fv-(?:headline|line)[^>]*>(.*?)</div>", element.value)  # spans in them
        if parts:
            found.append(tuple(html.unescape(re.sub(r"<[^>]+>", "", part)) for part in parts[:2]))
    return found


def threads_building_views(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread of every story view built from now on."""
    built: list[str] = []
    view_figure = story.view_figure

    def counted(*args: object, **kwargs: object) -> object:
        built.append(threading.current_thread().name)
        return view_figure(*args, **kwargs)

    monkeypatch.setattr(story, "view_figure", counted)
    return built


def test_a_step_forward_draws_the_scene_built_ahead(talk_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next scene's figure is built once the run that showed a scene has ended, so the step's run draws it
    from memory."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(STORY).run()
    no_errors(at)
    assert scheduler().drain(Priority.STORY, TIMEOUT)  # the scenes queued ahead are built
    built = threads_building_views(monkeypatch)
    at.button(key="story_next").click().run()
    no_errors(at)
    assert heading(at).startswith("### 2 / ")
    assert [name for name in built if name != "fusionviz-background"] == []


def test_the_story_opens_and_takes_its_first_step_on_scenes_the_warm_up_built(
        talk_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the compiler's warm-up has ended, the warm-up builds the default talk's first two scenes
    (ui/warm.py): neither the page switch to the Story nor its first step, pressed at once, builds a figure."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    warm.start().queue_ahead()  # this test's library: the process's warm-up may have queued another test's
    assert scheduler().drain(timeout=TIMEOUT)
    built = threads_building_views(monkeypatch)
    at.switch_page(STORY).run()
    at.button(key="story_next").click().run()
    no_errors(at)
    assert heading(at).startswith("### 2 / ")
    assert [name for name in built if name != "fusionviz-background"] == []


def test_story_steps_through_the_default_talk_forward_and_back(talk_library: Path,
                                                                 ln_gelu_session: Session) -> None:
    talk = load_talk(DEFAULT_TALK, views=VIEWS)
    n = len(talk.scenes)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(STORY).run()
    no_errors(at)
    for i, scene in enumerate(talk.scenes):
        assert heading(at) == f"### {i + 1} / {n} · {scene.title}"
        assert not at.exception, (scene.title, [e.value for e in at.exception])
        if scene.view == "grid":  # no grid recorded on a CPU: the scene says so, naming its line
            assert any(f"line {scene.lines['session']}" in unescaped(w.value) for w in at.warning)
        elif scene.view == "methodology":  # the CPU session has no naive snippet
            assert any("naive" in unescaped(w.value) for w in at.warning)
        else:
            assert captions(at), scene.title
        if scene.caption is not None:  # the scene's template, under its view's headline
            fields = analyse(ln_gelu_session).caption_fields(scene.mode)
            assert captions(at)[0] == (view_headline(analyse(ln_gelu_session), scene.view, scene.mode).text,
                                       scene.caption.format(**fields))
        if i == 0:  # the pointwise chain's timeline, here the CPU session: eager and default only
            headline = view_headline(analyse(ln_gelu_session), "timeline", "default")
            assert captions(at) == [(headline.text, headline.mechanism)]
            timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
            assert kernels_per_mode(timeline) == {"eager": 3, "default": 2}
            # recorded, not live, and named by its file
            assert timeline["layout"]["title"]["subtitle"]["text"].startswith(f"{scene.session} · CPU · torch ")
        if i < n - 1:
            at.button(key="story_next").click().run()
    assert at.button(key="story_next").disabled
    # this library holds one CPU session under every name: the talk draws its configuration from many files
    assert any("keep one recording per configuration" in unescaped(c.value) for c in at.sidebar.caption)
    for i in reversed(range(n - 1)):
        at.button(key="story_back").click().run()
        assert heading(at).startswith(f"### {i + 1} / {n} · ")
    assert at.button(key="story_back").disabled
    at.sidebar.radio(key="story_pick").set_value(3).run()
    assert heading(at) == f"### 4 / {n} · {talk.scenes[3].title}"


def test_a_bad_talk_is_refused_with_its_line(talk_library: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(STORY).run()
    bad = b'title = "Mine"\n\n[[scene]]\nsession = "x.json.gz"\nview = "timelime"\n'
    at.sidebar.file_uploader(key="story_upload").set_value(("mine.toml", bad, "text/plain")).run()
    assert not at.exception
    assert any("mine.toml, line 5: unknown view 'timelime'" in unescaped(e.value) for e in at.error)


def test_the_lab_opens_any_library_session_and_shows_its_configuration(tmp_path: Path, ln_gelu_session: Session,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "library"
    folder.mkdir()
    ln_gelu_session.save(folder / "a_ln_gelu.json.gz")
    bigger = msgspec.structs.replace(ln_gelu_session,
                                     config=dataclasses.replace(ln_gelu_session.config, dim=64, batch=16))
    bigger.save(folder / "b_ln_gelu_64x16.json.gz")
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert at.sidebar.selectbox(key="lab_library").options == ["a_ln_gelu.json.gz", "b_ln_gelu_64x16.json.gz"]
    assert (at.sidebar.select_slider(key="dim").value, at.sidebar.select_slider(key="batch").value) == (32, 8)
    at.sidebar.selectbox(key="lab_library").set_value("b_ln_gelu_64x16.json.gz").run()
    no_errors(at)
    # The sidebar shows what is on screen, and the measuring widgets follow it.
    assert any("dim 64 · batch 16" in unescaped(m.value) for m in at.sidebar.markdown)
    assert (at.sidebar.select_slider(key="dim").value, at.sidebar.select_slider(key="batch").value) == (64, 16)
    assert any("Recorded library: b_ln_gelu_64x16.json.gz" in unescaped(c.value) for c in at.caption)
    kernels = next(m for m in at.metric if m.label == "default kernels / iteration")
    assert (kernels.value, kernels.delta) == ("2", "-1 vs eager")


def test_the_lab_opens_a_users_pair_of_traces_without_timing(tmp_path: Path, ln_gelu_session: Session,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.radio(key="lab_source").set_value("Your eager + compiled traces").run()
    at.sidebar.file_uploader(key="lab_trace_eager").set_value(
        ("eager.pt.trace.json", ln_gelu_session.run("eager").chrome_trace(), "application/json"))
    at.sidebar.file_uploader(key="lab_trace_compiled").set_value(
        ("compiled.pt.trace.json", ln_gelu_session.run("default").chrome_trace(), "application/json")).run()
    no_errors(at)
    assert any("Your torch.profiler traces: eager.pt.trace.json + compiled.pt.trace.json" in unescaped(c.value)
               for c in at.caption)
    said = [unescaped(m.value) for m in at.markdown]
    assert "### 3 eager kernels become 2 under default, untimed" in said
    assert "Plain traces carry no timing outside the profiler, so no speedup is claimed." in said
    assert any("No latency bars" in unescaped(i.value) for i in at.info)
    figs = figures(at)
    assert "Latency per call" not in figs
    assert kernels_per_mode(figs["Kernel timeline: one steady iteration per mode"]) == {"eager": 3, "default": 2}
    assert any(title.startswith("default: 3 eager kernels collapse into 2") for title in figs)
    at.toggle(key="_pres_Fusion lab").set_value(True).run()
    at.radio(key="present_view").set_value("latency").run()
    assert any("carries no timing" in unescaped(i.value) for i in at.info)


def test_the_lab_shows_a_crossover_grid_and_any_cell_of_it(tmp_path: Path, ln_gelu_session: Session,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cells = [GridCell(dim=d, batch=8, device="cpu", runs=ln_gelu_session.runs, timing=ln_gelu_session.timing)
             for d in (32, 64)]
    grid = msgspec.structs.replace(ln_gelu_session, runs=[], timing=None,
                               grid=Grid(dims=[32, 64], batches=[8], cells=cells),
                               config=dataclasses.replace(ln_gelu_session.config, modes=("eager", "default")))
    grid.save(tmp_path / "grid.json.gz")
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    heat = next(spec for title, spec in figures(at).items() if title.startswith("Where default pays off"))
    assert heat["data"][0]["customdata"][0][1] == [64, 8]  # a click hands the cell to the picker
    assert any("dims 32, 64 × batches 8" in unescaped(m.value) for m in at.sidebar.markdown)
    assert any(s.value == "Cell: dim 32 × batch 8" for s in at.subheader)
    at.sidebar.selectbox(key="lab_cell").set_value((64, 8)).run()
    no_errors(at)
    assert any(s.value == "Cell: dim 64 × batch 8" for s in at.subheader)
    assert "Kernel timeline: one steady iteration per mode" in figures(at)
    at.toggle(key="_pres_Fusion lab").set_value(True).run()
    no_errors(at)  # the presentation's heat map beside the desk's: two keys
    assert at.radio(key="present_view").options[0] == "Grid"


def test_a_users_own_model_is_offered_only_when_the_operator_allows_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert "your own model…" not in at.sidebar.selectbox(key="model").options
    monkeypatch.setenv("FUSIONVIZ_ALLOW_OWN_MODELS", "1")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value("your own model…").run()
    no_errors(at)
    assert at.sidebar.text_input(key="own_model").label.startswith("Your model: package.module:factory")


def test_the_sidebar_names_each_scene_whose_session_is_not_in_the_library(talk_library: Path) -> None:
    """The fixture's library holds every session of the default talk but the grid's."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(STORY).run()
    grid = next(s for s in load_talk(DEFAULT_TALK, views=VIEWS).scenes if s.view == "grid")
    missing = [unescaped(c.value) for c in at.sidebar.caption if "is not in the library" in unescaped(c.value)]
    assert missing == [f"fusion_story.toml, {grid.where('session')}: {grid.session} is not in the library"]
