"""The switch to plain Streamlit: `FUSIONVIZ_PLAIN_CHARTS=1 streamlit run app.py` draws every chart with
`st.plotly_chart` and runs none of this package's machinery (no middleware, no scripts of its own, no first paint
in two runs, no views served ahead): the app as Streamlit alone draws it, slower, for a page being changed or a
Streamlit that broke a selector (ui/web/selectors.py)."""

from __future__ import annotations

import os

ENV = "FUSIONVIZ_PLAIN_CHARTS"


def plain() -> bool:
    """Whether the app runs as plain Streamlit (`ENV` is "1"); read on every call, so a test may set it."""
    return os.environ.get(ENV) == "1"
