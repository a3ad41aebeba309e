"""One error root for everything fusionviz refuses or cannot do, each with a message meant for the user.

The CLI catches `FusionvizError` and prints its message with the error's exit code; the app shows the
message in an error box. Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Literal

WorkerFailure = Literal["config", "oom", "timeout", "crash", "ended", "error"]


class FusionvizError(Exception):
    """Something the user can act on; `str(error)` says what and what to change."""

    exit_code = 2


class ConfigError(FusionvizError, ValueError):
    """A configuration that cannot run; the message says what to change."""


class SessionFileError(FusionvizError, ValueError):
    """A file that is not a session (or a trace) this version of fusionviz can read."""


class TraceError(SessionFileError):
    """A file that is not a torch.profiler Chrome trace, with what was found instead."""


class TalkFileError(FusionvizError, ValueError):
    """A talk file that cannot be read as scenes; the message names the line."""


class ExportError(FusionvizError, RuntimeError):
    """A chart that cannot be written as an image here (no browser to draw it with, or no kaleido)."""


class WorkerError(FusionvizError, RuntimeError):
    """A job that did not come back from the worker process; `kind` says how it failed."""

    exit_code = 1

    def __init__(self, message: str, kind: WorkerFailure = "error") -> None:
        super().__init__(message)
        self.kind: WorkerFailure = kind


class ContractFileError(FusionvizError, ValueError):
    """A fusion contract file (`snapshot`, `check`) that cannot be read: not TOML, not a contract, a value that
    does not fit, or a model fusionviz does not know."""
