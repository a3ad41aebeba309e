"""The app side: page set-up, the state a page keeps, cached backend calls, and the sections pages share.

The only package besides the pages that imports streamlit. Pages stay thin: widgets, calls into here,
layout."""
