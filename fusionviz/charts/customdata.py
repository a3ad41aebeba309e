"""A trace's customdata by name. Plotly sends customdata as positional arrays, the smallest form for a figure
of 100,000 bars; a `Fields` declares the names of its columns once: the hovers are written with them, the
columns are taken from a table by them, and the trace carries them in its `meta`, so a clicked point reaches
Python as a dict by field name (ui/plotly_view.js)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

_FIELD = re.compile(r"%\{(\w+)")


@dataclass(frozen=True)
class Fields:
    """The names of a trace's customdata columns, in order."""

    names: tuple[str, ...]

    def template(self, text: str) -> str:
        """A hovertemplate written with field names (`%{dur_us:.1f}`) as Plotly reads it (`%{customdata[8]:.1f}`);
        names that are not fields (`%{x}`, `%{text}`) are left to Plotly."""
        return _FIELD.sub(lambda m: f"%{{customdata[{self.names.index(m[1])}]" if m[1] in self.names else m[0], text)

    def of(self, rows: pd.DataFrame) -> np.ndarray:
        """These columns of `rows`, as one customdata array."""
        return rows[list(self.names)].to_numpy(dtype=object)

    @property
    def meta(self) -> dict[str, Any]:
        """The trace's `meta`: the names a click is read by."""
        return {"fields": list(self.names)}
