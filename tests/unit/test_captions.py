"""Captions computed from a session: worded by the verdict, never past it; the source stamp; a pair of plain
traces, which has no timing and says so."""

from __future__ import annotations

import msgspec
import pytest

from fusionviz.analysis.captions import speedup_words
from fusionviz.analysis.report import analyse
from fusionviz.charts.registry import CAPTION_FIELDS, VIEWS
from fusionviz.charts.view_captions import HEADLINES, view_headline
from fusionviz.charts.views import scene_caption, view_caption
from fusionviz.errors import SessionFileError
from fusionviz.records.session import Environment, Session
from fusionviz.records.trace_pair import trace_pair
from tests.unit.factories import k, run, session

EAGER = run("eager", [k("aten::mul", 0, 10, ops=("mul",), op_id=1), k("aten::add", 20, 10, ops=("add",), op_id=2),
                      k("aten::exp", 40, 10, ops=("exp",), op_id=3)])
FUSED = run("default", [k("triton_poi_fused_add_exp_mul_0", 0, 10, ops=("add", "exp", "mul"))], compile_s=2.0)
FAST = {"eager": [[0.30, 0.31, 0.29, 0.30]], "default": [[0.10, 0.10, 0.11, 0.09]]}
UNCLEAR = {"eager": [[0.30, 0.30, 0.30, 0.30]], "default": [[0.25, 0.35, 0.28, 0.33]]}


def test_speedup_words_follow_the_verdict() -> None:
    fast = analyse(session(EAGER, FUSED, ms=FAST)).comparisons["default"]
    assert fast.verdict == "faster"
    assert speedup_words(fast).startswith(f"{fast.speedup.median:.2g}x faster than eager (")
    unclear = analyse(session(EAGER, FUSED, ms=UNCLEAR)).comparisons["default"]
    assert unclear.verdict == "no clear difference"
    assert speedup_words(unclear).startswith("no clear difference from eager (")  # not "1.1x faster"
    assert speedup_words(None) == "not timed"


def test_caption_values_fill_every_field_from_the_data() -> None:
    values = analyse(session(EAGER, FUSED, ms=FAST)).caption_fields("default")
    assert set(values) == set(CAPTION_FIELDS)
    assert (values["eager_kernels"], values["kernels"], values["verdict"], values["compile_s"]) == (
        "3", "1", "faster", "2.0 s")
    # eager's kernels fill 30 µs of a 0.30 ms call
    assert values["busy"] == "10%" and values["break_even"].startswith("pays back after ")
    text = scene_caption(analyse(session(EAGER, FUSED, ms=UNCLEAR)), "{mode}: {eager_kernels} → {kernels}, {speedup}",
                         "verdict", "default")
    assert text.startswith("default: 3 → 1, no clear difference from eager")


def test_view_captions_say_what_each_view_shows() -> None:
    s = session(EAGER, FUSED, ms=FAST)
    report = analyse(s)
    collapse = view_headline(report, "collapse")
    assert (collapse.text, collapse.mechanism) == ("3 eager kernels become 1 under default",
                                                   "One pointwise kernel fuses the work of 3 eager kernels (add, exp, "
                                                   "mul).")
    assert view_caption(report, "collapse") == collapse.line  # a view's caption is its headline as one line
    assert view_headline(report, "timeline").text == "One iteration: 3 eager kernels become 1 under default"
    # eager's 0.30 ms against default's 0.10, round by round: 3x read aloud, the exact median in the details
    verdict = view_headline(report, "verdict")
    speedup = report.comparisons["default"].speedup.median
    assert verdict.text == "default: 3x faster. 3 kernels became 1" and round(speedup) == 3
    assert verdict.details[0].startswith(f"default is faster than eager here: {speedup:.2f}x (")
    assert view_headline(report, "latency").text == "Fastest: default, 3x faster than eager"
    more = run("default", EAGER.kernels + FUSED.kernels, compile_s=1.0)
    more_kernels = view_headline(analyse(session(EAGER, more)), "collapse")
    assert more_kernels.text == "default runs more kernels than eager: 3 → 4"
    assert set(HEADLINES) == set(VIEWS)  # every view of the registry has its headline


def test_eager_as_one_cuda_graph_ahead_of_every_compiled_mode_makes_the_headline_say_compiled() -> None:
    """The small transformer block on the H100: "Fastest: reduce-overhead, 2.7x" above a chart where eager
    replayed as one CUDA graph ran 6.3x faster."""
    graphed = run("eager_cuda_graph", EAGER.kernels)
    ahead = {**FAST, "eager_cuda_graph": [[0.05, 0.05, 0.06, 0.05]]}
    report = analyse(session(EAGER, FUSED, graphed, ms=ahead))
    latency = view_headline(report, "latency")
    assert (latency.text, latency.mechanism) == ("Fastest compiled mode: default, 3x faster than eager",
                                                 "Eager replayed as one CUDA graph, with no compiler, is 6x faster.")
    assert "Fastest compiled mode: default;" in report.verdict
    behind = {**FAST, "eager_cuda_graph": [[0.20, 0.20, 0.21, 0.19]]}  # 1.5x: default stays the fastest
    assert view_headline(analyse(session(EAGER, FUSED, graphed, ms=behind)), "latency").text == (
        "Fastest: default, 3x faster than eager")


def test_the_source_stamp_says_where_and_when() -> None:
    s = session(EAGER, FUSED, ms=FAST)
    s.environment = Environment(device_name="NVIDIA H200", device_kind="cuda", torch_version="2.11.0+cu130",
                                captured_at="2026-11-29T16:09:56+00:00")
    assert analyse(s).source.stamp == "NVIDIA H200 · torch 2.11.0+cu130 · 2026-11-29"
    live = msgspec.structs.replace(s, source="live", environment=Environment(
        device_name="CPU: Xeon (2 cores)", device_kind="cpu", torch_version="2.13.0", captured_at="2026-11-30T08:00"))
    assert analyse(live).source.stamp == "live CPU · torch 2.13.0 · 2026-11-30"


def traces(*runs_: object) -> list[Session]:
    return [Session(config=session().config, environment=Environment(device_kind="cuda"), runs=[r], source="trace",
                    label=r.mode) for r in runs_]  # type: ignore[list-item]


def test_a_pair_of_plain_traces_opens_as_eager_and_a_mode_without_timing() -> None:
    eager, compiled = traces(msgspec.structs.replace(EAGER, mode="mine.pt.trace"),
                             msgspec.structs.replace(FUSED, mode="mine_compiled.pt.trace"))
    pair = trace_pair(eager, compiled, "max-autotune")
    assert [r.mode for r in pair.runs] == ["eager", "max-autotune"] and pair.source == "trace"
    report = analyse(pair)
    assert report.caption_fields()["speedup"] == "not timed"
    untimed = view_headline(report, "verdict")
    assert untimed.text == "3 eager kernels become 1 under max-autotune, untimed"
    assert untimed.mechanism.endswith("no timing outside the profiler, so no speedup is claimed.")
    assert report.verdict.startswith("3 eager kernels become 1 under max-autotune. Plain profiler traces")
    assert report.source.stamp == "torch.profiler traces · cuda"
    with pytest.raises(SessionFileError, match=r"not a plain torch\.profiler trace"):
        trace_pair(session(EAGER, FUSED), compiled)
