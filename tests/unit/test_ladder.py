"""The attribution ladder and host-bound modes on hand-made runs and rounds, expected values as arithmetic."""

from __future__ import annotations

import pytest

from fusionviz.analysis.bound import bounds
from fusionviz.analysis.ladder import biggest_step, ladder, ladder_fields, why_words
from fusionviz.analysis.report import analyse
from fusionviz.records.session import ModeRun
from tests.unit.factories import cpu, k, run, session


def _run(mode: str, kernels: int, kernel_us: float, host_us: float) -> ModeRun:
    """`kernels` kernels of `kernel_us` each, the host done launching them at `host_us`."""
    rows = [k(f"kernel_{i}", 20.0 * i, kernel_us) for i in range(kernels)]
    return run(mode, rows, step_us=host_us + 10, cpu_ops=[cpu("aten::mm", "op", 0.0, host_us / 2),
                                                          cpu("cudaLaunchKernel", "launch", host_us - 2, 2.0)])


EAGER = _run("eager", 5, 10.0, 90.0)  # 50 µs of GPU time after 90 µs of host work: host-bound
GRAPHED = _run("eager_cuda_graph", 5, 10.0, 10.0)  # the same kernels, one graph launch
DEFAULT = _run("default", 3, 12.0, 150.0)  # fewer kernels, more host work
REDUCE = _run("reduce-overhead", 3, 12.0, 15.0)


def test_the_ladder_pairs_rounds_and_splits_gpu_from_host() -> None:
    ms = {"eager": [[0.100, 0.110, 0.105], [0.120, 0.118, 0.122]],
          "eager_cuda_graph": [[0.050, 0.060, 0.055], [0.070, 0.068, 0.072]],
          "reduce-overhead": [[0.040, 0.050, 0.045], [0.060, 0.058, 0.062]],
          "default": [[0.160, 0.170, 0.165], [0.180, 0.178, 0.182]]}
    s = session(EAGER, GRAPHED, DEFAULT, REDUCE, ms=ms)
    found = bounds(s)
    assert (found["eager"].host_us, found["eager"].gpu_us, found["eager"].kind) == (90.0, 50.0, "host-bound")
    assert found["eager_cuda_graph"].kind == "device-bound" and found["default"].gpu_us == 36.0
    steps = {step.step: step for step in ladder(s)}
    assert list(steps) == ["eager → eager_cuda_graph", "eager_cuda_graph → reduce-overhead", "eager → default",
                           "default → reduce-overhead"]
    graph = steps["eager → eager_cuda_graph"]
    # every round, in both processes, is 50 µs faster: a change with no spread
    assert graph.delta_us is not None and graph.delta_us.median == pytest.approx(-50.0)
    assert graph.delta_us.low == pytest.approx(-50.0) and graph.delta_us.high == pytest.approx(-50.0)
    assert graph.gpu_delta_us == 0.0 and "most of the change is host work" in graph.mechanism
    fusion = steps["eager_cuda_graph → reduce-overhead"]
    assert fusion.delta_us is not None and fusion.delta_us.median == pytest.approx(-10.0)
    assert fusion.gpu_delta_us == pytest.approx(36.0 - 50.0) and "most of the change is GPU time" in fusion.mechanism
    assert steps["eager → default"].delta_us.median == pytest.approx(60.0)  # type: ignore[union-attr]
    # across the ladders: default's kernels under CUDA graphs, 120 µs faster each round (160 → 40, 180 → 60 …);
    # the same 3 kernels of 12 µs, so all of it is host work: the launches gone, no input copy in these runs
    bridge = steps["default → reduce-overhead"]
    assert bridge.bridge and bridge.delta_us is not None and bridge.delta_us.median == pytest.approx(-120.0)
    assert bridge.gpu_delta_us == pytest.approx(0.0)
    assert bridge.mechanism.startswith("CUDA graphs over default's compiled kernels: 120.0 µs per call faster")
    assert bridge.mechanism.endswith("; of it, launches gone: -120.0 µs of host work")
    assert biggest_step(list(steps.values())) is steps["eager → default"]  # the bridge is no rung of either ladder
    fields = ladder_fields(list(steps.values()))
    assert fields[0]["from"] == "eager" and fields[0]["to"] == "eager_cuda_graph"
    assert fields[0]["delta_us"] == {"median": pytest.approx(-50.0), "low": pytest.approx(-50.0),
                                     "high": pytest.approx(-50.0)}
    # default: 36 µs of kernels against eager's 50: 28% less GPU time; 150 µs of host work against its 36 µs
    report = analyse(s)
    why = why_words(report.bounds, report.busy, "default")
    assert why[0] == "Its kernels take 28% less GPU time than eager's (50 µs → 36 µs per call)."
    busy = report.busy["default"]
    assert busy is not None
    # no host time from the timing loop here: the profile's, which says so
    assert why[1] == ("default is host-bound: 150 µs of host work per profiled iteration (the profiler's overhead "
                      f"included) against 36 µs of GPU time, so the GPU is busy {busy:.0%} of the call.")
    assert why[2].startswith("Eager is host-bound: 90 µs of host work per profiled iteration")
    # the verdict leads with the compiled mode, not the graphed eager rung, and says each figure once, exactly
    text = report.verdict
    speedup = report.comparisons["default"].speedup.median
    assert text.startswith(f"default is slower than eager here: {speedup:.2f}x (") and " ".join(why) in text
    assert report.headline.text.startswith(f"default: {1 / speedup:.2g}x slower.")
    assert f"{1 / speedup:.2g}x" not in text  # the rounded figure is the headline's, the exact one the details'


def test_a_host_bound_step_covers_the_spread_between_processes() -> None:
    # eight processes of three rounds: in seven, default is 60 µs slower; in one, 100 µs (one round 61)
    eager = [[0.100] * 3 for _ in range(8)]
    default = [[0.160] * 3 for _ in range(7)] + [[0.161, 0.200, 0.200]]
    step = ladder(session(EAGER, DEFAULT, ms={"eager": eager, "default": default}))[0]
    assert step.delta_us is not None and step.delta_us.high == pytest.approx(100.0) and step.delta_us.widened
    # the same rounds between two device-bound modes keep their p10–p90
    steps = ladder(session(EAGER, GRAPHED, REDUCE, ms={"eager": eager, "eager_cuda_graph": eager,
                                                       "reduce-overhead": default}))
    device_bound = next(x for x in steps if x.source == "eager_cuda_graph")
    assert device_bound.delta_us is not None and not device_bound.delta_us.widened
    assert device_bound.delta_us.high == pytest.approx(60.7)


def test_rungs_that_could_not_run_say_why() -> None:
    absent = ModeRun(mode="eager_cuda_graph", status="not_applicable", error="no CUDA graphs on the CPU")
    s = session(EAGER, absent, DEFAULT, ms={"eager": [[0.1, 0.1, 0.1]], "default": [[0.2, 0.2, 0.2]]},
                device_kind="cpu")
    steps = ladder(s)
    assert [(x.step, x.not_applicable) for x in steps] == [("eager → default", None), (
        "eager → eager_cuda_graph", "no CUDA graphs on the CPU")]
    assert bounds(s)["eager"].kind is None  # on the CPU the host is the device


def test_host_time_comes_from_the_timing_loop_where_it_was_kept() -> None:
    s = session(EAGER, REDUCE, ms={"eager": [[0.100, 0.100, 0.100]], "reduce-overhead": [[0.040] * 3]})
    assert bounds(s)["reduce-overhead"].host_from == "profile"  # no host rounds: the profiled iterations' figure
    assert s.timing is not None
    # the host enqueued eager's calls in 30 µs each (the GPU took 50) and reduce-overhead's in 40 (the GPU 36)
    s.timing.processes[0].host_rounds = [{"eager": 0.030, "reduce-overhead": ms} for ms in (0.039, 0.040, 0.041)]
    found = bounds(s)
    assert (found["eager"].host_us, found["eager"].kind) == (pytest.approx(30.0), "device-bound")
    # p10 of 39, 40, 41 µs is 39.2: above the 36 µs of GPU time in every round
    assert (found["reduce-overhead"].host_us, found["reduce-overhead"].kind) == (pytest.approx(40.0), "host-bound")
    assert found["reduce-overhead"].host_low == pytest.approx(39.2)
    assert found["eager"].host_from == "timing"
