"""The one-way flow, checked: no layer imports a layer above it, the backend never imports streamlit,
analysis never imports plotly, the viewing side never imports torch, the app reaches the measuring side
through its run service alone, and the browser side (ui/web) through its one door."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fusionviz"

# What each layer may import from fusionviz (besides itself, the foundations below and the package root).
ALLOWED: dict[str, set[str]] = {
    "records": set(),
    "measure": {"records"},
    "analysis": {"records"},
    "charts": {"records", "analysis"},
    "cli": {"records", "measure", "analysis", "charts"},  # charts for `export` only
}
FOUNDATIONS = {"errors", "lru"}  # the one error type and the one bounded cache type, for every layer
# Third-party packages a layer must never import.
FORBIDDEN: dict[str, set[str]] = {
    "records": {"streamlit", "plotly", "torch"},
    "measure": {"streamlit", "plotly"},
    "analysis": {"streamlit", "plotly", "torch"},
    "charts": {"streamlit", "torch"},
    "cli": {"streamlit", "plotly"},
}
# The caller's side of `measure`: it runs in the app's and the CLI's process, so it imports no torch.
TORCH_FREE_MEASURE = {"catalog", "protocol", "worker", "client", "grid", "queue", "service", "ray_grid"}
# What the app (app.py, pages/, ui/) may import of `measure`: the model catalogue and the run service.
MEASURE_DOORS = {"catalog", "service"}
APP_MODULES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]
WEB = ROOT / "ui" / "web"  # the browser side: the rest of the app imports `ui.web` alone
WEB_MODULES = sorted(WEB.glob("*.py"))


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports; `from m import x` also as `m.x` where x is one of this project's modules or
    packages."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {name for name in (f"{node.module}.{alias.name}" for alias in node.names)
                      if (ROOT / name.replace(".", "/")).with_suffix(".py").is_file()
                      or (ROOT / name.replace(".", "/") / "__init__.py").is_file()}
    return found


def layer_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if layer_of(p) in ALLOWED)


def test_every_module_belongs_to_a_layer() -> None:
    stray = [p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py")
             if layer_of(p) not in ALLOWED and p.name not in ("__init__.py", "__main__.py")
             and p.stem not in FOUNDATIONS]
    assert not stray, f"modules outside the layers: {stray}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_one_way(path: Path) -> None:
    layer = layer_of(path)
    for name in imports_of(path):
        top = name.split(".")[0]
        assert top not in FORBIDDEN[layer], f"{layer} must not import {top}"
        if layer == "measure" and path.stem in TORCH_FREE_MEASURE:
            assert top != "torch", f"measure.{path.stem} runs in the caller's process: no torch"
        if top == "fusionviz" and name.count(".") >= 1:
            target = name.split(".")[1]
            if target not in FOUNDATIONS | {layer}:
                assert target in ALLOWED[layer], f"{layer} imports {target}, a layer it must not depend on"


@pytest.mark.parametrize("name", sorted(FOUNDATIONS))
def test_the_foundations_stand_on_the_standard_library_alone(name: str) -> None:
    tops = {n.split(".")[0] for n in imports_of(PACKAGE / f"{name}.py")}
    assert tops <= set(sys.stdlib_module_names) | {"__future__"}, f"{name} imports {tops}"


def test_ray_is_imported_by_its_executor_alone() -> None:
    """Ray is an optional extra: one module imports it, and only when a grid asks for it (inside functions)."""
    everything = [*PACKAGE.rglob("*.py"), *APP_MODULES]
    importers = [p.relative_to(ROOT) for p in everything if "ray" in {n.split(".")[0] for n in imports_of(p)}]
    assert importers == [Path("fusionviz/measure/ray_grid.py")]
    body = ast.parse((PACKAGE / "measure" / "ray_grid.py").read_text()).body
    assert "ray" not in {a.name.split(".")[0] for node in body if isinstance(node, ast.Import) for a in node.names}


def test_ui_and_pages_import_no_torch() -> None:
    for path in APP_MODULES:
        assert "torch" not in {n.split(".")[0] for n in imports_of(path)}, path


@pytest.mark.parametrize("path", APP_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_reaches_the_measuring_side_through_its_run_service_alone(path: Path) -> None:
    reached = {name.split(".")[2] for name in imports_of(path) if name.startswith("fusionviz.measure.")}
    assert reached <= MEASURE_DOORS, f"{path.name} imports measure.{reached - MEASURE_DOORS}"


@pytest.mark.parametrize("path", [p for p in APP_MODULES if WEB not in p.parents],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_reaches_the_browser_side_through_its_door(path: Path) -> None:
    """`ui.web` alone, never one of its modules: what is behind the door may change without a page knowing."""
    behind = sorted(name for name in imports_of(path) if name.startswith("ui.web."))
    assert not behind, f"{path.name} imports {behind}: use `from ui import web`"


@pytest.mark.parametrize("path", WEB_MODULES, ids=lambda p: p.name)
def test_the_browser_side_imports_nothing_of_the_app(path: Path) -> None:
    """ui/web stands on Streamlit, Plotly and the bounded cache alone: the pages register into it (routes.py)."""
    ours = {n for n in imports_of(path) if n.split(".")[0] in ("ui", "fusionviz", "pages", "app")}
    assert {n for n in ours if not n.startswith("ui.web") and n != "fusionviz.lru"} == set()


def test_the_middleware_depends_on_no_page_code() -> None:
    """The server's middleware, and everything it imports, import no page code and no streamlit."""
    seen, todo = set(), ["ui.web.middleware"]
    while todo:
        module = todo.pop()
        seen.add(module)
        path = (ROOT / module.replace(".", "/")).with_suffix(".py")
        todo += [n for n in imports_of(path) if n.startswith("ui.") and n not in seen]
    assert seen == {"ui.web.middleware", "ui.web.bundle", "ui.web.routes"}
    for module in seen:
        assert "streamlit" not in {n.split(".")[0] for n in imports_of((ROOT / module.replace(".", "/")).with_suffix(
            ".py"))}, module


def test_the_viewing_side_opens_without_torch_at_run_time() -> None:
    """Importing everything a recorded session needs (and the app's own modules) loads no torch."""
    code = ("import sys, fusionviz.cli, fusionviz.records.files, fusionviz.measure.service, ui.backend, ui.sections, "
            "ui.lab, ui.sweep_view, ui.story, ui.on_screen\n"
            "import fusionviz.analysis.verdict, fusionviz.charts.timeline, fusionviz.charts.collapse, "
            "fusionviz.charts.views, fusionviz.charts.export\n"
            "assert 'torch' not in sys.modules, 'torch was imported'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
