"""Files from anyone, through the real pages (AppTest): text from a file renders literally, never as markdown
(an image link would be fetched by every viewer's browser), and a broken file in sessions/ is skipped with a
notice while every page still works."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.texts import unescaped

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MARKUP = "![x](http://example.invalid/x.png) **bold** :red[red] $x^2$ <b>b</b>"
ESCAPED = r"\!\[x\]\(http\:\/\/example\.invalid\/x\.png\)"


def hostile_session() -> dict[str, Any]:
    """A recorded H200 session whose names and texts carry markdown: a mode, the model, the GPU's name, a
    failed mode's error."""
    data = json.loads(gzip.decompress((ROOT / "sessions/h100_graph_break_512x256_float32.json.gz").read_bytes()))
    mode = "default " + MARKUP
    data["runs"][1]["mode"] = mode
    for process in data["timing"]["processes"]:
        process["rounds"] = [{mode if k == "default" else k: v for k, v in r.items()} for r in process["rounds"]]
        process["calls_per_round"] = {mode if k == "default" else k: v for k, v in process["calls_per_round"].items()}
    data["config"]["model"] = "graph_break " + MARKUP
    data["environment"]["device_name"] = "H200 " + MARKUP
    data["runs"].append({"mode": "max-autotune", "status": "error", "error": "it broke: " + MARKUP})
    return data


def texts(at: AppTest) -> list[str]:
    """Every piece of text the page rendered as markdown: messages, captions, headers, labels."""
    found = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "subheader", "header")
             for e in at.get(kind)]
    found += [m.label for m in at.metric] + [e.label for e in at.expander]
    return [str(t) for t in found]


@pytest.fixture()
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "hostile.json").write_text(json.dumps(hostile_session()))
    (folder / "broken.json").write_text(json.dumps({"kind": "fusionviz.session", "schema_version": 2,
                                                    "config": None, "runs": "kernels"}))
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def assert_literal(at: AppTest) -> int:
    assert not at.exception, [e.value for e in at.exception]
    shown = [t for t in texts(at) if "example.invalid" in unescaped(t)]
    for text in shown:
        assert "![x](" not in text and ESCAPED in text, text
    return len(shown)


def test_text_from_a_file_renders_literally_in_the_lab(sessions: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert any("broken.json could not be opened" in unescaped(w.value) and "config" in w.value for w in at.warning)
    assert assert_literal(at) >= 5  # the verdict, the configuration, the source, the failed mode, metrics


def test_text_from_a_file_renders_literally_in_the_trace_explorer(sessions: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/1_Trace_explorer.py").run()
    at.selectbox(key="a_recorded").set_value(sessions / "hostile.json").run()
    assert assert_literal(at) >= 3
    at.selectbox(key="a_recorded").set_value(sessions / "broken.json").run()
    assert not at.exception
    assert any("this session file is damaged: config" in unescaped(e.value) for e in at.error)


def test_a_broken_file_in_sessions_leaves_every_page_working(sessions: Path) -> None:
    for page in ("pages/2_Methodology.py", "pages/3_Dynamic_shapes.py", "pages/4_Story.py"):
        at = AppTest.from_file(APP, default_timeout=120)
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
