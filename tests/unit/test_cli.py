"""The CLI's reporter and its plainest command: table columns as wide as their widest cell (at least the width
asked for), and the model zoo listed in aligned columns or as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.cli import COMMANDS, main
from fusionviz.cli.reporter import Column, table
from fusionviz.measure.catalog import CATALOG

ROOT = Path(__file__).resolve().parents[2]


def test_table_columns_widen_to_their_widest_cell() -> None:
    columns = [Column("n", "d", width=3), Column("share", ".1f", suffix="%"), Column("name", align="<", gap=2)]
    assert table(columns, [(7, 12.5, "a"), (1234, 100.0, "bb")], indent="  ") == [
        "     n  share  name",
        "     7  12.5%  a",
        "  1234 100.0%  bb"]
    assert table(columns, [(7, 12.5, "a")], header=False) == ["  7 12.5%  a"]


def test_models_are_listed_in_aligned_columns_and_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(CATALOG)
    assert {line.index(info.purpose) for line, info in zip(lines, CATALOG.values(), strict=True)} == {
        max(map(len, CATALOG)) + 2}
    assert lines[list(CATALOG).index("conv_block")].endswith(" [--seq: image side]")
    assert main(["models", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0] == {"name": "mlp", "purpose": CATALOG["mlp"].purpose, "seq": None}
    assert [m["name"] for m in listed] == list(CATALOG)


def test_every_command_is_offered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert all(f"    {c.name}" in out and c.help.split()[0] in out for c in COMMANDS)


@pytest.mark.parametrize("file", ["tests/data/h200_mlp_bf16_max-autotune.trace.json.gz",
                                  "sessions/h200_graph_break_512x256_float32.json.gz"])
def test_inspect_imports_no_torch_plotly_or_psutil(file: str) -> None:
    """torch alone costs 1.5-2 s; `inspect` of a trace or a session reads neither the worker's side nor charts."""
    code = ("import sys\nfrom fusionviz.cli import main\n"
            f"assert main(['inspect', {file!r}, '--json']) == 0\n"
            "assert not {'torch', 'plotly', 'psutil'} & set(sys.modules), 'imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
