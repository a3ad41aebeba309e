"""The browser side of the app, behind this one door: everything Streamlit does not do by itself lives in this
package, and the rest of the app imports `ui.web` alone.

- charts on a plot kept mounted (`plot`, plotly_view.py/.js), drawn with the plotly.js the app vendors and names in
  every page's head (bundle.py, vendor/);
- the app's middleware (`middleware`, middleware.py), which adds that plotly.js to every page and answers the URLs
  the pages `register` (routes.py: JSON made on demand, a presentation's next views);
- a first visit's page drawn top first (`draws_top_first`, `ask_for_the_rest`, first_paint.py/.js);
- presentation mode restyled in the browser (`show_mode`, `desk_only`, `presentation_only`, presentation.py/.js)
  and a presenter's clicker;
- every selector of Streamlit's own page, the one file a Streamlit upgrade can break (selectors.py).

`FUSIONVIZ_PLAIN_CHARTS=1` (switch.py) turns it all off: plain `st.plotly_chart`, no middleware, no scripts of the
app's own; a page works the same either way, so it can be changed without knowing any of this.
"""

from __future__ import annotations

from starlette.middleware import Middleware

from ui.web.bundle import plotly_name
from ui.web.first_paint import ask_for_the_rest, draws_top_first
from ui.web.middleware import PageHead
from ui.web.plotly_view import Picker, Presented, drawn_box, plot
from ui.web.presentation import clicker, desk_only, presentation_only, show_mode
from ui.web.routes import register, registered
from ui.web.selectors import key_class
from ui.web.switch import plain

__all__ = [
    "Picker",
    "Presented",
    "ask_for_the_rest",
    "clicker",
    "desk_only",
    "drawn_box",
    "draws_top_first",
    "key_class",
    "middleware",
    "plain",
    "plot",
    "prepare",
    "presentation_only",
    "register",
    "registered",
    "show_mode",
]


def middleware() -> list[Middleware]:
    """The middleware app.py hands to `st.App`: none when the app runs plain."""
    return [] if plain() else [Middleware(PageHead)]


def prepare() -> None:
    """What the browser side makes once before the first page is asked for: plotly.js read and hashed, to be named
    in the page's head (nothing when the app runs plain)."""
    if not plain():
        plotly_name()
