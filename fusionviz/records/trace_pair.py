"""Two runs from two files as one session, so that the lab's views draw them together on one µs axis: a user's
own pair of plain torch.profiler traces, one of the model run eagerly and one compiled (`trace_pair`: runs named
`eager` and the compiled mode, so the verdict, timeline, what fused into what and the animation draw it as a
fusionviz run), or any two runs side by side in the Trace explorer (`pair_session`). Plain traces carry no
timing outside the profiler, so a pair has none, and says so."""

from __future__ import annotations

import msgspec

from fusionviz.errors import SessionFileError
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Environment, ModeRun, Session

PAIR_MODEL = "your model"


def trace_pair(eager: Session, compiled: Session, mode: str = "default") -> Session:
    """`eager` and `compiled`, each opened from a plain trace (`records.files.open_file`), as one session.
    Raises SessionFileError when either is a fusionviz session rather than a plain trace."""
    for side, opened in (("eager", eager), ("compiled", compiled)):
        if opened.source != "trace" or len(opened.runs) != 1:
            raise SessionFileError(f"{opened.label or side} is a fusionviz session, not a plain torch.profiler "
                                   f"trace: open it as a session instead of as the {side} trace")
    kind = compiled.environment.device_kind
    config = RunConfig(model=PAIR_MODEL, modes=("eager", mode), device="cuda" if kind == "cuda" else "cpu")
    return _paired((eager.runs[0], "eager"), (compiled.runs[0], mode), config,
                   Environment(device_name=f"{kind} traces", device_kind=kind),
                   f"{eager.label} (eager) + {compiled.label} ({mode})")


def pair_session(a: ModeRun, b: ModeRun, label_a: str, label_b: str) -> Session:
    """Two runs (from two files) as one session, their modes `A · label_a` and `B · label_b`."""
    return _paired((a, f"A · {label_a}"), (b, f"B · {label_b}"), RunConfig(model="comparison"), Environment(),
                   f"{label_a} vs {label_b}")


def _paired(first: tuple[ModeRun, str], second: tuple[ModeRun, str], config: RunConfig, environment: Environment,
            label: str) -> Session:
    """The one builder of a pair: each run under its new mode name, in a session of plain traces."""
    runs = [msgspec.structs.replace(run, mode=mode) for run, mode in (first, second)]
    return Session(config=config, environment=environment, runs=runs, source="trace", label=label)
