"""`python -m fusionviz export` for real: PNG and SVG drawn by kaleido through Debian's chromium at slide size,
offline HTML, the animation as a GIF, and a clear error where there is no browser."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from fusionviz.analysis.report import analyse
from fusionviz.charts.collapse import collapse_animation
from fusionviz.charts.export import CHROMIUM, SLIDE_HEIGHT, SLIDE_WIDTH, gif_bytes, slide
from fusionviz.charts.style import ChartSettings
from fusionviz.cli import main
from fusionviz.records.session import Session

needs_browser = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture
def saved(tmp_path: Path, ln_gelu_session: Session) -> Path:
    return ln_gelu_session.save(tmp_path / "ln_gelu.json.gz")


@needs_browser
@pytest.mark.parametrize("view", ["latency", "timeline", "collapse"])
def test_export_writes_png_and_svg_at_slide_size(saved: Path, tmp_path: Path, view: str) -> None:
    png, svg = tmp_path / f"{view}.png", tmp_path / f"{view}.svg"
    args = ["export", str(saved), "--view", view] + (["--mode", "default"] if view != "latency" else [])
    assert main([*args, "--out", str(png)]) == 0
    assert Image.open(png).size == (SLIDE_WIDTH, SLIDE_HEIGHT)
    assert main([*args, "--format", "svg", "--out", str(svg)]) == 0
    head = svg.read_text()[:400]
    assert re.search(rf'width="{SLIDE_WIDTH}" height="{SLIDE_HEIGHT}"', head)
    assert "torch " in svg.read_text()  # the source stamp


def test_export_writes_offline_html_and_refuses_what_it_cannot_do(saved: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "scene.html"
    assert main(["export", str(saved), "--view", "animation", "--out", str(page)]) == 0
    assert "Plotly.newPlot" in page.read_text() and "<script src=" not in page.read_text()
    assert main(["export", str(saved), "--view", "latency", "--out", str(tmp_path / "x.gif")]) == 2
    assert main(["export", str(saved), "--view", "sweep_latency", "--out", str(tmp_path / "x.png")]) == 2
    assert main(["export", str(saved), "--view", "timeline", "--zoom", "9,1", "--out", str(tmp_path / "x.png")]) == 2
    errors = capsys.readouterr().err
    assert "a GIF is made of the animation view" in errors and "needs a shape-sweep session" in errors
    assert "--zoom takes from,to" in errors


def test_without_a_browser_image_export_says_so(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-browser"))
    assert main(["export", str(saved), "--view", "latency", "--out", str(tmp_path / "x.png")]) == 2
    assert "needs a Chrome or Chromium browser" in capsys.readouterr().err


@needs_browser
def test_the_animation_becomes_a_gif_that_holds_each_stage(ln_gelu_session: Session) -> None:
    settings = ChartSettings.presentation()
    fig = slide(collapse_animation(analyse(ln_gelu_session).collapses["default"], settings, steps=4),
                "CPU · torch", settings)
    gif = Image.open(io.BytesIO(gif_bytes(fig, frame_ms=80, hold_ms=900)))
    assert (gif.size, gif.n_frames) == ((SLIDE_WIDTH, SLIDE_HEIGHT), 5)
    durations = []
    for i in range(gif.n_frames):
        gif.seek(i)
        durations.append(gif.info["duration"])
    assert durations[0] == durations[-1] == 900 and 80 in durations
