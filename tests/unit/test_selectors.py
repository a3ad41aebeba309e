"""ui/web/selectors.py is the one file that names Streamlit's own page: no other file of the app, its browser tests
or its benchmarks does, and the scripts use only the names it gives them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ui.web.selectors as ST

ROOT = Path(__file__).resolve().parents[2]
SELECTORS = ROOT / "ui" / "web" / "selectors.py"
CHECKED = [ROOT / "app.py", *(p for folder in ("ui", "pages", "tests", "benchmarks") for p in (ROOT / folder).rglob("*")
                             if p.suffix in (".py", ".js", ".css") and "vendor" not in p.parts
                             and not any(part.startswith(".") for part in p.relative_to(ROOT).parts))]
# What only Streamlit's page has: test ids, keyed elements' classes, its own classes and BaseWeb's attributes.
STREAMLIT = re.compile(r"data-testid|st-key-|\.st[A-Z][A-Za-z]+|data-baseweb|data-stale|\"stSidebar\"")
SCRIPTS = sorted((ROOT / "ui" / "web").glob("*.js"))


def test_no_other_file_names_streamlit_s_page() -> None:
    found = [f"{path.relative_to(ROOT)}: {line.strip()}" for path in CHECKED if path not in (SELECTORS, Path(__file__))
             for line in path.read_text().splitlines() if STREAMLIT.search(line)]
    assert not found, "Streamlit's page named outside ui/web/selectors.py:\n" + "\n".join(found)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_uses_only_the_selectors_put_in_front_of_it(path: Path) -> None:
    given = json.loads(ST.script("", PRESENTED_ONLY="")[len("const ST = "):].split(";\n", 1)[0])
    used = set(re.findall(r"\bST\.([A-Z_]+)", path.read_text()))
    assert used <= set(given), used - set(given)


def test_a_key_s_class_is_the_one_streamlit_gives_it() -> None:
    assert ST.key_class("_pres_Trace explorer") == "st-key-_pres_Trace-explorer"
    assert ST.keyed("story_next") == ".st-key-story_next" and ST.keyed_from("fv_desk_") == '[class*="st-key-fv_desk_"]'
