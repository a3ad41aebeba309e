"""The user's lines in stack traces as torch writes them: Python's traceback text, the form in which FX keeps a
node's `meta["stack_trace"]` and Inductor its kernels' stack traces (`  File "/src/model.py", line 12, in
forward` then the line's text), innermost frame last."""

from __future__ import annotations

import os.path
import re
from collections.abc import Callable
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


_FILE = re.compile(r'File "([^"]+)"')


def module_files(modules: dict[str, Any]) -> dict[str, str]:
    """The Python files of loaded modules (`sys.modules`), by their path relative to the import root
    ("fusionviz/measure/zoo.py", "transformers/models/gpt2/modeling_gpt2.py", a package's "…/__init__.py")."""
    found: dict[str, str] = {}
    for name, module in list(modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            tail = "/__init__.py" if file.endswith("__init__.py") else ".py"
            found[name.replace(".", "/") + tail] = file
    return found


def rebased(stack_trace: str, files: dict[str, str], exists: Callable[[str], bool] = os.path.isfile) -> str:
    """A stack trace with each file named as this process loaded it (`files`: `module_files`). Inductor's
    FX-graph cache replays the stack traces recorded by the process that compiled first, which may have run
    another checkout of the same code or another environment's copy of a library: a frame's path is replaced by
    the file of the loaded module whose import path its path ends with, the longest such. A single file name
    ("model.py", a top-level module) is taken only for a path that is no file here (`exists`): two checkouts on
    one machine both exist, and a module of one name may be another's."""
    here = set(files.values())

    def local(match: re.Match[str]) -> str:
        path = match.group(1)
        if path in here:
            return match.group(0)
        parts = path.replace("\\", "/").split("/")
        for start in range(len(parts)):
            tail = "/".join(parts[start:])
            if tail in files and (len(parts) - start > 1 or not exists(path)):
                return f'File "{files[tail]}"'
        return match.group(0)

    return _FILE.sub(local, stack_trace)
