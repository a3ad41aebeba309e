"""fusionviz: `streamlit run app.py`. The pages, the fusion lab first; each page is a thin script in pages/.

Streamlit runs this file as the page script (`__main__`); `streamlit run` also imports it first as a module,
finds `app`, an `st.App` of this same script, and serves that, so the warm-up starts with the server
(ui/warm.py) rather than with the first visitor's page, and the app's middleware wraps it (ui/web; none when
`FUSIONVIZ_PLAIN_CHARTS=1`).
"""

from __future__ import annotations

import streamlit as st

from ui import warm, web
from ui.background import scheduler

if __name__ == "__main__":
    warm.start()  # once per app process: begun at server start already, unless nothing started a server
    PAGES = [
        st.Page("pages/0_Fusion_lab.py", title="Fusion lab", icon=":material/science:", default=True),
        st.Page("pages/4_Story.py", title="Story", icon=":material/slideshow:"),
        st.Page("pages/1_Trace_explorer.py", title="Trace explorer", icon=":material/timeline:"),
        st.Page("pages/2_Methodology.py", title="Methodology", icon=":material/rule:"),
        st.Page("pages/3_Dynamic_shapes.py", title="Dynamic shapes", icon=":material/stacked_line_chart:"),
    ]
    with scheduler().page_run():  # what is made ahead (the next views, the next scene) waits for it
        st.navigation(PAGES).run()
    warm.page_served()
else:
    app = st.App(__file__, lifespan=warm.lifespan, middleware=web.middleware())
