"""Short sentences and titles computed from a session: where the data came from, how a trace was read, what
a collapse shows, what could have skewed the timing."""

from __future__ import annotations

import msgspec

from fusionviz.records.session import Session, TraceSummary


class Source(msgspec.Struct, frozen=True):
    """Where a session's data came from, said once: the page's line and a slide's stamp are worded from it."""

    source: str  # Session.source: "live", "recorded" or "trace"
    label: str  # the session's label (a trace's file name)
    device: str  # the device's name; the configured device (live) or the device kind where it has none
    device_kind: str  # "cuda" or "cpu"
    torch: str
    captured_at: str  # ISO 8601, "" when unknown

    @classmethod
    def of(cls, session: Session) -> Source:
        env = session.environment
        fallback = session.config.device if session.source == "live" else env.device_kind
        return cls(session.source, session.label, env.device_name or fallback, env.device_kind,
                   env.torch_version, env.captured_at)

    def line(self, opened_as: str | None = None) -> str:
        """Where the data on screen came from, in one line; `opened_as` heads it with how the user opened it
        ("Recorded library: a.json.gz"), which the session alone cannot say."""
        if self.source == "trace":
            return (f"{opened_as} ({self.device_kind}; plain traces carry no timing)" if opened_as
                    else f"torch.profiler trace {self.label} ({self.device_kind})")
        if self.source == "live" and opened_as is None:
            return f"Live on this machine: {self.device}, torch {self.torch}"
        when = self.captured_at[:16].replace("T", " ")
        recorded = f"{self.device}, torch {self.torch}, {when}"
        return f"{opened_as} · {recorded}" if opened_as else f"Recorded session: {recorded}"

    @property
    def stamp(self) -> str:
        """The same, small enough for a slide's corner: "NVIDIA H200 · torch 2.11.0 · 2026-11-29", "live CPU ·
        torch 2.13.0 · 2026-11-30", or "torch.profiler traces · cuda"."""
        if self.source == "trace":
            return f"torch.profiler traces · {self.device_kind}"
        device = "CPU" if self.device_kind == "cpu" else self.device
        parts = [f"live {device}" if self.source == "live" else device, f"torch {self.torch}"]
        if self.captured_at:
            parts.append(self.captured_at[:10])
        return " · ".join(parts)


def collapse_title(mode: str, n_eager: int, n_compiled: int) -> str:
    """Says what happened to the kernel count per iteration; warns when the compiled mode runs more kernels."""
    if n_compiled > n_eager:
        return f"⚠ {mode} runs MORE kernels than eager: {n_eager} → {n_compiled} per iteration"
    if n_compiled == n_eager:
        return f"{mode}: {n_eager} → {n_compiled} kernels per iteration, nothing fused away"
    return f"{mode}: {n_eager} eager kernels collapse into {n_compiled} per iteration"


def per_iteration(summary: TraceSummary) -> str:
    """How a figure per iteration reads: "per iteration", "per call", or "in the whole trace"."""
    return {"steps": "per iteration", "calls": "per call", "trace": "in the whole trace"}[summary.iterations_from]


BUSY_CORES_WARNED = 0.5  # other processes taking half a core or more skew CPU timings
BUSY_CORES_NOTICED = 0.25  # below this, other processes are background noise


def load_warnings(session: Session) -> list[str]:
    """What could have skewed the timing: other processes busy before or after the run (or taking cores the
    workers' threads needed), and timing processes that failed."""
    timing = session.timing
    if timing is None:
        return []
    notes = []
    threads = (session.config.threads or 0) if session.environment.device_kind == "cpu" else 0
    for when, load in (("before", timing.load_before), ("after", timing.load_after)):
        if load is None:
            continue
        crowded = threads and load.busy_cores >= BUSY_CORES_NOTICED and load.busy_cores + threads > load.cores
        if load.busy_cores >= BUSY_CORES_WARNED or crowded:
            who = f" ({'; '.join(load.others)})" if load.others else ""
            crowd = ("" if not crowded else f"; the workers' {threads} threads did not all have a core of their own"
                     if threads > 1 else "; the workers' one thread did not have a core of its own")
            notes.append(f"The machine was busy {when} the run: {load.busy_cores:.1f} of {load.cores} cores in use "
                         f"by other processes{who}, load average {load.load_average:.1f}{crowd}. Timings may be "
                         "skewed: compare modes within this session, not across sessions.")
    failed = [p for p in timing.processes if p.error]
    if failed:
        first = (failed[0].error or "").splitlines()[0]
        notes.append(f"{len(failed)} of {len(timing.processes)} timing processes failed ({first}); the figures "
                     "come from the others.")
    return notes


def trace_notes(summary: TraceSummary) -> list[str]:
    """Sentences on how a trace was read: the window (whole trace, calls), device events left out of every
    iteration, events placed by time, and device work fusionviz does not read."""
    notes = []
    if summary.iterations_from == "trace":
        calls = (f" It holds {summary.region_calls} top-level calls of one compiled region, and each can be "
                 "taken as an iteration instead." if summary.region_calls > 1 else "")
        notes.append("The trace has no ProfilerStep, so it is read as one window: its figures are for the whole "
                     f"trace, not per iteration.{calls}")
    elif summary.iterations_from == "calls":
        notes.append(f"Each of the {summary.iterations} top-level calls of the compiled region is taken as an "
                     "iteration (the trace has no ProfilerStep).")
    left_out = [(n, word) for n, word in ((summary.excluded_kernels, "kernel"),
                                          (summary.excluded_memory_ops, "memory operation")) if n]
    if left_out:
        what = " and ".join(f"{n:,} {word}{'' if n == 1 else 's'}" for n, word in left_out)
        where = {"steps": "outside the profiled steps", "calls": "outside the compiled-region calls",
                 "trace": "before the trace began (their launches are not in it)"}[summary.iterations_from]
        verb = "is" if sum(n for n, _ in left_out) == 1 else "are"
        notes.append(f"{what} launched {where} {verb} left out of every per-iteration figure.")
    if summary.placed_by_time:
        notes.append("The trace does not link device events to the calls that launched them (no correlation "
                     "data): they are placed in iterations by their own start times, so one that ran late may "
                     "land in the next iteration.")
    if summary.negative_durations:
        n = summary.negative_durations
        notes.append(f"{n:,} event{'' if n == 1 else 's'} of the trace give{'s' if n == 1 else ''} a negative "
                     "duration (the profiler writes one for an event cut off at the trace's end): read as 0 µs.")
    if summary.display_as_given:
        odd = ", ".join(f"{n:,} {field}" for field, n in summary.display_as_given.items())
        notes.append(f"Some fields that are only shown have an unusual form ({odd}): a stream given as text is "
                     "read as its number, a launch grid, block or input shapes given as text are shown as given.")
    if summary.device_note:
        notes.append(summary.device_note)
    return notes

