"""Bytes moved per iteration, eager against each compiled mode: the estimate (`kernel_costs`, split by where
its figures came from), the DRAM bytes the hardware counted where counters were folded in (`dram_counts`), the
kernels and launches per iteration, and the intermediates fusion kept on chip.

The intermediates kept on chip come from provenance: the links of one iteration (`links`, from Inductor's
records) group eager kernels with the compiled kernels that compute the same nodes; in each group, eager wrote
every node's result to memory, the compiled kernels write only what leaves the group, so the difference of
their writes is the results that never reached memory (each also spared its read). A session linked by
kernel names alone (recorded before provenance, a plain trace) says so instead.

Seed 2's "70% less memory traffic" is checked against these figures: measured where both runs were counted,
else estimated.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fusionviz.analysis.dram_counts import counted_costs
from fusionviz.analysis.headline import MECHANISM_CHARS, Headline, read_size, size_words
from fusionviz.analysis.kernel_costs import RunCosts
from fusionviz.analysis.links import Collapse
from fusionviz.analysis.op_costs import Cost
from fusionviz.analysis.provenance import of_iteration
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.op_args import run_op_args
from fusionviz.records.session import ModeRun

CLAIM_PCT = 70  # seed 2's "70% less memory traffic"
SAME_PCT = 5  # a change of bytes within this many percent is "about as many"
GEMM_BOUND = 0.5  # eager's kernel time in GEMMs from which their traffic, not the chain's, is named as the reason
NO_PROVENANCE = ("this session links its kernels by names, not Inductor's records (recorded before schema 3, or "
                 "a plain trace): which intermediates stayed on chip is not known")


@dataclass(frozen=True)
class OnChip:
    """One group of eager kernels and the compiled kernels that compute their nodes: the results that no longer
    reach memory (`intermediates`, eager kernels less compiled ones) and their bytes (eager's writes less the
    compiled kernels')."""

    kernels: tuple[str, ...]  # the compiled kernels, short names
    absorbed: tuple[tuple[str, int], ...]  # each eager kernel's launching op and the bytes it wrote
    intermediates: int
    bytes: int


@dataclass(frozen=True)
class RunBytes:
    """One run's bytes per iteration: `estimated` (`kernel_costs.RunCosts.bytes_per_iteration`) and its parts
    by source, the share of kernel time whose bytes are known, the DRAM bytes counted (`measured`, None where
    not counted, then `measured_note` says why), kernels and launches (None where the trace does not count
    them), and what fusion kept on chip (None where unknown: `on_chip_note` says why)."""

    mode: str
    estimated: int | None
    by_source: dict[str, float]
    known_pct: float
    measured: int | None
    measured_note: str
    kernels: float
    launches: float | None
    on_chip: tuple[OnChip, ...] | None
    on_chip_note: str = ""  # why on_chip is None, or what it leaves out

    @property
    def kept_bytes(self) -> int:
        return sum(g.bytes for g in self.on_chip or ())

    @property
    def kept_intermediates(self) -> int:
        return sum(g.intermediates for g in self.on_chip or ())


@dataclass(frozen=True)
class BytesMoved:
    """Every profiled run's bytes, eager first; `why` says why none are known ("" where some are)."""

    runs: list[RunBytes]
    why: str

    def run(self, mode: str) -> RunBytes | None:
        return next((r for r in self.runs if r.mode == mode), None)


def bytes_moved(drawable: list[ModeRun], costs: dict[str, RunCosts], collapses: dict[str, Collapse]) -> BytesMoved:
    """The bytes of every profiled run (`drawable`, eager among them) from its kernels' costs
    (`kernel_costs.session_costs`), and what fusion kept on chip from the links of each compiled run to eager
    (`links.collapse`, by mode)."""
    runs = []
    eager = next((r for r in drawable if r.mode == "eager"), None)
    for run in sorted(drawable, key=lambda r: r.mode != "eager"):
        run_costs = costs.get(run.mode)
        if run_costs is None or run.summary is None:
            continue
        iterations = max(run.summary.iterations, 1)
        by_source: dict[str, float] = defaultdict(float)
        for row, cost in zip(run.kernels, run_costs.costs, strict=True):
            if cost is not None and row.kernel_class != MEMORY_CLASS:
                by_source[cost.source] += cost.total / iterations
        counted = counted_costs(run)
        on_chip, note = (None, "") if run.mode == "eager" else ((), "") if run.mode == GRAPHED_EAGER else \
            _on_chip(run, eager, collapses.get(run.mode), costs)
        runs.append(RunBytes(run.mode, run_costs.bytes_per_iteration, dict(by_source), run_costs.bytes_known_pct,
                             counted.per_iteration, counted.note, float(run.summary.kernels_per_iteration),
                             run.summary.launches_per_iteration, on_chip, note))
    known = any(r.estimated is not None or r.measured is not None for r in runs)
    return BytesMoved(runs, "" if known else _why_none(drawable))


def _on_chip(run: ModeRun, eager: ModeRun | None, collapse: Collapse | None, costs: dict[str, RunCosts]
             ) -> tuple[tuple[OnChip, ...] | None, str]:
    """The groups of the run's links to eager (`collapse`) whose results fusion kept on chip."""
    if collapse is None or eager is None:
        return None, "no eager run to compare with"
    if collapse.links.kind != "provenance":
        return None, NO_PROVENANCE
    eager_costs = of_iteration(eager, costs["eager"].costs)
    run_costs = of_iteration(run, costs[run.mode].costs)
    links = collapse.links.table
    found, unknown = [], 0
    for eager_rows, rows in _groups(list(zip(links.eager_index.astype(int), links.compiled_index.astype(int),
                                             strict=True))):
        absorbed = [(str(collapse.eager.launch_op[i]), eager_costs[i]) for i in eager_rows]
        eager_written, written = _written([c for _, c in absorbed]), _written([run_costs[i] for i in rows])
        if eager_written is None or written is None:
            unknown += 1
            continue
        if eager_written <= written:
            continue
        names = tuple(dict.fromkeys(str(collapse.compiled.short_name[i]) for i in rows))
        found.append(OnChip(names, tuple((op, c.written or 0) for op, c in absorbed if c is not None),
                            max(len(eager_rows) - len(rows), 0), eager_written - written))
    if not unknown:
        return tuple(found), ""
    note = f"{unknown} group{'s' if unknown > 1 else ''} of linked kernels whose bytes are not all known"
    return (tuple(found), f"and {note}") if found else (None, f"what stayed on chip is not known: {note}")


def _written(costs: list[Cost | None]) -> int | None:
    """The bytes a group of kernels wrote; None where one kernel's are not known."""
    if any(c is None or c.written is None for c in costs):
        return None
    return sum(c.written or 0 for c in costs if c is not None)


def _groups(links: list[tuple[int, int]]) -> list[tuple[list[int], list[int]]]:
    """The connected parts of the links (eager row, compiled row): each part's eager rows and compiled rows."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def root(node: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for e, c in links:
        parent[root(("e", e))] = root(("c", c))
    parts: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for node in sorted(parent):
        side, index = node
        part = parts.setdefault(root(node), ([], []))
        (part[0] if side == "e" else part[1]).append(index)
    return list(parts.values())


def _why_none(runs: list[ModeRun]) -> str:
    """Why no run's bytes are known: what the trace lacks for eager's ops and for Inductor's kernels."""
    shapes = any(op.dims for run in runs for op in run_op_args(run).values())
    code = any(run.output_code for run in runs)
    missing = []
    if not shapes:
        missing.append("its ops' input shapes (record the trace with record_shapes=True)")
    if not code:
        missing.append("Inductor's wrapper code or kernel_num_gb for compiled kernels (a fusionviz session keeps "
                       "the code; torch._inductor.config.benchmark_kernel puts the figures in a trace)")
    if not missing:
        return "No kernel's bytes are known: none of these kernels is of a kind whose bytes fusionviz can count."
    return "No kernel's bytes are known, so there is nothing to draw: the trace lacks " + " and ".join(missing) + "."


def _change(before: int, after: int) -> tuple[str, str]:
    """`after` against `before`: its kind ("fewer", "same", "more") and its words ("95% fewer", "about as many",
    "2.4x as many")."""
    ratio = after / before
    if ratio < 1 - SAME_PCT / 100:
        return "fewer", f"{1 - ratio:.0%} fewer"
    if ratio > 1 + SAME_PCT / 100:
        return "more", f"{ratio:.1f}x as many"
    return "same", "about as many"


def _gemm_share(run: ModeRun) -> float:
    """The share of the run's kernel time (all profiled iterations) spent in GEMMs."""
    kernels = [r for r in run.kernels if r.kernel_class != MEMORY_CLASS]
    total = sum(float(r.dur_us) for r in kernels)
    return sum(float(r.dur_us) for r in kernels if r.kernel_class == "gemm") / total if total else 0.0


def moved_pair(found: BytesMoved, mode: str) -> tuple[int, int] | None:
    """Eager's bytes per iteration and `mode`'s as the bytes view judges them (`found`: `bytes_moved`): the DRAM
    counters' where both runs were counted, else the estimate where it knows nearly all of both runs' kernel
    time; None where neither can be set against the other."""
    eager, run = found.run("eager"), found.run(mode)
    if found.why or eager is None or run is None:
        return None
    if eager.measured and run.measured is not None:
        return eager.measured, run.measured
    if eager.estimated and run.estimated is not None and all(r.known_pct >= 100 - SAME_PCT for r in (eager, run)):
        return eager.estimated, run.estimated
    return None


def _kept_words(run: RunBytes) -> str:
    """What fusion kept on chip in `run`: "17 intermediates (1.14 GB) stay on chip", or why that is not known."""
    if run.on_chip is None:
        return run.on_chip_note
    if run.kept_bytes:
        many = run.kept_intermediates
        return (f"{many} intermediate{'s' if many != 1 else ''} ({size_words(run.kept_bytes)}) "
                f"{'stay' if many != 1 else 'stays'} on chip")
    return "nothing stays on chip"


def _claim(before: int, after: int, eager_run: ModeRun | None) -> tuple[bool, str]:
    """Whether "70% less memory traffic" holds from `before` to `after`, and, where it does not and eager's GEMMs
    take most of its kernel time, that reason (" (GEMMs take 94% of eager's kernel time)")."""
    if 100 * (1 - after / before) >= CLAIM_PCT:
        return True, ""
    gemm = _gemm_share(eager_run) if eager_run else 0.0
    return False, f" (GEMMs take {gemm:.0%} of eager's kernel time)" if gemm >= GEMM_BOUND else ""


def bytes_caption(found: BytesMoved, focus: ModeRun | None, eager_run: ModeRun | None) -> str:
    """The bytes of the compiled run a view is about (`focus`) against eager's (`found`: `bytes_moved`), estimated
    and measured, and whether "70% less memory traffic" holds: judged by the DRAM counters where both runs were
    counted, else by the estimate, and not at all where the estimate knows too little of either run's kernel
    time. `eager_run`'s GEMMs, where they dominate, are named as the reason it does not."""
    if found.why:
        return found.why
    eager, run = found.run("eager"), found.run(focus.mode) if focus else None
    if eager is None or run is None:
        return "No compiled mode was profiled beside eager: there is nothing to set eager's bytes against."
    estimated = (eager.estimated, run.estimated) if eager.estimated and run.estimated is not None else None
    measured = (eager.measured, run.measured) if eager.measured and run.measured is not None else None
    if measured is None and estimated is None:
        lacking = "Eager's" if not (eager.estimated or eager.measured) else f"{run.mode}'s"
        return f"{lacking} bytes are not known: there is nothing to compare."
    claim = f"\"{CLAIM_PCT}% less memory traffic\""
    partial = [r for r in (eager, run) if r.known_pct < 100 - SAME_PCT]
    if measured is None and partial:
        assert estimated is not None
        known = ", ".join(f"{r.mode}'s bytes are known for {r.known_pct:.0f}% of its kernel time" for r in partial)
        return (f"{run.mode} moves at least {size_words(estimated[1])} against eager's {size_words(estimated[0])} "
                f"(estimated; {known}): whether {claim} holds cannot be told.")
    text = f"{run.mode} moves {_comparison(estimated, measured)}"
    if run.mode == GRAPHED_EAGER:
        return text + ": the same kernels, replayed from one CUDA graph."
    holds, reason = _claim(*(measured or estimated or (1, 1)), eager_run)
    return f"{text}: {claim} {'holds here' if holds else 'does not hold here' + reason}; {_kept_words(run)}."


def bytes_headline(found: BytesMoved, focus: ModeRun | None, eager_run: ModeRun | None) -> Headline:
    """The bytes view's headline: eager's bytes per iteration against the compiled run's (`moved_pair`), rounded
    for reading, and whether "70% less memory traffic" holds; its detail the caption's sentence
    (`bytes_caption`)."""
    said = bytes_caption(found, focus, eager_run)
    pair = moved_pair(found, focus.mode) if focus else None
    eager, run = found.run("eager"), found.run(focus.mode) if focus else None
    if found.why:
        return Headline("No kernel's bytes are known", "", (said,))
    if eager is None or run is None:
        return Headline("No compiled mode was profiled beside eager", "", (said,))
    if pair is None:
        if run.estimated is None or not eager.estimated:
            return Headline(f"{'Eager' if not eager.estimated else run.mode}: bytes not known", "", (said,))
        return Headline(f"{run.mode} moves at least {read_size(run.estimated)}, eager {read_size(eager.estimated)}",
                        f"Too few kernels' bytes are known to tell whether \"{CLAIM_PCT}% less memory traffic\" "
                        "holds.", (said,))
    text = f"{run.mode}: {read_size(pair[0])} → {read_size(pair[1])} moved per iteration"
    if run.mode == GRAPHED_EAGER:
        return Headline(text, "The same kernels, replayed from one CUDA graph.", (said,))
    holds, reason = _claim(*pair, eager_run)
    claim = f"\"{CLAIM_PCT}% less memory traffic\" {'holds' if holds else 'does not hold' + reason}"
    kept = f"{claim}; {_kept_words(run)}."
    return Headline(text, kept if len(kept) <= MECHANISM_CHARS else claim + ".", (said,))


def _comparison(estimated: tuple[int, int] | None, measured: tuple[int, int] | None) -> str:
    """"95% fewer bytes than eager (2.89 GB → 134 MB estimated; DRAM 2.45 GB → 113 MB measured)", each judged
    apart where the estimate and the counters disagree."""
    said = {name: (*_change(*pair), f"{size_words(pair[0])} → {size_words(pair[1])}")
            for name, pair in (("estimated", estimated), ("measured", measured)) if pair is not None}
    if len({kind for kind, _, _ in said.values()}) == 1:
        kind, words, _ = said.get("measured", said["estimated"])
        both = "; ".join(f"{f} estimated" if k == "estimated" else f"DRAM {f} measured"
                         for k, (_, _, f) in said.items())
        return f"{words} bytes {'than' if kind == 'fewer' else 'as'} eager ({both})"
    kind, guessed, guessed_figures = said["estimated"]
    _, counted, counted_figures = said["measured"]
    return (f"{guessed} bytes {'than' if kind == 'fewer' else 'as'} eager by the estimate ({guessed_figures}), "
            f"{counted} on DRAM ({counted_figures})")
