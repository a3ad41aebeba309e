"""The user's lines in stack traces as torch writes them: Python's traceback text, the form in which FX keeps a
node's `meta["stack_trace"]` and Inductor its kernels' stack traces (`  File "/src/model.py", line 12, in
forward` then the line's text), innermost frame last."""

from __future__ import annotations

import re
from typing import Any

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def innermost_line(stack_trace: str) -> str:
    """The innermost frame of a stack trace, as "file:line"; "" where it names none."""
    frames = _FRAME.findall(stack_trace)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else ""


def stack_lines(value: Any) -> list[str]:
    """The innermost frame of each stack trace in a trace event's `stack` (a list of texts) or `stack_trace` (one
    text), each once, in order, as "file:line"; [] for a value of any other form."""
    texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return list(dict.fromkeys(line for text in texts if isinstance(text, str) and (line := innermost_line(text))))
