"""Reading text the pages render: values from files are backslash-escaped for markdown (ui/text.py)."""

from __future__ import annotations

import re


def unescaped(text: str) -> str:
    """`text` as the reader sees it: markdown's backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)
