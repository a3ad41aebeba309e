"""Everything the CLI prints goes through here: results on stdout as plain text that pipes (tables aligned from
their cells, pandas frames, strict JSON), progress and notes on stderr."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    import pandas as pd

    from fusionviz.measure.protocol import CellCounts


class Column(msgspec.Struct, frozen=True):
    """A column of a text table: `fmt` is each value's format spec, `suffix` follows each value (a unit, "%"),
    `width` is the least width (the column widens to its widest cell), `gap` the spaces before it."""

    header: str = ""
    fmt: str = ""
    align: Literal["<", ">"] = ">"
    width: int = 0
    suffix: str = ""
    gap: int = 1


def table(columns: Sequence[Column], rows: Iterable[Sequence[Any]], *, indent: str = "",
          header: bool = True) -> list[str]:
    """The lines of a table. A last column aligned left is not padded, so that no line ends in spaces."""
    cells = [[f"{value:{c.fmt}}{c.suffix}" for c, value in zip(columns, row, strict=True)] for row in rows]
    heads = [c.header for c in columns] if header else []
    widths = [max([c.width, len(c.header) if header else 0, *(len(r[i]) for r in cells)])
              for i, c in enumerate(columns)]
    last = len(columns) - 1

    def line(texts: Sequence[str]) -> str:
        return indent + "".join(
            (" " * c.gap if i else "") + (text if i == last and c.align == "<" else f"{text:{c.align}{w}}")
            for i, (c, text, w) in enumerate(zip(columns, texts, widths, strict=True)))

    return [line(r) for r in ([heads] if header else []) + cells]


def frame(data: pd.DataFrame, digits: int) -> str:
    """A DataFrame as text, without its index, floats to `digits` significant digits."""
    return data.to_string(index=False, float_format=lambda v: f"{v:.{digits}g}")


# msgspec writes a NaN or an infinity as null, so that `--json` is strict JSON any parser reads
_JSON = msgspec.json.Encoder()


def json_text(value: Any, indent: int | None = None) -> str:
    """`value` as strict JSON: on one line, or `indent` spaces a level."""
    data = _JSON.encode(value)
    return (data if indent is None else msgspec.json.format(data, indent=indent)).decode()


def write(*lines: str) -> None:
    """Lines to stdout; a reader that closed the pipe ends the output quietly (no traceback, exit 0), as
    `| head` expects. stdout is pointed at /dev/null so that Python's flush at exit does not fail again."""
    try:
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def note(text: str) -> None:
    """A line on stderr: a warning, a failed mode, an error."""
    print(text, file=sys.stderr, flush=True)


def cell_bar(counts: CellCounts, width: int = 30, unit: str = "cells") -> None:
    """A grid's cells (or the library's rows) as a bar on stderr, a line whenever one starts or ends (between the
    stages' lines)."""
    filled = width * counts.done // max(counts.total, 1)
    note(f"[{'#' * filled}{'-' * (width - filled)}] {counts.done}/{counts.total} {unit} done · {counts.running} "
         f"running · {counts.queued} queued")


class Ticker:
    """Progress on stderr: the stage and the elapsed time."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self, stage: str) -> None:
        note(f"[{time.monotonic() - self.start:7.1f} s] {stage}")
