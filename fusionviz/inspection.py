"""Opening files: a session or a plain torch.profiler Chrome trace, as a Session; and `inspect`'s report.

No torch import: inspecting a trace costs reading JSON only.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from fusionviz.config import RunConfig
from fusionviz.session import (
    SESSION_KIND,
    Environment,
    ModeRun,
    Session,
    SessionFileError,
    TraceSummary,
    read_json_bytes,
)
from fusionviz.trace import TraceError, parse_trace


def inspect_file(path: Path) -> dict[str, Any]:
    """`{"source", "runs": [{"label", "device", "iterations", "kernels_per_iteration",
    "gpu_busy_fraction", "kernels": [{"name", "class", "duration_us", "fused_ops"}]}]}`;
    `kernels` lists one iteration's kernels (the representative one) in launch order."""
    session = open_file(path.read_bytes(), str(path))
    env = session.environment
    if session.source == "trace":
        source, device = f"torch.profiler trace {path}", env.device_kind
    else:
        c = session.config
        source = (f"fusionviz session: {c.model}, dim {c.dim}, batch {c.batch}, {c.dtype}, {c.pass_}, "
                  f"captured {env.captured_at} on {env.device_name} with torch {env.torch_version}")
        device = env.device_name or c.device
    return {"source": source,
            "runs": [_run_report(r.mode, device, env.device_kind, r.summary, r.kernel_frame()) for r in session.runs]}


def _run_report(label: str, device: str, device_kind: str, summary: TraceSummary | None,
                kernels: pd.DataFrame) -> dict[str, Any]:
    if summary is None:
        return {"label": label, "device": device, "iterations": 0, "kernels_per_iteration": 0.0,
                "gpu_busy_fraction": None, "kernels": []}
    one = kernels[kernels.iteration == summary.representative_iteration].sort_values("start_us", kind="stable")
    return {
        "label": label, "device": device, "iterations": summary.iterations,
        "kernels_per_iteration": float(summary.kernels_per_iteration),
        "gpu_busy_fraction": summary.busy_fraction if device_kind == "cuda" else None,
        "kernels": [{"name": r.name, "class": r.kernel_class, "duration_us": float(r.dur_us),
                     "fused_ops": list(r.fused_ops)} for r in one.itertuples()],
    }


def session_from_trace(parsed_data: Any, label: str) -> Session:
    """A Session holding one ModeRun read from a plain torch.profiler Chrome trace, so the trace draws
    with the same timeline, table and statistics as a fusionviz run. Raises TraceError."""
    parsed = parse_trace(parsed_data)
    run = ModeRun(
        mode=label, summary=parsed.summary,
        kernels=parsed.kernels.to_dict("records"), cpu_ops=parsed.cpu_ops.to_dict("records"),
    )
    environment = Environment(device_name=f"{parsed.device_kind} trace", device_kind=parsed.device_kind)
    return Session(config=RunConfig(model=label, device="cpu"), environment=environment, runs=[run],
                   source="trace", label=label)


def open_file(raw: bytes, name: str) -> Session:
    """A session file or a Chrome trace (either may be gzipped), as a Session. Raises SessionFileError."""
    data = read_json_bytes(raw, name)
    if isinstance(data, dict) and data.get("kind") == SESSION_KIND:
        session = Session.from_dict(data)
        session.source = "recorded"
        session.label = session.label or name
        return session
    try:
        return session_from_trace(data, trace_label(name))
    except TraceError as exc:
        raise SessionFileError(f"{name} is neither a fusionviz session nor a torch.profiler trace: {exc}") from exc


def trace_label(name: str) -> str:
    """`run.pt.trace.json.gz` → `run.pt.trace`: the label a trace's lane gets."""
    base = name.rsplit("/", 1)[-1]
    for suffix in (".gz", ".json"):
        base = base.removesuffix(suffix)
    return base


def pair_session(a: ModeRun, b: ModeRun, label_a: str, label_b: str) -> Session:
    """Two runs (from two files) as one session, so they share a timeline with one µs axis."""
    runs = [dataclasses.replace(a, mode=f"A · {label_a}"), dataclasses.replace(b, mode=f"B · {label_b}")]
    return Session(config=RunConfig(model="comparison"), environment=Environment(), runs=runs, source="trace",
                   label=f"{label_a} vs {label_b}")
