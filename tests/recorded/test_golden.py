"""Golden outputs: `inspect`'s text and JSON, and the timeline's plain tables (bars, lanes, graph breaks), for the
recorded traces and sessions in tests/data and one shipped session, each compared with its file in
tests/golden after normalising what legitimately varies (kernel-name indices, paths, dates).
`pytest --update-golden` writes the files anew; review their diff before committing it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fusionviz.charts.timeline_layout import break_markers, timeline_bars, timeline_lanes
from fusionviz.cli import main
from fusionviz.records.files import open_path
from tests.conftest import DATA, ROOT

INPUTS = [*sorted(DATA.glob("*.json.gz")), ROOT / "sessions" / "h100_graph_break_512x256_float32.json.gz"]

# Inductor numbers its kernels in the order it generates them (`triton_poi_fused_add_3`, `cpp_fused_mul_0`).
KERNEL_INDEX = re.compile(r"\b((?:triton_(?:poi|red|per|tem)|cpp)_fused\w*?)_\d+\b")
# A recorded session keeps the paths of the checkout it was recorded in (`/work/main/fusionviz/zoo.py`).
CHECKOUT_PATH = re.compile(r"(?<![\w.])/(?:[\w.-]+/)+?(?=(?:fusionviz|tests|sessions)/)")
DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")


def normalised(text: str) -> str:
    """`text` with paths into a checkout (this one's, or the one a session was recorded in), dates and kernel-name
    indices written the same on every machine."""
    text = CHECKOUT_PATH.sub("", text).replace(f"{ROOT}/", "")
    return KERNEL_INDEX.sub(r"\1_N", DATE.sub("<date>", text))


def stem(path: Path) -> str:
    return path.name.removesuffix(".gz").removesuffix(".json")


def strict_json(out: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"--json wrote {constant}, which is not JSON")

    return json.loads(out, parse_constant=refuse)


@pytest.mark.parametrize("path", INPUTS, ids=stem)
def test_inspect_text(path: Path, golden: Callable[[str, str], None], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(path)]) == 0
    golden(f"{stem(path)}.inspect.txt", normalised(capsys.readouterr().out))


@pytest.mark.parametrize("path", INPUTS, ids=stem)
def test_inspect_json(path: Path, golden: Callable[[str, str], None], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(path), "--json"]) == 0
    report = strict_json(capsys.readouterr().out)
    golden(f"{stem(path)}.inspect.json", normalised(json.dumps(report, indent=1, ensure_ascii=False) + "\n"))


@pytest.mark.parametrize("path", INPUTS, ids=stem)
def test_timeline_tables(path: Path, golden: Callable[[str, str], None]) -> None:
    session = open_path(path)
    bars = timeline_bars(session)
    lanes = "\n".join(f"{lane.mode},{lane.kind},{lane.stream},{lane.y:.3f},{lane.label}"
                      for lane in timeline_lanes(session, bars))
    tables = (f"# bars\n{bars.to_csv(index=False, float_format='%.3f')}"
              f"# lanes: mode,kind,stream,y,label\n{lanes}\n"
              f"# breaks\n{break_markers(session, bars).to_csv(index=False, float_format='%.3f')}")
    golden(f"{stem(path)}.timeline.csv", normalised(tables))
