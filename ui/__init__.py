"""The app side: page set-up, the state a page keeps, cached backend calls, and the sections pages share; the
work made ahead of a visitor on one background scheduler (background.py, warm.py); and, behind one door, the
browser side (web/).

The only package besides the pages that imports streamlit. Pages stay thin: widgets, calls into here,
layout."""
