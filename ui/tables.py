"""Tables as shown: every number formatted by what its column holds, and in presentation mode a plain HTML
table whose text the presentation fonts reach (a dataframe draws on a canvas no stylesheet enlarges)."""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd
import streamlit as st

from ui import web


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


def html_table(frame: pd.DataFrame, formats: dict[str, str], key: str) -> str:
    """`frame` as one HTML table (class `fv-table`, styled by the presentation stylesheet), text escaped and
    numbers formatted: one element for the browser to lay out, where `st.table` makes a component of each cell
    (benchmarks/RESULTS.md, "The presentation toggle (2026-11-30, evening)")."""
    text = [c for c in frame.columns if c not in formats]
    shown = frame.copy()
    for column in text:
        shown[column] = shown[column].map(
            lambda v: "–" if pd.api.types.is_scalar(v) and pd.isna(v) else html.escape(str(v)))
    styled = (shown.style.hide(axis="index")
              .format({c: (lambda v, f=f: "–" if pd.isna(v) else f % v) for c, f in formats.items()})
              .set_properties(subset=text, **{"text-align": "left", "white-space": "normal",
                                                "overflow-wrap": "anywhere", "min-width": "5em"})
              .set_table_styles([{"selector": f"th.col{frame.columns.get_loc(c)}", "props": "text-align: left"}
                                 for c in text])
              .set_uuid(re.sub(r"[^A-Za-z0-9_-]", "_", key)))  # its ids name the table in CSS
    return styled.to_html(table_attributes='class="fv-table"')


PRESENTED_ROWS = 40  # a table's rows in presentation mode: more are not read from the back of a room


def show(frame: pd.DataFrame, key: str, *, helps: dict[str, str] | None = None,
         column_config: dict[str, Any] | None = None, presentable: bool = True, **options: Any) -> Any:
    """`frame` with its numbers formatted, in both its forms: a dataframe at the desk (sortable, selectable
    through `options`) and, unless it is not `presentable` (it sits in a desk-only section), a plain table of
    its first rows in presentation mode. The page's stylesheet shows one of them, so a toggle changes no
    element. `helps` are column tooltips; `column_config` overrides per column. Returns the dataframe's
    selection event."""
    formats = number_formats(frame)
    if presentable:
        with web.presentation_only(key):
            st.html(html_table(frame.head(PRESENTED_ROWS), formats, key))
            if len(frame) > PRESENTED_ROWS:
                st.caption(f"The first {PRESENTED_ROWS} of {len(frame):,} rows; every row at the desk.")
    config: dict[str, Any] = {c: st.column_config.NumberColumn(format=f, help=(helps or {}).get(c))
                              for c, f in formats.items()}
    config.update(column_config or {})
    with web.desk_only(key):
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
