"""What compiling costs in memory, on real CPU runs (torch's C++ backend): every mode measured in a fresh process
from the profiler's memory events, eager's intermediates against the fused kernel's one buffer, a train pass's
saved activations and the ops its compiled backward recomputes, one iteration's timeline and the memory view."""

from __future__ import annotations

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.charts.views import view_figure, view_problem
from fusionviz.cli.inspection import inspect_report, memory_lines
from fusionviz.measure import client
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import ModeMemory, Session

DIM, BATCH = 64, 16
INPUT = DIM * BATCH * 4  # one float32 input


def small(model: str, pass_: str, processes: int) -> RunConfig:
    return RunConfig(model=model, dim=DIM, batch=BATCH, device="cpu", rounds=3, processes=processes, warmup_calls=3,
                     modes=("eager", "default"), pass_=pass_)


# Each configuration once: the chain in two timing processes (each mode measured first in one of them); its train
# pass in one (it measures eager, and default gets a worker of its own, a `MemoryJob`); the MLP both ways.
CONFIGS = {"chain": small("pointwise_chain", "inference", processes=2),
           "chain_train": small("pointwise_chain", "train", processes=1),
           "mlp": small("mlp", "inference", processes=2), "mlp_train": small("mlp", "train", processes=2)}


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    """The configurations recorded so far in this module, by name (each is recorded when a test first asks)."""
    return {}


PREVIEWS: dict[str, list[Session]] = {}  # the partly timed sessions each recording handed over, by name


def recorded(name: str, sessions: dict[str, Session], worker: Worker) -> Session:
    if name not in sessions:
        PREVIEWS[name] = []
        sessions[name] = run_session(CONFIGS[name], worker=worker, partial=PREVIEWS[name].append)
    return sessions[name]


@pytest.fixture
def chain(sessions: dict[str, Session], worker: Worker) -> Session:
    return recorded("chain", sessions, worker)


@pytest.fixture
def chain_train(sessions: dict[str, Session], worker: Worker) -> Session:
    return recorded("chain_train", sessions, worker)


def _memory(session: Session, mode: str) -> ModeMemory:
    run = session.run(mode)
    assert run is not None and run.ok and run.memory is not None, run and (run.error, run.logs)
    return run.memory


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_mode_is_measured_from_the_profilers_memory_events(name: str, sessions: dict[str, Session],
                                                                 worker: Worker) -> None:
    session = recorded(name, sessions, worker)
    for mode in ("eager", "default"):
        memory = _memory(session, mode)
        assert memory.method == "profiler_memory_events"
        assert memory.peak_reserved_bytes is None and memory.graph_pool_bytes is None  # the CPU reserves nothing
        assert memory.inputs_bytes == INPUT and memory.held_bytes >= INPUT and memory.peak_allocated_bytes > 0
        assert memory.snapshot_gz_b64 is None and memory.timeline
    processes = {mode: _memory(session, mode).process for mode in ("eager", "default")}
    assert processes == ({"eager": 0, "default": -1} if name == "chain_train" else {"eager": 0, "default": 1})


def test_eager_keeps_the_chains_intermediates_the_fused_kernel_one_buffer(chain: Session) -> None:
    """Eager's chain holds up to four whole-tensor intermediates at once; the fused kernel writes its output
    alone. Between calls both hold their input, and nothing else that matters."""
    eager, default = _memory(chain, "eager"), _memory(chain, "default")
    assert eager.peak_allocated_bytes >= 4 * INPUT
    assert INPUT <= default.peak_allocated_bytes < 2 * INPUT
    for memory in (eager, default):
        assert memory.held_bytes - INPUT < INPUT // 4


@pytest.mark.parametrize("name", ["chain", "chain_train"])
def test_the_timeline_rises_to_the_measured_peak(name: str, sessions: dict[str, Session], worker: Worker) -> None:
    """The timeline's iteration is another steady call: stacked, its bands reach what was held plus the call's
    peak, and its ops are eager's ATen ops and the compiled mode's C++ kernel."""
    session = recorded(name, sessions, worker)
    report = analyse(session)
    frame = report.memory_timeline
    assert set(frame.columns) == {"mode", "t_us", "bytes_live", "op"}
    for mode in ("eager", "default"):
        memory = _memory(session, mode)
        rows = frame[frame["mode"] == mode]
        top = rows.groupby("t_us").bytes_live.sum().max()
        assert top == pytest.approx(memory.held_bytes + memory.peak_allocated_bytes, rel=0.05)
    ops = {mode: set(frame[frame["mode"] == mode].op) for mode in ("eager", "default")}
    assert "aten::mul" in ops["eager"] and any(op.startswith("cpp_fused_") for op in ops["default"])
    assert view_problem(report, "memory", "default") is None
    figure = view_figure(report, "memory", mode="default")
    assert {trace.name for trace in figure.data} >= {"held between calls", "aten::mul"}


def test_a_compiled_train_pass_saves_less_and_recomputes_the_chain(chain_train: Session) -> None:
    """Eager saves the chain's intermediates for its backward; Inductor's min-cut partitioner saves the input and
    recomputes the cheap pointwise ops in the backward instead."""
    eager, default = _memory(chain_train, "eager"), _memory(chain_train, "default")
    assert eager.saved is not None and default.saved is not None
    assert eager.saved.activation_bytes >= 4 * INPUT
    assert default.saved.activation_bytes < eager.saved.activation_bytes
    report = analyse(chain_train)
    recomputed = dict(report.memory["default"].recomputed or ())
    assert {"tanh", "sigmoid", "exp"} <= recomputed.keys()
    assert report.memory["eager"].recomputed is None  # eager has no AOT graphs
    said = " ".join(report.headline.details)
    assert "In memory, default " in said


def test_an_mlps_train_pass_saves_activations_both_ways(sessions: dict[str, Session], worker: Worker) -> None:
    """The MLP's GEMMs need their inputs in the backward: both modes save activations, and the compiled pass's
    AOT graphs were kept, so whatever it recomputes is known (if nothing, an empty list)."""
    mlp_train = recorded("mlp_train", sessions, worker)
    eager, default = _memory(mlp_train, "eager"), _memory(mlp_train, "default")
    assert eager.saved is not None and default.saved is not None
    assert eager.saved.activation_bytes > 0 and default.saved.activation_bytes > 0
    assert analyse(mlp_train).memory["default"].recomputed is not None


def test_inspect_gives_the_memory_fields_and_says_how_they_were_measured(sessions: dict[str, Session],
                                                                         worker: Worker) -> None:
    inspected = inspect_report(analyse(recorded("mlp", sessions, worker)), "mlp")
    for run in inspected["runs"]:
        memory = run["memory"]
        assert memory["method"] == "profiler_memory_events" and memory["inputs_bytes"] == INPUT
        assert memory["peak_bytes"] == memory["held_bytes"] + memory["peak_allocated_bytes"]
        assert run["cuda_graphs"] is None  # no CUDA graphs on the CPU
    assert inspected["bridge"] is None
    lines = memory_lines(inspected)
    assert any("profiler's memory events" in line for line in lines)


def test_the_listener_ties_inductors_skip_reason_to_the_graph_being_compiled() -> None:
    """Inductor logs a skip on its `cudagraphs` artifact log while compiling a graph (that graph's) or, from the
    graph tree, on a call (no graph's: -1); its other warnings there are not skips."""
    import logging

    from fusionviz.measure.harness import listening

    log = logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs")
    with listening() as listener:
        listener.provenance.generated(0)
        log.warning("skipping cudagraphs due to mutated inputs (1 instances)")
        log.warning("CUDAGraph supports dynamic shapes by recording a new graph for each distinct input size.")
    assert listener.cudagraph_skips == [(0, "skipping cudagraphs due to mutated inputs (1 instances)")]


@pytest.mark.parametrize("name", ["chain", "chain_train"])
def test_a_run_hands_over_its_session_after_each_timing_process_but_the_last(name: str,
                                                                           sessions: dict[str, Session],
                                                                           worker: Worker) -> None:
    """The lab draws the first process's figures while the second times: the preview has the first process's
    rounds and the memory that process measured (eager's), and the final session, handed out later, has not
    changed it (default's memory, measured by the second process, is the final's alone)."""
    session = recorded(name, sessions, worker)
    previews = PREVIEWS[name]
    assert session.timing is not None
    assert len(previews) == len(session.timing.processes) - 1
    if not previews:
        return
    (preview,) = previews
    assert preview.timing is not None and [p.index for p in preview.timing.processes] == [0]
    assert preview.timing.processes[0] is session.timing.processes[0]
    assert _memory(preview, "eager") is _memory(session, "eager")
    preview_default = preview.run("default")
    assert preview_default is not None and preview_default.memory is None
    assert _memory(session, "default").process == 1
    report = analyse(preview)
    assert report.comparisons and report.headline.text


def test_a_run_without_memory_measures_none_and_starts_no_process_for_it(worker: Worker,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`memory=False` (`run --no-memory`, the lab's Memory box unticked): no mode's memory, and no process of its
    own for the mode the one timing process did not run first."""
    def started(modes: tuple[str, ...], *args: object) -> list[object]:
        assert not modes, f"a process was asked for the memory of {modes}"
        return []

    monkeypatch.setattr(client, "_memory_not_timed", started)
    config = RunConfig(model="pointwise_chain", dim=DIM, batch=BATCH, device="cpu", rounds=3, processes=1,
                       warmup_calls=3, modes=("eager", "default"), memory=False)
    session = run_session(config, worker=worker)
    assert [r.mode for r in session.runs if r.ok] == ["eager", "default"]
    assert all(r.memory is None and not any("memory" in line for line in r.logs) for r in session.runs)
    assert session.config.memory is False and Session.from_dict(session.to_dict()).config.memory is False
    assert "asked without it" in (view_problem(analyse(session), "memory") or "")
