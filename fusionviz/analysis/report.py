"""The analysis of a session, computed once: `analyse(session)` turns a Session into one Report, which the
charts draw from and the pages, the CLI and `export` lay out (pyinstrument's Session → processors →
renderers).

The processors are the functions of the modules beside this one: each takes the data it needs (the session,
its runs, latencies, comparisons, kernel tables, costs) and none of them imports this module. A Report is the one
place that wires them together: each part is computed when it is first asked for, from the session and the parts
it depends on, and then kept, so every consumer gets the same values and a number shown twice is one number.
`inspect` of a plain trace reads the kernel ranking without touching pandas, the timing or the fusion links.
Reports are kept per session content (a digest of its msgpack encoding) in a small LRU, so a page that reruns, a
grid cell rebuilt as a session of its own, or a second user on the same recorded session gets the report already
made.

Adding a figure is one processor and one part here that hands it its inputs: a per-mode table goes on
`RunReport`, a session-wide one on `Report`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import msgspec

from fusionviz.analysis.bound import Bound, bounds
from fusionviz.analysis.headline import Headline
from fusionviz.analysis.kernel_costs import RunCosts, session_costs
from fusionviz.analysis.sentences import Source, load_warnings, trace_notes
from fusionviz.analysis.trace_stats import (
    BusyTime,
    KernelStat,
    StepIdle,
    busy_time,
    idle_breakdown,
    kernel_ranking,
    profiled_stretch,
)
from fusionviz.lru import LRU
from fusionviz.records.session import ModeRun, Session

# The processors that import pandas (or import modules that do) are imported inside the parts that call them,
# never here: a plain trace's `inspect` computes its parts without loading pandas (tests/unit/test_analyse.py).
if TYPE_CHECKING:
    import pandas as pd

    from fusionviz.analysis.bytes_moved import BytesMoved
    from fusionviz.analysis.cuda_graphs import Coverage
    from fusionviz.analysis.grid import GridReport
    from fusionviz.analysis.kernel_diff import KernelDiff
    from fusionviz.analysis.ladder import Step
    from fusionviz.analysis.links import Collapse
    from fusionviz.analysis.memory import MemoryFigures
    from fusionviz.analysis.methodology import Methodology
    from fusionviz.analysis.op_costs import Cost
    from fusionviz.analysis.plan_diff import PlanDiff
    from fusionviz.analysis.proposals import Proposal
    from fusionviz.analysis.source_view import SourceView
    from fusionviz.analysis.summary import Comparison
    from fusionviz.analysis.sweep import SweepReport
    from fusionviz.analysis.timing import Estimate

KEPT = 64  # reports kept, most recently used first: the recorded library's (40 sessions) and those users open


@dataclass(frozen=True, eq=False)
class RunReport:
    """One mode's tables, each computed when first asked for and kept."""

    run: ModeRun

    @cached_property
    def kernels(self) -> pd.DataFrame:
        """The kernels of the representative iteration, in launch order (memory operations left out)."""
        from fusionviz.analysis.kernel_tables import iteration_kernels

        return iteration_kernels(self.run)

    @cached_property
    def kernel_table(self) -> pd.DataFrame:
        """One iteration's kernel table as shown and downloaded, memory operations included."""
        from fusionviz.analysis.kernel_tables import kernel_table

        return kernel_table(self.run)

    @cached_property
    def all_kernel_table(self) -> pd.DataFrame:
        """The kernel table of every profiled iteration."""
        from fusionviz.analysis.kernel_tables import kernel_table

        return kernel_table(self.run, all_iterations=True)

    @cached_property
    def classes(self) -> pd.DataFrame:
        """Kernel time per class (kernel_tables.class_stats)."""
        from fusionviz.analysis.kernel_tables import class_stats

        return class_stats(self.run)

    @cached_property
    def busy_time(self) -> BusyTime:
        """Kernel time, span and gaps per profiled iteration (trace_stats.busy_time)."""
        return busy_time(self.run)

    @cached_property
    def ranking(self) -> list[KernelStat]:
        """Every kernel name by total time, with its duration distribution and share of kernel time."""
        return kernel_ranking(self.run)

    @cached_property
    def idle(self) -> list[StepIdle]:
        """Where each profiled iteration's GPU time went."""
        return idle_breakdown(self.run)

    @cached_property
    def notes(self) -> list[str]:
        """How the run's trace was read (sentences.trace_notes)."""
        return trace_notes(self.run.summary) if self.run.summary else []


@dataclass(frozen=True, eq=False)
class Report:
    """Everything fusionviz says about one session. Made by `analyse`, which keeps one per content; a one-shot
    reader (`inspect`) makes its own and never pays for the digest."""

    session: Session

    @cached_property
    def key(self) -> str:
        """The digest of the session's content: what the app's caches are keyed by."""
        return digest(self.session)

    @cached_property
    def latencies(self) -> dict[str, Estimate]:
        """Each timed mode's latency per call over every round of every process (timing.latency_estimates);
        empty without timing, where neither pandas nor the timing module is imported."""
        if self.session.timing is None and not any(r.latency for r in self.session.runs):
            return {}
        from fusionviz.analysis.timing import latency_estimates

        return latency_estimates(self.session)

    @cached_property
    def speedups(self) -> dict[str, Estimate]:
        """Each timed mode against eager, from rounds paired within a process (timing.speedup_estimates)."""
        if not self.latencies:
            return {}
        from fusionviz.analysis.timing import speedup_estimates

        return speedup_estimates(self.session)

    @cached_property
    def comparisons(self) -> dict[str, Comparison]:
        """Each timed mode against eager (eager included, at 1x), with its verdict and break-even calls."""
        if not self.latencies:
            return {}
        from fusionviz.analysis.summary import comparisons

        return comparisons(self.session.runs, self.latencies, self.speedups)

    @cached_property
    def busy(self) -> dict[str, float | None]:
        """Each run's busy fraction: kernel time per iteration over its timed latency (summary.busy_fraction)."""
        from fusionviz.analysis.summary import busy_fraction

        return {r.mode: busy_fraction(self.runs[r.mode].busy_time, self.latencies.get(r.mode)) if r.summary else None
                for r in self.session.runs}

    @cached_property
    def stretch(self) -> dict[str, float]:
        """Each timed mode's profiled stretch: how many times as long its median profiled iteration ran as its
        median timed call (trace_stats.profiled_stretch); the modes without one are left out."""
        found = {mode: profiled_stretch(self.runs[mode].idle, e.median) if mode in self.runs else None
                 for mode, e in self.latencies.items()}
        return {mode: x for mode, x in found.items() if x is not None}

    @property
    def timed(self) -> bool:
        """Whether there are latencies to compare modes by (a pair of plain traces has none)."""
        return "eager" in self.comparisons

    @cached_property
    def drawable(self) -> list[ModeRun]:
        """The runs that have kernels to draw, in session order (eager first)."""
        from fusionviz.analysis.summary import drawable_runs

        return drawable_runs(self.session)

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per mode (summary.SUMMARY_COLUMNS)."""
        from fusionviz.analysis.summary import summary_table

        return summary_table(self.session.runs, self.latencies, self.comparisons, self.busy)

    @cached_property
    def bounds(self) -> dict[str, Bound]:
        """Each profiled mode's host and GPU time per call and its class, host- or device-bound or balanced
        (bound.bounds): the one classification every sentence, view and `inspect` says."""
        return bounds(self.session)

    @cached_property
    def headline(self) -> Headline:
        """What the session's first screen leads with (`headline.Headline`): whether compiling paid off for the
        main compiled mode, rounded for reading, one line on what bounds it, and the verdict's sentences as its
        details; what plain traces can say; a grid's or a sweep's result."""
        if self.grid is not None:
            from fusionviz.analysis.captions import grid_headline

            return grid_headline(self.grid)
        if self.session.sweep is not None:
            from fusionviz.analysis.captions import sweep_cumulative_headline

            return sweep_cumulative_headline(self.sweep, self.session.sweep)
        if self.timed:
            from fusionviz.analysis.verdict import session_headline

            return session_headline(self.session, self.comparisons, self.busy, self.bounds, self.moved,
                                    self.fastest)
        from fusionviz.analysis.captions import untimed_headline

        return untimed_headline(self.session.run("eager"), self.focus(), self.caption_fields(), self.bounds)

    @cached_property
    def fastest(self) -> list[str]:
        """The fastest compiled modes, tied where no paired-round difference tells them apart (verdict.leaders)."""
        if not self.timed:
            return []
        from fusionviz.analysis.timing import paired_speedup
        from fusionviz.analysis.verdict import leaders

        return leaders(self.comparisons, lambda a, b: paired_speedup(self.session, a, b))

    @cached_property
    def mode_headlines(self) -> dict[str, Headline]:
        """Each timed mode but eager against eager, briefly (verdict.mode_headline), by mode."""
        from fusionviz.analysis.verdict import mode_headline

        eager = self.session.run("eager")
        if eager is None or eager.summary is None:
            return {}
        return {r.mode: mode_headline(r.mode, self.comparisons[r.mode], eager.summary.kernels_per_iteration,
                                      r.summary.kernels_per_iteration, self.moved.get(r.mode), self.bounds.get(r.mode),
                                      r.graph_count)
                for r in self.session.runs if r.mode != "eager" and r.mode in self.comparisons and r.summary}

    @cached_property
    def moved(self) -> dict[str, tuple[int, int]]:
        """Eager's bytes per iteration against each compiled mode's, where the bytes view can set them against
        each other (bytes_moved.moved_pair), by mode."""
        from fusionviz.analysis.bytes_moved import moved_pair

        pairs = {r.mode: moved_pair(self.bytes_moved, r.mode) for r in self.drawable if r.mode != "eager"}
        return {mode: pair for mode, pair in pairs.items() if pair is not None}

    @property
    def verdict(self) -> str:
        """The headline's details as one paragraph: whether compiling paid off and why, each figure exact with its
        spread, or what plain traces can say."""
        return " ".join(self.headline.details)

    @cached_property
    def warnings(self) -> list[str]:
        """What could have skewed the timing (sentences.load_warnings)."""
        return load_warnings(self.session)

    @cached_property
    def source(self) -> Source:
        """Where the data came from: the page's line and a slide's stamp are worded from it."""
        return Source.of(self.session)

    @cached_property
    def runs(self) -> dict[str, RunReport]:
        """Each mode's tables, by mode."""
        return {r.mode: RunReport(r) for r in self.session.runs}

    @cached_property
    def collapses(self) -> dict[str, Collapse]:
        """What fused into what, for each compiled mode with kernels (none without an eager run to draw)."""
        from fusionviz.analysis.links import collapse

        eager = self.session.run("eager")
        if eager is None or eager not in self.drawable:
            return {}
        ek = self.runs["eager"].kernels
        return {r.mode: collapse(eager, r, ek, self.runs[r.mode].kernels) for r in self.drawable if r.mode != "eager"}

    @cached_property
    def source_views(self) -> dict[str, SourceView]:
        """The user's lines and the kernels each ended in, for each compiled mode whose session recorded them."""
        from fusionviz.analysis.source_view import has_sources, source_view

        eager = self.session.run("eager")
        if eager is None:
            return {}
        return {r.mode: source_view(eager, r) for r in self.drawable if r.mode != "eager" and has_sources(eager, r)}

    @cached_property
    def modules(self) -> pd.DataFrame:
        """Kernel time per module of the model and mode, eager and every compiled mode that ran
        (modules.module_table): where in the model fusion paid."""
        from fusionviz.analysis.modules import module_table

        return module_table(self.drawable)

    @cached_property
    def trace_lines(self) -> dict[str, SourceView]:
        """A plain trace's own source lines, per run whose events carry stack traces (a foreign trace written by
        Inductor's trace handler, or torch 2.13's `stack_trace`): each line with the kernels it launched."""
        from fusionviz.analysis.source_view import has_sources, source_view

        if self.session.source != "trace":
            return {}
        return {r.mode: source_view(r, None) for r in self.drawable if has_sources(r)}

    @cached_property
    def pair_diff(self) -> KernelDiff | None:
        """For a session of two runs with kernels (the Trace explorer's pair): the second's kernels by name
        against the first's, and what each replaced (kernel_diff.kernel_diff); None for any other session."""
        if len(self.session.runs) != 2 or self.drawable != self.session.runs:
            return None
        from fusionviz.analysis.kernel_diff import kernel_diff

        return kernel_diff(*self.session.runs)

    @cached_property
    def _plan_diffs(self) -> dict[tuple[str, str], PlanDiff]:
        return {}

    def plan_diff(self, a: str, b: str) -> PlanDiff:
        """The plan diff of mode `b` against mode `a` (plan_diff.plan_diff), each run's bytes from `costs`;
        made when first asked for and kept. Both must be runs with kernels."""
        found = self._plan_diffs.get((a, b))
        if found is None:
            from fusionviz.analysis.plan_diff import plan_diff

            runs = {r.mode: r for r in self.drawable}
            found = plan_diff(runs[a], runs[b], self._costs_of(a), self._costs_of(b))
            self._plan_diffs[(a, b)] = found
        return found

    def _costs_of(self, mode: str) -> list[Cost | None] | None:
        costs = self.costs.get(mode)
        return costs.costs if costs is not None else None

    def focus(self, mode: str | None = None) -> ModeRun | None:
        """The compiled run a view is about: `mode` when it ran, else (no mode given) the first that ran."""
        compiled = [r for r in self.drawable if r.mode != "eager"]
        chosen = next((r for r in compiled if r.mode == mode), None) if mode else None
        return chosen or (compiled[0] if compiled and mode is None else None)

    def caption_fields(self, mode: str | None = None) -> dict[str, str]:
        """Every caption field a talk's template may use (records.talk.CAPTION_FIELDS), for `mode`."""
        from fusionviz.analysis.captions import caption_values

        run = self.focus(mode)
        return caption_values(self.session, run, mode, self.comparisons.get(run.mode) if run else None,
                              self._kernel_count(self.session.run("eager")), self._kernel_count(run),
                              self.busy.get("eager"))

    def _kernel_count(self, run: ModeRun | None) -> int | None:
        """The kernels of one iteration of `run` as its kernel table lists them; None where it was not profiled."""
        return len(self.runs[run.mode].kernels) if run is not None and run.summary is not None else None

    @cached_property
    def costs(self) -> dict[str, RunCosts]:
        """Every profiled run's kernel bytes, FLOPs and achieved rates against the session's ceilings, by mode
        (kernel_costs.session_costs)."""
        return session_costs(self.session, self.session.ceilings)

    @cached_property
    def bytes_moved(self) -> BytesMoved:
        """Bytes per iteration of every run, estimated and measured, and what fusion kept on chip
        (bytes_moved.bytes_moved)."""
        from fusionviz.analysis.bytes_moved import bytes_moved

        return bytes_moved(self.drawable, self.costs, self.collapses)

    @cached_property
    def memory(self) -> dict[str, MemoryFigures]:
        """Each mode's memory as measured in a fresh process, what a train pass saves and recomputes
        (memory.memory_figures), by mode; empty for a session recorded without it."""
        from fusionviz.analysis.memory import memory_figures

        return memory_figures(self.session)

    @cached_property
    def memory_timeline(self) -> pd.DataFrame:
        """One iteration's memory per mode by the op that made each block (memory.memory_timeline)."""
        from fusionviz.analysis.memory import memory_timeline

        return memory_timeline(self.session)

    @cached_property
    def coverage(self) -> dict[str, Coverage]:
        """What each CUDA-graph mode's graphs captured and skipped, and its input copies per call
        (cuda_graphs.coverage), by mode."""
        from fusionviz.analysis.cuda_graphs import coverage

        found = {r.mode: coverage(r, self.session) for r in self.session.runs if r.ok}
        return {mode: c for mode, c in found.items() if c is not None}

    @cached_property
    def proposals(self) -> list[Proposal]:
        """The variants (and the advice, where no option does it) the session's diagnosis points to, each with
        its evidence and what it expects to change (proposals.proposals)."""
        from fusionviz.analysis.proposals import proposals

        if self.session.source == "trace" or self.grid is not None or self.session.sweep is not None:
            return []
        separations = {mode: view.separations for mode, view in self.source_views.items()}
        return proposals(self.session, self.bounds, self.coverage, separations)

    @cached_property
    def ladder(self) -> list[Step]:
        """The attribution ladder from eager to each compiled mode (ladder.ladder); empty without timing."""
        if self.session.timing is None:
            return []
        from fusionviz.analysis.ladder import ladder

        return ladder(self.session)

    @cached_property
    def methodology(self) -> Methodology | None:
        """The naive loop set against the proper measurement, where the session recorded one."""
        from fusionviz.analysis.methodology import methodology

        return methodology(self.session, self.latencies, self.speedups)

    @cached_property
    def grid(self) -> GridReport | None:
        """A crossover grid's cells as a table and a sentence, where the session is a grid."""
        if self.session.grid is None:
            return None
        from fusionviz.analysis.grid import grid_report

        return grid_report(self.session)

    @cached_property
    def sweep(self) -> SweepReport | None:
        """A shape sweep's tables, where the session is a sweep."""
        from fusionviz.analysis.sweep import sweep_report

        return sweep_report(self.session)


_DIGESTS: dict[int, str] = {}  # a live session's digest by its id, dropped when it is freed
_REPORTS: LRU[str, Report] = LRU(KEPT)  # by digest


def digest(session: Session) -> str:
    """The digest of the session's content, taken once per session object: sessions are never changed after
    they are made or opened."""
    found = _DIGESTS.get(id(session))
    if found is None:
        import hashlib  # here: a one-shot `inspect` never takes a digest, and OpenSSL's import is 3 ms

        found = hashlib.blake2b(msgspec.msgpack.encode(session), digest_size=16).hexdigest()
        _DIGESTS[id(session)] = found
        weakref.finalize(session, _DIGESTS.pop, id(session), None)
    return found


def analyse(session: Session) -> Report:
    """The one report of this session's content: made on the first call, the same object after."""
    key = digest(session)
    found = _REPORTS.get(key)
    if found is None:
        found = Report(session)
        _REPORTS.put(key, found)
    return found
