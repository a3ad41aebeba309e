"""Text from files, shown as text: Streamlit renders markdown in every message, caption and label, so a
mode name, an error or a kernel name from someone's file could otherwise draw an image (fetched by every
viewer's browser), a link or a formula. Every value that comes from a file goes through `plain`."""

from __future__ import annotations

import re

# Every ASCII punctuation character that markdown (or Streamlit's extensions: `:color[...]` directives,
# `:emoji:` codes, `$math$`) gives a meaning; CommonMark shows a backslash-escaped one as itself.
_MARKUP = re.compile(r"""([\\`*_{}\[\]()#+\-.!|<>~$:"'=^&%@;,/?])""")


def plain(value: object) -> str:
    """`value` as text that every markdown renderer shows literally."""
    return _MARKUP.sub(r"\\\1", str(value))
