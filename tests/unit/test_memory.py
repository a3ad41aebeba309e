"""What compiling costs in memory, on hand-made records: the profiler's memory events read into one iteration's
events with the op that made each block, each mode's figures and sentences, what a train pass recomputes, the
timeline's long frame and its chart's inputs. Expected values are written as arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from fusionviz.analysis.headline import MECHANISM_CHARS, WORDS, word_count
from fusionviz.analysis.memory import (
    HELD,
    OTHER,
    memory_figures,
    memory_headline,
    memory_timeline,
    memory_words,
    recomputed_ops,
    recomputed_words,
    saved_words,
    trade_sentence,
)
from fusionviz.analysis.report import analyse
from fusionviz.analysis.summary import Comparison
from fusionviz.analysis.timing import Estimate
from fusionviz.charts.memory import op_colours, prepare_memory
from fusionviz.records.memory_events import BEFORE, MAX_EVENTS, memory_events
from fusionviz.records.session import AotGraph, AotNode, MemoryEvent, ModeMemory, SavedForBackward
from tests.unit.factories import k, run, session

MB = 1 << 20


def op(name: str, ts: float, dur: float, tid: int = 1, cat: str = "cpu_op") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}


def mem(ts: float, size: int, addr: int, device_type: int = 0, device_id: int = -1, tid: int = 1) -> dict[str, Any]:
    return {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": ts, "pid": 1, "tid": tid,
            "args": {"Bytes": size, "Addr": addr, "Device Type": device_type, "Device Id": device_id,
                     "Total Allocated": 0, "Total Reserved": 0}}


def test_each_block_is_the_innermost_ops_and_a_free_keeps_the_op_that_made_it() -> None:
    trace = {"traceEvents": [
        op("fusionviz.memory.iteration", 100, 100, cat="user_annotation"),
        op("aten::mul", 110, 20), op("aten::empty_strided", 112, 2),  # the allocation op is passed over
        mem(113, 64, addr=1),
        op("aten::add", 140, 20), mem(145, 64, addr=2), mem(150, -64, addr=1),  # mul's block, freed inside add
        mem(160, -32, addr=9),  # made before the iteration
        mem(90, 8, addr=3),  # before the window: left out
        mem(170, 128, addr=4, device_type=1, device_id=0),  # another device: left out
    ]}
    events, dropped = memory_events(trace, "cpu", "fusionviz.memory.iteration")
    assert dropped == 0
    assert [(e.t_us, e.bytes, e.op) for e in events] == [
        (113 - 100, 64, "aten::mul"), (145 - 100, 64, "aten::add"), (150 - 100, -64, "aten::mul"),
        (160 - 100, -32, BEFORE)]
    (gpu,) = memory_events(trace, "cuda:0", None)[0]
    assert (gpu.bytes, gpu.op) == (128, "")


def test_a_block_generated_code_allocates_between_kernels_is_the_next_kernels() -> None:
    """Inductor's wrapper allocates a buffer inside the graph's call and outside any op, then launches the kernel
    that writes it: the block is that kernel's (the C++ kernel's `graph_<n>_` prefix dropped)."""
    trace = {"traceEvents": [
        op("## Call CompiledFxGraph abc ##", 0, 100, cat="user_annotation"),
        mem(5, 4096, addr=1),
        op("graph_0_cpp_fused_add_mul_0", 10, 50),
        op("aten::mm", 70, 20), mem(75, 256, addr=2),
    ]}
    events, _ = memory_events(trace, "cpu", None)
    assert [(e.bytes, e.op) for e in events] == [(4096, "cpp_fused_add_mul_0"), (256, "aten::mm")]


def test_events_beyond_the_cap_are_counted_not_kept() -> None:
    trace = {"traceEvents": [mem(float(i), 1, addr=i) for i in range(MAX_EVENTS + 3)]}
    events, dropped = memory_events(trace, "cpu", None)
    assert (len(events), dropped) == (MAX_EVENTS, 3)


def _memory(held: int, peak: int, inputs: int = 64 * MB, pool: int = 0, graph_pool: int | None = None,
            saved: SavedForBackward | None = None, timeline: list[MemoryEvent] | None = None) -> ModeMemory:
    return ModeMemory("cuda_allocator", inputs_bytes=inputs, held_bytes=held, peak_allocated_bytes=peak,
                      peak_reserved_bytes=held + peak, pool_bytes=pool, graph_pool_bytes=graph_pool,
                      timeline=timeline or [], timeline_start_bytes=held, saved=saved)


def _chain() -> tuple[Any, dict[str, Comparison]]:
    """The chain's figures as the H200 gave them with plain torch: eager's four live intermediates (256 MB above
    its input), default's one output (64 MB), reduce-overhead's static input and output in its pool."""
    eager = run("eager", [k("aten::mul", 0, 10)])
    eager.memory = _memory(held=64 * MB, peak=256 * MB)
    default = run("default", [k("triton_poi_fused_mul_0", 0, 10)])
    default.memory = _memory(held=64 * MB, peak=64 * MB)
    graphs = run("reduce-overhead", [k("triton_poi_fused_mul_0", 0, 10)])
    graphs.memory = _memory(held=192 * MB, peak=0, pool=128 * MB, graph_pool=130 * MB)
    s = session(eager, default, graphs)
    faster = Estimate(median=11.3, low=11.0, high=11.6, samples=30, processes=3)
    latency = Estimate(median=0.1, low=0.1, high=0.1, samples=30, processes=3)
    return s, {"default": Comparison(latency=latency, speedup=faster, verdict="faster", break_even_calls=None)}


def test_the_trade_says_the_speed_the_peak_and_the_graph_pool() -> None:
    s, compared = _chain()
    figures = memory_figures(s)
    assert figures["eager"].peak == (64 + 256) * MB and figures["reduce-overhead"].beyond_inputs == 128 * MB
    said = trade_sentence(figures, "default", compared["default"])
    # 256 MB − 64 MB = 192 MB lower; read as two figures (201 MB in SI units)
    assert said == ("In memory, default is 11x faster and its call peaks 200 MB lower than eager's (67.1 MB against "
                    "268 MB above what each holds between calls); reduce-overhead holds 140 MB in its graph pool.")
    assert trade_sentence(figures, "max-autotune", None) is None  # not measured: nothing said


def test_the_memory_headline_keeps_the_grammar() -> None:
    s, _ = _chain()
    figures = memory_figures(s)
    for focus in ("default", "reduce-overhead"):
        headline = memory_headline(figures, focus)
        assert not headline.problems() and word_count(headline.text) <= WORDS
        assert len(headline.mechanism) <= MECHANISM_CHARS
    assert memory_headline(figures, "default").text == "default peaks 200 MB lower than eager per call"
    # reduce-overhead holds 128 MB more than eager between calls: its static input and output
    assert memory_headline(figures, "reduce-overhead").mechanism == ("It holds 130 MB more between calls: outputs "
                                                                     "and static buffers.")
    assert memory_words(figures["reduce-overhead"]) == (
        "reduce-overhead holds 201 MB between calls (67.1 MB of inputs, +134 MB), peaks 0 B above that in a call, "
        "reserves up to 201 MB and kept 134 MB from compiling and its first calls; its CUDA-graph pool reserves "
        "136 MB (the CUDA caching allocator, in a fresh process).")


def test_a_backward_node_named_like_a_forward_node_was_recomputed() -> None:
    """AOTAutograd's partitioner copies a joint-graph node into the backward under its forward name; views compute
    nothing and are left out; a graph of another compile is another frame."""
    compiled = run("default", [])
    compiled.aot_graphs = [
        AotGraph("forward", "0/0", [AotNode("mul", "aten.mul"), AotNode("tanh", "aten.tanh"),
                                    AotNode("view", "aten.view"), AotNode("mul_1", "aten.mul")]),
        AotGraph("backward", "0/0", [AotNode("mul", "aten.mul"), AotNode("tanh", "aten.tanh"),
                                     AotNode("view", "aten.view"), AotNode("mul_1", "aten.mul"),
                                     AotNode("mul_2", "aten.mul"), AotNode("tanh_backward", "aten.tanh_backward")]),
        AotGraph("backward", "1/0", [AotNode("mul", "aten.mul")]),  # no forward of frame 1 kept: nothing matched
    ]
    ops = recomputed_ops(compiled)
    assert ops == (("mul", 2), ("tanh", 1))
    assert recomputed_words(ops) == "3 ops (mul ×2, tanh)"
    assert recomputed_ops(run("eager", [])) is None  # no graphs: not known, rather than none


def test_saved_activations_are_set_against_eagers() -> None:
    eager = run("eager", [])
    eager.memory = _memory(1, 1, saved=SavedForBackward(bytes=13 * 4096, tensors=13, activation_bytes=12 * 4096,
                                                        activations=12))
    compiled = run("default", [])
    compiled.memory = _memory(1, 1, saved=SavedForBackward(bytes=4096 + 2 * 256, tensors=3, activation_bytes=0,
                                                           activations=0))
    compiled.aot_graphs = [AotGraph("forward", "0/0", [AotNode("exp", "aten.exp")]),
                           AotGraph("backward", "0/0", [AotNode("exp", "aten.exp")])]
    figures = memory_figures(session(eager, compiled))
    assert saved_words(figures["default"], figures["eager"]) == (
        "default saves 0 B of activations for its backward against eager's 49.2 kB (0 of 3 saved storages are "
        "activations), and its backward recomputes 1 op (exp).")


def test_the_timeline_stacks_each_ops_live_bytes_from_what_was_held() -> None:
    """Eager: held 100 B; mul makes 64, add makes 64, mul's is freed, a block from before is freed (16); the
    frame gives every band's level at each event (held, mul, add: the top ops), starting at 0 µs."""
    eager = run("eager", [])
    eager.memory = _memory(100, 128, inputs=100, timeline=[
        MemoryEvent(1.0, 64, "aten::mul"), MemoryEvent(2.0, 64, "aten::add"), MemoryEvent(3.0, -64, "aten::mul"),
        MemoryEvent(4.0, -16, BEFORE)])
    frame = memory_timeline(session(eager))
    wide = frame.pivot_table(index="t_us", columns="op", values="bytes_live")
    assert list(wide.columns) == sorted([HELD, "aten::mul", "aten::add"])
    assert wide[HELD].tolist() == [100, 100, 100, 100, 100 - 16]
    assert wide["aten::mul"].tolist() == [0, 64, 64, 0, 0]
    assert wide["aten::add"].tolist() == [0, 0, 64, 64, 64]
    assert wide.sum(axis=1).max() == 100 + 64 + 64


def test_ops_beyond_the_top_are_one_band() -> None:
    eager = run("eager", [])
    eager.memory = _memory(0, 10, inputs=0, timeline=[MemoryEvent(float(i), 10 - i, f"op{i}") for i in range(5)])
    frame = memory_timeline(session(eager), top=2)
    assert set(frame.op) == {HELD, "op0", "op1", OTHER}
    last = frame[frame.t_us == 4.0].set_index("op").bytes_live
    assert last[OTHER] == (10 - 2) + (10 - 3) + (10 - 4)


def test_the_chart_draws_eager_and_the_mode_asked_for() -> None:
    eager, default, other = run("eager", []), run("default", []), run("max-autotune", [])
    for r in (eager, default, other):
        r.memory = _memory(10, 10, inputs=10, timeline=[MemoryEvent(1.0, 8, f"{r.mode}_op")])
    report = analyse(session(eager, default, other))
    assert list(dict.fromkeys(prepare_memory(report, "max-autotune")["mode"])) == ["eager", "max-autotune"]
    assert list(dict.fromkeys(prepare_memory(report)["mode"])) == ["eager", "default"]
    colours = op_colours([HELD, "a", "b", OTHER])
    assert len({colours["a"], colours["b"], colours[HELD], colours[OTHER]}) == 4


@pytest.mark.parametrize("beyond", [0, 512])
def test_a_modes_words_say_what_it_holds_beyond_its_inputs(beyond: int) -> None:
    eager = run("eager", [])
    eager.memory = ModeMemory("profiler_memory_events", inputs_bytes=4096, held_bytes=4096 + beyond,
                              peak_allocated_bytes=8192)
    said = memory_words(memory_figures(session(eager))["eager"])
    assert ("(its inputs)" in said) == (beyond == 0) and "reserves" not in said  # the CPU reserves nothing apart
    assert said.endswith("(the profiler's memory events, in a fresh process).")
