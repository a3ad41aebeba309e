"""The Report: a session analysed once per content, every consumer reading the same values off it."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis import report as report_module
from fusionviz.analysis import summary, timing
from fusionviz.analysis.report import analyse
from fusionviz.charts.latency import latency_rows, metric_rows
from fusionviz.lru import LRU
from fusionviz.records.session import NaiveResult
from tests.unit.factories import k, run, session

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "h200_linear_ln_gelu_fp32_default.trace.json.gz"
EAGER = run("eager", [k("aten::mul", 0, 10, ops=("mul",), op_id=1), k("aten::add", 20, 10, ops=("add",), op_id=2),
                      k("aten::exp", 40, 10, ops=("exp",), op_id=3)])
FUSED = run("default", [k("triton_poi_fused_add_exp_mul_0", 0, 10, ops=("add", "exp", "mul"))], compile_s=2.0)
SLOW = run("max-autotune-no-cudagraphs", FUSED.kernels, compile_s=9.0)
MS = {"eager": [[0.30, 0.31, 0.29, 0.30]], "default": [[0.10, 0.10, 0.11, 0.09]],
      "max-autotune-no-cudagraphs": [[0.5, 0.5, 0.5, 0.5]]}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Reports made and the processors they run, counted from an empty cache of reports."""
    counted: Counter[str] = Counter()

    def counting(module: Any, name: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, wrapper)

    for module, name in ((summary, "comparisons"), (summary, "summary_table"), (timing, "latency_estimates"),
                         (timing, "speedup_estimates"), (report_module, "Report")):
        counting(module, name)
    monkeypatch.setattr(report_module, "_REPORTS", LRU(report_module.KEPT))  # none kept yet
    yield counted


def lab_page(shown: object) -> None:
    """The lab's sections of one session, as pages/0_Fusion_lab.py lays them out (AppTest runs this source)."""
    from fusionviz.analysis.report import analyse
    from fusionviz.charts.style import ChartSettings
    from ui import lab, sections

    report = analyse(shown)  # type: ignore[arg-type]
    sections.show_source(report)
    sections.show_trace_notes(report)
    lab.show_top(report, ChartSettings())
    lab.show_rest(report, ChartSettings())


def test_a_lab_render_analyses_its_session_once(calls: Counter[str]) -> None:
    at = AppTest.from_function(lab_page, args=(session(EAGER, FUSED, SLOW, ms=MS),), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.markdown and at.dataframe  # the verdict, the sections and their tables were drawn
    # One report made for the one session on screen, and each of its parts computed once.
    assert calls == {"Report": 1, "comparisons": 1, "summary_table": 1, "latency_estimates": 1,
                     "speedup_estimates": 1}


def test_a_rerun_of_the_lab_builds_no_chart_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui import sections

    made: Counter[str] = Counter()
    real = sections.methodology_figure

    def counted(*args: Any, **kwargs: Any) -> Any:
        made["methodology"] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(sections, "methodology_figure", counted)
    shown = session(EAGER, FUSED, ms={m: MS[m] for m in ("eager", "default")})
    shown.naive = NaiveResult(mode="default", calls=100, naive_eager_ms=1.0, naive_mode_ms=0.1, naive_speedup=10.0,
                              key_averages_rows_eager=9, key_averages_rows_mode=4)
    at = AppTest.from_function(lab_page, args=(shown,), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("naive loop" in h.value for h in at.subheader)  # the methodology section was drawn
    at.run()  # a rerun (a toggle, a click): every figure is found where the first run kept it
    assert not at.exception and made == {"methodology": 1}


def test_a_session_of_the_same_content_gets_the_same_report(calls: Counter[str]) -> None:
    shown = session(EAGER, FUSED, ms={m: MS[m] for m in ("eager", "default")})
    first = analyse(shown)
    assert analyse(shown) is first
    assert analyse(msgspec.structs.replace(shown)) is first  # rebuilt, as a grid's cell is on every rerun
    assert analyse(msgspec.structs.replace(shown, label="another")) is not first
    assert calls["Report"] == 2 and calls["comparisons"] == 0  # nothing computed before it is asked for
    assert first.comparisons is first.comparisons and calls["comparisons"] == 1


def test_a_number_under_one_label_is_one_number() -> None:
    report = analyse(session(EAGER, FUSED, SLOW, ms=MS))
    default = report.comparisons["default"]
    table = report.summary.set_index("mode")
    # The metric, the latency chart's label, the summary table and the verdict read one speedup.
    assert table.loc["default", "speedup"] == default.speedup.median
    assert latency_rows(report).set_index("mode").loc["default", "speedup"] == default.speedup.median
    assert f"{default.speedup.low:.2f}–{default.speedup.high:.2f}x" in report.verdict
    assert table.loc["default", "median_ms"] == report.latencies["default"].median == default.latency.median
    # One busy fraction: the summary's, the metrics bar's and the captions' "busy".
    busy = report.busy["eager"]
    assert busy is not None and table.loc["eager", "busy_pct"] == 100 * busy
    metrics = metric_rows(report).set_index(["mode", "metric"])
    assert metrics.loc[("eager", "busy_pct"), "value"] == 100 * busy
    assert report.caption_fields("default")["busy"] == f"{busy:.0%}"
    # One kernel table per iteration: the collapse draws the kernels the captions count.
    collapse = report.collapses["default"]
    assert collapse.eager is report.runs["eager"].kernels and collapse.compiled is report.runs["default"].kernels
    fields = report.caption_fields("default")
    assert (fields["eager_kernels"], fields["kernels"]) == (str(len(collapse.eager)), str(len(collapse.compiled)))
    assert report.caption_fields("default")["speedup"].endswith(
        f"({default.speedup.low:.2f}–{default.speedup.high:.2f}x)")


def test_inspect_of_a_plain_trace_reads_no_pandas() -> None:
    """Each part is computed when asked for: `inspect` asks for the ranking and idle time, not the tables."""
    code = ("import contextlib, io, sys\nfrom fusionviz.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['inspect', '--json', {str(TRACE)!r}])\n"
            "assert 'pandas' not in sys.modules, 'pandas was imported'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
