"""The crossover grid on a tiny CPU grid, for real: every cell measured, readable as a table, a heat map and
a session per cell."""

from __future__ import annotations

from fusionviz.analysis.grid import cell_session, grid_table
from fusionviz.analysis.report import analyse
from fusionviz.analysis.summary import drawable_runs
from fusionviz.charts.grid import grid_figure
from fusionviz.records.session import Session


def test_grid_measures_every_cell_on_the_cpu(cpu_grid: Session) -> None:
    session = cpu_grid
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
