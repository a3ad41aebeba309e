"""fusionviz: `streamlit run app.py`. The pages, the fusion lab first; each page is a thin script in pages/.

Streamlit runs this file as the page script (`__main__`); `streamlit run` also imports it first as a module,
finds `app`, an `st.App` of this same script, and serves that, so the warm-up starts with the server
(ui/warm.py) rather than with the first visitor's page, and every page's HTML names plotly.js (ui/page_head.py).
"""

from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

from ui import page_head, warm

if __name__ == "__main__":
    from ui import page_runs

    warm.start()  # once per app process: begun at server start already, unless nothing started a server
    PAGES = [
        st.Page("pages/0_Fusion_lab.py", title="Fusion lab", icon=":material/science:", default=True),
        st.Page("pages/4_Story.py", title="Story", icon=":material/slideshow:"),
        st.Page("pages/1_Trace_explorer.py", title="Trace explorer", icon=":material/timeline:"),
        st.Page("pages/2_Methodology.py", title="Methodology", icon=":material/rule:"),
        st.Page("pages/3_Dynamic_shapes.py", title="Dynamic shapes", icon=":material/stacked_line_chart:"),
    ]
    with page_runs.page_run():  # what is built ahead (the next views, the next scene) waits for it
        st.navigation(PAGES).run()
    warm.page_served()
else:
    app = st.App(__file__, lifespan=warm.lifespan, middleware=[Middleware(page_head.PageHead)])
