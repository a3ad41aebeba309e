"""Tables as shown: every number formatted by what its column holds, and in presentation mode a plain HTML
table whose text the presentation fonts reach (a dataframe draws on a canvas no stylesheet enlarges)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ui import state


def number_format(column: str, dtype: Any) -> str | None:
    """The printf format of a numeric column, from its name's unit: µs to 0.1, percentages to 0.1, anything
    else to four significant digits; whole numbers as they are. None for a column that is not numeric."""
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        return None
    if pd.api.types.is_integer_dtype(dtype):
        return "%d"
    if column.endswith(("_us", "_pct")):
        return "%.1f"
    return "%.4g"


def number_formats(frame: pd.DataFrame) -> dict[str, str]:
    """The format of each numeric column of `frame`."""
    return {c: f for c, f in ((c, number_format(str(c), frame[c].dtype)) for c in frame.columns) if f}


def show(frame: pd.DataFrame, key: str, *, helps: dict[str, str] | None = None,
         column_config: dict[str, Any] | None = None, **options: Any) -> Any:
    """`frame` with its numbers formatted: a dataframe (sortable, selectable through `options`), or in
    presentation mode a plain table. `helps` are column tooltips; `column_config` overrides per column.
    Returns the dataframe's selection event (None in presentation mode)."""
    formats = number_formats(frame)
    if state.presentation():
        styled = frame.style.hide(axis="index").format(
            {c: (lambda v, f=f: "–" if pd.isna(v) else f % v) for c, f in formats.items()})
        st.table(styled)
        return None
    config: dict[str, Any] = {c: st.column_config.NumberColumn(format=f, help=(helps or {}).get(c))
                              for c, f in formats.items()}
    config.update(column_config or {})
    return st.dataframe(frame, key=key, hide_index=True, column_config=config, **options)


# A cell a spreadsheet would run as a formula (OWASP's list: = + - @, and tab or carriage return before them).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """`frame` as CSV for a download, every text cell that a spreadsheet would take for a formula prefixed
    with `'` (kernel and op names come from files: `=HYPERLINK(...)` must stay text). Numbers are untouched."""
    def neutral(value: Any) -> Any:
        return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value

    text = frame.copy()
    for column in text.columns:
        if text[column].dtype == object or pd.api.types.is_string_dtype(text[column].dtype):
            text[column] = text[column].map(neutral)
    return text.to_csv(index=False).encode()
