"""The headline grammar and the one classification of a mode, on hand-made sessions: the rule's three answers,
the budgets, the rounding, and each wording bug of issue 45 as a test that would have caught it."""

from __future__ import annotations

import dataclasses
import re

import msgspec
import pytest

from fusionviz.analysis.bound import bound_sentence, bounds, classify
from fusionviz.analysis.headline import Headline, rate_words, read_size, sentences, sig, times, word_count
from fusionviz.analysis.methodology import NONE, methodology
from fusionviz.analysis.report import analyse
from fusionviz.analysis.sentences import load_warnings
from fusionviz.records.session import MachineLoad, NaiveResult, Session
from tests.unit.factories import cpu, k, run, session

# Terms that put a mode in a class: the three of the classification, and the words the verdict used before it
CLASS_TERMS = ("host-bound", "device-bound", "balanced", "launch-bound", "kernels dominate", "host work dominate")


def _run(mode: str, kernels: int, kernel_us: float, host_us: float) -> object:
    """`kernels` kernels of `kernel_us` each, the profiled host done launching them at `host_us`."""
    rows = [k(f"kernel_{i}", 20.0 * i, kernel_us) for i in range(kernels)]
    return run(mode, rows, step_us=host_us + 10, compile_s=1.0,
               cpu_ops=[cpu("aten::mm", "op", 0.0, host_us / 2), cpu("cudaLaunchKernel", "launch", host_us - 2, 2.0)])


EAGER = _run("eager", 18, 40.0, 60.0)  # 720 µs of kernels
FUSED = _run("default", 1, 40.0, 70.0)  # one kernel of 40 µs
GRAPHS = _run("reduce-overhead", 2, 20.0, 50.0)
TUNED = _run("max-autotune-no-cudagraphs", 1, 40.0, 70.0)


def with_host(s: Session, host_ms: dict[str, list[float]]) -> Session:
    """`s` with the timing loop's host time per call, `host_ms[mode]` one value a round of its first process."""
    assert s.timing is not None
    rounds = len(next(iter(host_ms.values())))
    s.timing.processes[0].host_rounds = [{m: v[r] for m, v in host_ms.items()} for r in range(rounds)]
    return s


def test_the_rule_has_three_answers_and_none_without_a_device() -> None:
    assert classify(40.0, 60.0, 40.0, on_device=True) == "host-bound"  # even the fastest rounds take the GPU's time
    assert classify(10.0, 39.9, 40.0, on_device=True) == "device-bound"  # even the slowest rounds take less
    assert classify(30.0, 40.0, 40.0, on_device=True) == "balanced"  # the rounds straddle the GPU's time
    assert classify(500.0, 600.0, 1.0, on_device=False) is None  # the CPU runs its kernels itself


def test_a_host_whose_rounds_straddle_the_gpu_is_balanced_and_says_its_spread() -> None:
    ms = {"eager": [[0.80] * 10], "default": [[0.08] * 10]}
    hosts = {"eager": [0.2] * 10, "default": [0.030 + 0.002 * i for i in range(10)]}
    s = with_host(session(EAGER, FUSED, ms=ms), hosts)
    found = bounds(s)["default"]
    # host 30..48 µs a round against the kernel's 40 µs: p10 31.8, p90 46.2
    assert (found.kind, found.host_low, found.host_high) == ("balanced", pytest.approx(31.8), pytest.approx(46.2))
    assert bound_sentence(found) == ("default is balanced: 39 µs of host work per call (31.8–46.2 µs, p10–p90) "
                                     "against 40 µs of GPU time.")
    assert bounds(s)["eager"].kind == "device-bound"  # 200 µs of host work against 720 µs of kernels


def test_a_busy_gpu_and_a_slower_host_are_one_class_not_two() -> None:
    """Issue 45: default was "the kernels dominate" (busy 52%) and "host-bound" (78 µs of host work against 40 µs of
    GPU time) in one breath. Here the GPU is busy 50% of default's call and the host is slower in every round."""
    ms = {"eager": [[0.80] * 10], "default": [[0.08] * 10]}
    report = analyse(with_host(session(EAGER, FUSED, ms=ms), {"eager": [0.2] * 10, "default": [0.078] * 10}))
    assert report.busy["default"] == pytest.approx(0.5)
    assert report.bounds["default"].kind == "host-bound"
    said = [report.headline.text, report.headline.mechanism, *report.headline.details]
    for sentence in (s for text in said for s in sentences(text)):
        assert sum(term in sentence.lower() for term in CLASS_TERMS) <= 1, sentence
    assert report.headline.mechanism == "Host-bound: 78 µs of host work per call, 40 µs of GPU time."
    assert ("default is host-bound: 78 µs of host work per call against 40 µs of GPU time, so the GPU is busy 50% "
            "of the call.") in report.headline.details


def test_numbers_are_rounded_for_reading_in_the_headline() -> None:
    assert [times(x) for x in (9.96, 10.32, 1.64, 0.554, 1.04, 1.2)] == ["10x", "10x", "1.6x", "0.55x", "1.04x",
                                                                         "1.2x"]
    assert [rate_words(x) for x in (10.0, 0.55, 0.95)] == ["10x faster", "1.8x slower", "1.05x slower"]
    assert [read_size(x) for x in (2.89e9, 134e6, 262e3, 512)] == ["2.9 GB", "130 MB", "260 kB", "510 B"]
    assert [sig(x) for x in (4297, 19778, 0.26, 696.2)] == ["4,300", "20,000", "0.26", "700"]


def test_the_budgets_count_words_read_aloud() -> None:
    text = "default: 10x faster. 18 kernels became 1, 2.9 GB → 130 MB moved"
    assert word_count(text) == 12 and Headline(text, "Host-bound: 78 µs of host work per call.").problems() == []
    long = Headline(text + " today", "x" * 91 + ". Two sentences.")
    assert len(long.problems()) == 3


def test_one_figure_one_precision_in_each_block() -> None:
    """Issue 45: "default is 10x faster ... default is 10.00x" in one paragraph. The headline reads 10x; the
    details give 10.00x once, with its interval, and never the rounded figure."""
    ms = {"eager": [[0.80] * 10], "default": [[0.08] * 10]}
    report = analyse(session(EAGER, FUSED, ms=ms))
    headline = report.headline
    assert headline.text.startswith("default: 10x faster. 18 kernels became 1")
    details = " ".join(headline.details)
    assert details.count("10.00x (") == 1 and not re.search(r"\b10x\b", details)


def test_replays_agrees_with_its_subject() -> None:
    """Issue 45: "reduce-overhead replay CUDA graphs", in the verdict of every real-model run."""
    ms = {"eager": [[0.80] * 10], "default": [[0.90] * 10], "reduce-overhead": [[0.40] * 10]}
    hosts = {"eager": [0.9] * 10, "default": [0.9] * 10, "reduce-overhead": [0.3] * 10}
    one = analyse(with_host(session(EAGER, FUSED, GRAPHS, ms=ms), hosts)).verdict
    assert "reduce-overhead replays CUDA graphs, which take eager's launches off the host." in one
    tuned = msgspec.structs.replace(GRAPHS, mode="max-autotune")
    two = analyse(with_host(session(EAGER, FUSED, GRAPHS, tuned, ms=ms | {"max-autotune": ms["reduce-overhead"]}),
                            hosts | {"max-autotune": [0.3] * 10})).verdict
    assert "reduce-overhead and max-autotune replay CUDA graphs" in two


def test_modes_no_round_tells_apart_are_tied() -> None:
    """Issue 45: "Fastest: max-autotune-no-cudagraphs" while its 8.78–12.30x overlapped default's 8.67–12.19x."""
    eager = [[0.60, 0.80, 1.00, 0.70, 0.90, 0.65, 0.85, 0.95, 0.75, 0.80]]
    near = [[0.080, 0.081, 0.079, 0.080, 0.081, 0.080, 0.079, 0.080, 0.081, 0.080]]
    tied = analyse(session(EAGER, FUSED, TUNED, ms={"eager": eager, "default": [[0.080] * 10],
                                                    "max-autotune-no-cudagraphs": near}))
    assert tied.fastest == ["default", "max-autotune-no-cudagraphs"] or tied.fastest == [
        "max-autotune-no-cudagraphs", "default"]
    assert "Fastest, tied: " in tied.verdict
    from fusionviz.charts.view_captions import view_headline

    assert view_headline(tied, "latency").text.startswith("Fastest, tied: ")
    # intervals against eager that overlap, but max-autotune-no-cudagraphs 10% faster in every round: not tied
    apart = analyse(session(EAGER, FUSED, TUNED, ms={"eager": eager, "default": [[0.080] * 10],
                                                     "max-autotune-no-cudagraphs": [[0.072] * 10]}))
    low, high = apart.comparisons["default"].speedup, apart.comparisons["max-autotune-no-cudagraphs"].speedup
    assert low.low <= high.high and high.low <= low.high  # the intervals overlap
    assert apart.fastest == ["max-autotune-no-cudagraphs"]
    assert "Fastest: max-autotune-no-cudagraphs; " in apart.verdict


def test_one_thread_is_one_thread() -> None:
    """Issue 45: "the workers' 1 threads"."""
    s = session(EAGER, FUSED, ms={"eager": [[0.8] * 3], "default": [[0.1] * 3]}, device_kind="cpu")
    s.config = dataclasses.replace(s.config, threads=1)
    assert s.timing is not None
    s.timing.load_before = MachineLoad(cores=2, load_average=1.5, busy_cores=1.2, others=["chromium (42): 1.2 cores"])
    (note,) = load_warnings(s)
    assert "the workers' one thread did not have a core of its own" in note and "1 threads" not in note


def test_methodology_shows_a_dash_where_a_count_has_no_spread() -> None:
    """Issue 45: Methodology showed raw "None" cells."""
    naive = NaiveResult(mode="default", calls=100, naive_eager_ms=1.0, naive_mode_ms=0.1, naive_speedup=10.0,
                        key_averages_rows_eager=9, key_averages_rows_mode=4)
    s = session(EAGER, FUSED, ms={"eager": [[0.8] * 3, [0.8] * 3], "default": [[0.1] * 3, [0.1] * 3]})
    report = analyse(s)
    found = methodology(s, report.latencies, report.speedups, naive)
    assert found is not None
    cells = found.shown.to_numpy().ravel().tolist()
    assert all(isinstance(c, str) and c not in ("None", "nan") for c in cells)
    assert list(found.shown.iloc[3]) == ["eager, kernels", "9", "18", NONE, "18", NONE]
    assert list(found.shown.iloc[0])[1:3] == ["10.00x", "8.00x"]


def test_every_view_of_a_cpu_session_has_a_headline_within_its_budgets() -> None:
    """On the CPU no mode has a class: no view says one, and none breaks the grammar's budgets."""
    from fusionviz.charts.registry import VIEWS
    from fusionviz.charts.view_captions import view_headline
    from fusionviz.charts.views import view_problem

    ms = {"eager": [[0.80] * 5, [0.82] * 5], "default": [[0.40] * 5, [0.41] * 5]}
    report = analyse(session(EAGER, FUSED, ms=ms, device_kind="cpu"))
    assert report.bounds["default"].kind is None
    shown = [(name, view_headline(report, name)) for name in VIEWS if view_problem(report, name) is None]
    assert len(shown) >= 8
    for name, headline in [("session", report.headline), *shown]:
        assert headline.text and not headline.problems(), (name, headline)
        said = " ".join((headline.text, headline.mechanism, *headline.details)).lower()
        assert not any(term in said for term in ("host-bound", "device-bound", "balanced")), (name, said)
    assert report.headline.text == "default: 2x faster. 18 kernels became 1"


def test_a_sure_but_tiny_difference_is_not_called_too_wide() -> None:
    """The verdict called 0.98–0.99x "too wide to call": it is narrow, and too small a difference to act on."""
    ms = {"eager": [[1.00] * 10], "default": [[1.01, 1.015, 1.012, 1.011, 1.013, 1.01, 1.014, 1.012, 1.011, 1.01]]}
    report = analyse(session(EAGER, FUSED, ms=ms))
    s = report.comparisons["default"].speedup
    assert report.comparisons["default"].verdict == "no clear difference" and s.high < 1
    assert report.verdict.startswith(f"default shows no clear difference from eager here: {s.median:.2f}x (")
    assert "so a difference under 3% is none to act on." in report.verdict and "too wide" not in report.verdict


def test_a_profiled_host_time_is_cut_to_the_timed_call() -> None:
    """Without the timing loop's host time, the profile's (60 µs for eager here, the profiler's overhead in it)
    cannot exceed the timed call (0.05 ms): the host enqueues a call within it."""
    s = session(EAGER, FUSED, ms={"eager": [[0.05] * 5], "default": [[0.10] * 5]})
    found = bounds(s)
    assert (found["eager"].host_from, found["eager"].host_us, found["eager"].host_high) == (
        "capped", pytest.approx(50.0), pytest.approx(50.0))
    assert (found["default"].host_from, found["default"].host_us) == ("profile", pytest.approx(70.0))
    assert "per call (profiled, and cut to the timed call's length)" in bound_sentence(found["eager"])
