"""Opening files: a fusionviz session or a plain torch.profiler Chrome trace (either may be gzipped), as a
Session, so that both draw with the same views. No torch: opening a file costs reading JSON only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fusionviz.errors import SessionFileError, TraceError
from fusionviz.records.config import RunConfig
from fusionviz.records.limits import Limits, inflate, read_file
from fusionviz.records.session import SESSION_KIND, Environment, ModeRun, Session
from fusionviz.records.session_file import read_json_bytes
from fusionviz.records.trace import IterationChoice, ParsedTrace, parse_trace
from fusionviz.records.trace_events import read_trace


def session_from_trace(parsed_data: Any, label: str, iterations: IterationChoice = "steps") -> Session:
    """A Session holding one ModeRun read from a plain torch.profiler Chrome trace, so the trace draws
    with the same timeline, table and statistics as a fusionviz run. `iterations` as in `parse_trace`.
    Raises TraceError (not a trace) or ConfigError (`iterations` does not apply)."""
    return session_from_parsed(parse_trace(parsed_data, iterations), label)


def session_from_parsed(parsed: ParsedTrace, label: str) -> Session:
    """A trace already read into tables (one rank of a job), as `session_from_trace` makes it."""
    run = ModeRun(mode=label)
    _keep(run, parsed)
    environment = Environment(device_name=f"{parsed.device_kind} trace", device_kind=parsed.device_kind)
    return Session(config=RunConfig(model=label, device="cpu"), environment=environment, runs=[run],
                   source="trace", label=label)


def open_path(path: Path, iterations: IterationChoice = "steps") -> Session:
    """`open_file` of a file on disk, read no further than the file cap (`limits.read_file`)."""
    return open_file(read_file(path), str(path), iterations)


def open_file(raw: bytes, name: str, iterations: IterationChoice = "steps") -> Session:
    """A session file or a Chrome trace, as a Session; `iterations` applies to a trace. Every value is checked
    on the way in (the caps of `limits`, the trace reader's event checks, the session's types), so a file
    either opens or is refused with a SessionFileError that says why in one line; ConfigError when
    `iterations` does not apply to the trace. A session is labelled by the name it was opened as: the label a
    recording script wrote (a path on the machine that recorded it, `..._run1.json.gz`) would stamp its charts
    with a file nobody has."""
    limits = Limits.from_env()
    limits.check_file_size(len(raw), name)
    try:
        document = read_trace(raw, name, limits)  # a trace's events, typed; of a session, only its kind
        if document.kind != SESSION_KIND:
            return session_from_trace(document, trace_label(name), iterations)
    except TraceError as exc:
        raise SessionFileError(f"{name} is neither a fusionviz session nor a torch.profiler trace: {exc}") from exc
    session = Session.from_dict(read_json_bytes(inflate(raw, name, limits), name))  # every field
    session.source = "recorded"
    session.label = name
    for run in session.runs:
        _reread(run, name)
    return session


def _reread(run: ModeRun, name: str) -> None:
    """Read a run's kept Chrome trace again with this version's reader: the kernel tables and per-iteration
    figures are derived from it, so a session recorded before a change in counting shows today's figures."""
    try:
        trace = run.chrome_trace()
        if trace is None:
            return
        _keep(run, parse_trace(trace))
    except (SessionFileError, ValueError) as exc:  # binascii.Error, a JSON error, or the reader's refusal
        raise SessionFileError(f"{name}: the profiler trace kept for {run.mode} is damaged: {exc}") from exc


def _keep(run: ModeRun, parsed: ParsedTrace) -> None:
    run.kernels = parsed.kernel_rows
    run.cpu_ops = parsed.cpu_op_rows
    run.summary = parsed.summary


def trace_label(name: str) -> str:
    """`run.pt.trace.json.gz` → `run.pt.trace`: the label a trace's lane gets."""
    base = name.rsplit("/", 1)[-1]
    for suffix in (".gz", ".json"):
        base = base.removesuffix(suffix)
    return base
