"""fusionviz: `streamlit run app.py`. The pages, the fusion lab first; each page is a thin script in pages/."""

from __future__ import annotations

import streamlit as st

from ui import warm

warm.start()  # once per app process: the worker, the library and the first session's figures, in the background
PAGES = [
    st.Page("pages/0_Fusion_lab.py", title="Fusion lab", icon=":material/science:", default=True),
    st.Page("pages/4_Story.py", title="Story", icon=":material/slideshow:"),
    st.Page("pages/1_Trace_explorer.py", title="Trace explorer", icon=":material/timeline:"),
    st.Page("pages/2_Methodology.py", title="Methodology", icon=":material/rule:"),
    st.Page("pages/3_Dynamic_shapes.py", title="Dynamic shapes", icon=":material/stacked_line_chart:"),
]

st.navigation(PAGES).run()
