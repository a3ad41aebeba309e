"""A session file's text: its JSON read within the caps, with errors that name the file (`read_json_bytes`, which
the trace reader uses too), and an older schema's values brought up to today's shape (`upgrade`), before
`Session.from_dict` types them."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from fusionviz.errors import SessionFileError
from fusionviz.records.decode import DecodeError, shown
from fusionviz.records.kernels import KERNEL_COLUMNS, KernelRow
from fusionviz.records.limits import inflate


def read_json_bytes(raw: bytes | bytearray, name: str) -> Any:
    """Parse JSON that may be gzipped (inflated within the caps), with an error naming the file."""
    text = inflate(raw, name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string") or not exc.doc[exc.pos:].strip():  # it stopped mid-value
            raise SessionFileError(f"{name} ends early, in the middle of its JSON (line {exc.lineno}, column "
                                   f"{exc.colno}): the file is cut short; copy or download it again") from exc
        raise SessionFileError(f"{name} is not JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"{name} is not JSON: {exc}") from exc
    except RecursionError:
        raise SessionFileError(f"{name} nests deeper than any session or trace does") from None


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A session file's values (of any schema up to SCHEMA_VERSION) in today's shape, the one place older
    files are brought up to date: kernel-table columns added since (`op_id`, `launch_us`) take their defaults
    in `KernelRow`; CPU sessions of 2026-11-30 wrote an unknown launch as NaN, read as None; schema 1's stored
    speedups and busy figures are derived data, ignored (analysis computes them on load), while its per-mode
    latency samples are measurements and stay (`ModeRun.latency`: analysis reads them as unpaired samples); a
    kernel row must hold exactly today's columns, so a misspelt key is an error, not a default. Raises
    DecodeError."""
    runs = _items(data.get("runs"))
    grid = data.get("grid")
    runs += [r for cell in _items(grid.get("cells") if isinstance(grid, dict) else None)
             for r in _items(cell.get("runs") if isinstance(cell, dict) else None)]
    sweep = data.get("sweep")
    strategies = _items(sweep.get("strategies") if isinstance(sweep, dict) else None)
    for where, rows in [(f"runs[{i}] ({r.get('mode')}) kernels", r.get("kernels")) for i, r in enumerate(runs)] + \
            [(f"sweep {s.get('strategy')} kernels", s.get("kernels")) for s in strategies]:
        for i, row in enumerate(rows if isinstance(rows, list) else []):
            if isinstance(row, dict):
                _kernel_row(row, f"{where} row {i}")
    return data


def _items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


_OPTIONAL_COLUMNS = {f.name for f in msgspec.structs.fields(KernelRow) if not f.required}


def _kernel_row(row: dict[str, Any], what: str) -> None:
    if type(row.get("launch_us")) is float and math.isnan(row["launch_us"]):
        row["launch_us"] = None
    if row.keys() != KERNEL_COLUMNS.keys():
        missing = [c for c in KERNEL_COLUMNS if c not in row and c not in _OPTIONAL_COLUMNS]
        unknown = [shown(k) if not isinstance(k, str) else k for k in row if k not in KERNEL_COLUMNS]
        if missing or unknown:
            raise DecodeError(f"{what} is malformed: " + "; ".join(
                part for part in (f"missing {', '.join(missing)}" if missing else "",
                                  f"unknown {', '.join(unknown)}" if unknown else "") if part))
