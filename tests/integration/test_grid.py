"""The crossover grid on a tiny CPU grid, for real: every cell measured, readable as a table, a heat map and
a session per cell."""

from __future__ import annotations

from pathlib import Path

from fusionviz.analysis.grid import cell_session, grid_table
from fusionviz.analysis.report import analyse
from fusionviz.analysis.summary import drawable_runs
from fusionviz.charts.grid import grid_figure
from fusionviz.cli import main
from fusionviz.records.session import Session


def test_grid_measures_every_cell_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "grid.json.gz"
    assert main(["grid", "--model", "pointwise_chain", "--dims", "16,32", "--batches", "4,8", "--devices", "cpu",
                 "--device", "cpu", "--mode", "default", "--rounds", "3", "--processes", "1", "--out", str(out)]) == 0
    session = Session.load(out)
    assert session.grid is not None and (session.grid.dims, session.grid.batches) == ([16, 32], [4, 8])
    table = grid_table(session)
    assert [(d, b) for d, b in zip(table.dim, table["batch"], strict=True)] == [(16, 4), (32, 4), (16, 8), (32, 8)]
    assert set(table.verdict) <= {"faster", "slower", "no clear difference"}
    assert (table.eager_kernels > table.kernels).all()  # the chain fuses in every cell
    one = cell_session(session, 32, 8)
    assert (one.config.dim, one.config.batch) == (32, 8)
    assert [r.mode for r in drawable_runs(one)] == ["eager", "default"]
    heat = grid_figure(analyse(session)).data[0]
    assert len(heat.z) == 2 and len(heat.z[0]) == 2 and list(heat.customdata[1][1]) == [32, 8]
