"""The Methodology page through streamlit's AppTest: the naive loop beside a real CPU measurement."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.timing import speedup_estimates
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig, default_threads
from tests.app_pages import APP, TIMEOUT, figures, no_errors
from tests.texts import unescaped
from ui import state

pytestmark = pytest.mark.usefixtures("sessions_dir")  # an empty sessions/ folder for every test (conftest.py)


def test_methodology_page_puts_naive_next_to_proper() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/2_Methodology.py").run()
    no_errors(at)
    at.number_input(key="m_dim").set_value(32)
    at.number_input(key="m_batch").set_value(8)
    at.number_input(key="m_calls").set_value(20)
    at.button(key="m_run").click().run()
    no_errors(at)
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, modes=("eager", "default"), processes=3,
                       threads=default_threads())
    session = state.results().get(SessionRun(config).key)
    # every figure as text, a count's missing spread a dash: the raw table showed "None" cells
    table = next(d.value for d in at.dataframe if "naive loop" in d.value.columns)
    assert table["every process"][0] == f"{analyse(session).comparisons['default'].speedup.median:.2f}x"
    assert table["one process"][0] == f"{speedup_estimates(session, 0)['default'].median:.2f}x"
    assert table["every process"][3] == f"{session.run('eager').summary.kernels_per_iteration:g}"
    assert float(table["naive loop"][3]) >= float(table["every process"][3])  # key_averages() rows: CPU ops too
    assert not table.isin(["None", "nan"]).any().any() and table["every process, p10–p90"][3] == "—"
    assert any(unescaped(m.value).startswith("### Naive loop: ") for m in at.main.markdown)  # its headline first
    assert "Naive loop vs proper measurement" in figures(at)
