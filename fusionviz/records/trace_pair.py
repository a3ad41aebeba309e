"""A user's own pair of plain torch.profiler traces, one of the model run eagerly and one compiled, as one
session: its runs are named `eager` and the compiled mode, so the lab's views (verdict, timeline, what fused
into what, the animation) draw it as they draw a fusionviz run. Plain traces carry no timing outside the
profiler, so the pair has none, and says so."""

from __future__ import annotations

import dataclasses

from fusionviz.errors import SessionFileError
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Environment, Session

PAIR_MODEL = "your model"


def trace_pair(eager: Session, compiled: Session, mode: str = "default") -> Session:
    """`eager` and `compiled`, each opened from a plain trace (`records.files.open_file`), as one session.
    Raises SessionFileError when either is a fusionviz session rather than a plain trace."""
    for side, opened in (("eager", eager), ("compiled", compiled)):
        if opened.source != "trace" or len(opened.runs) != 1:
            raise SessionFileError(f"{opened.label or side} is a fusionviz session, not a plain torch.profiler "
                                   f"trace: open it as a session instead of as the {side} trace")
    kind = compiled.environment.device_kind
    runs = [dataclasses.replace(eager.runs[0], mode="eager"), dataclasses.replace(compiled.runs[0], mode=mode)]
    config = RunConfig(model=PAIR_MODEL, modes=("eager", mode), device="cuda" if kind == "cuda" else "cpu")
    return Session(config=config, environment=Environment(device_name=f"{kind} traces", device_kind=kind), runs=runs,
                   source="trace", label=f"{eager.label} (eager) + {compiled.label} ({mode})")
