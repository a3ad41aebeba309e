"""The headline grammar: what every screen leads with. One headline a speaker can read aloud (WORDS words and
HEADLINE_CHARS characters at most: one line on a slide; its numbers rounded for reading), then at most one
sentence of mechanism (MECHANISM_CHARS characters at most), then the details, folded away, which give the exact
figures and their intervals. A detail never says a figure of the headline at another precision within its own
sentence, and its exact figure rounds to the headline's (`times`).

The builders of the session's headline are in `verdict`, of each view's in `captions` and the modules whose
figures they word; `Report.headline` keeps the session's."""

from __future__ import annotations

import math
import re

import msgspec

WORDS = 12  # a headline read aloud in about four seconds
# one line at the headline's 42 px on a 1920-wide slide (about 95 characters of Source Sans), with room for wide ones
HEADLINE_CHARS = 88
# one line under the headline at a caption's size on a 1920-wide slide (issue 45's 24 px floor: ~110 characters
# of Source Sans in the chart's width), with room for a talk's longer mode names
MECHANISM_CHARS = 90


class Headline(msgspec.Struct, frozen=True):
    """What a screen says first: `text` (WORDS words at most), `mechanism` (one sentence of MECHANISM_CHARS
    characters at most; "" where there is none to say) and `details` (whole sentences with the exact figures
    and their intervals, shown folded away)."""

    text: str
    mechanism: str = ""
    details: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The headline and its mechanism as one caption line."""
        return f"{self.text}. {self.mechanism}" if self.mechanism else f"{self.text}."

    def problems(self) -> list[str]:
        """What breaks the grammar's budgets: too many words, a mechanism too long or of more than one
        sentence."""
        found = []
        if word_count(self.text) > WORDS:
            found.append(f"{word_count(self.text)} words in the headline (at most {WORDS}): {self.text!r}")
        if len(self.text) > HEADLINE_CHARS:
            found.append(f"{len(self.text)} characters in the headline (at most {HEADLINE_CHARS}, one line on a "
                         f"slide): {self.text!r}")
        if len(self.mechanism) > MECHANISM_CHARS:
            found.append(f"{len(self.mechanism)} characters of mechanism (at most {MECHANISM_CHARS}): "
                         f"{self.mechanism!r}")
        if len(sentences(self.mechanism)) > 1:
            found.append(f"more than one sentence of mechanism: {self.mechanism!r}")
        if self.text.endswith("."):
            found.append(f"a headline ending in a full stop (its line adds one): {self.text!r}")
        return found


_WORD = re.compile(r"\w")


def word_count(text: str) -> int:
    """Words as read aloud: whitespace-separated tokens with a letter or digit in them ("→" and "–" are not
    read as words; "2.9", "10x" and "max-autotune" are one each)."""
    return sum(1 for token in text.split() if _WORD.search(token))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def sentences(text: str) -> list[str]:
    """`text` split into sentences (a full stop, then a space and a capital); "" has none."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def sig(x: float, figures: int = 2) -> str:
    """`x` to `figures` significant figures, without an exponent: "700", "78", "0.55", "4,300"."""
    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    rounded = float(f"{x:.{figures}g}")
    return f"{rounded:,.0f}" if abs(rounded) >= 1e3 else f"{rounded:g}"


def signed(x: float) -> str:
    """A change rounded for reading, with its sign: "+5", "-700"."""
    return f"{'+' if x >= 0 else '-'}{sig(abs(x))}"


def micros(us: float, read: bool = False) -> str:
    """A time per call: as the details give it, three significant figures ("7.21 µs", "78.1 µs", "741 µs",
    "5.29 ms"), or rounded for reading aloud (`read`: two, "7.2 µs", "78 µs", "740 µs", "5.3 ms")."""
    figures = 2 if read else 3
    if abs(us) < 999.5:
        return f"{sig(us, figures)} µs"
    return f"{f'{us / 1e3:#.{figures}g}'.rstrip('.')} ms"  # "1.00 ms", not "1 ms": its figures kept


def size_words(n: float) -> str:
    """Bytes as the details give them, three significant figures: "2.89 GB", "134 MB", "262 kB", "512 B"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def read_size(n: float) -> str:
    """Bytes rounded for reading: "2.9 GB", "130 MB", "260 kB", "510 B"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale * 0.9995:
            return f"{sig(n / scale)} {unit}"
    return f"{sig(n)} B"


def times(ratio: float) -> str:
    """A ratio rounded for reading, two significant figures: "10x", "1.6x", "0.55x"; from 1 to 1.1 three
    ("1.04x": two would say "1x" of a clear 4%)."""
    if not math.isfinite(ratio):
        return "–"
    if 1.0 <= ratio < 1.095:
        return f"{ratio:.2f}x"
    return f"{float(f'{ratio:.2g}'):g}x"


def exact_times(ratio: float) -> str:
    """A ratio as the details give it, beside its interval: "9.96x", "0.55x"."""
    return f"{ratio:.2f}x"


def rate_words(speedup: float) -> str:
    """A speedup for reading: "10x faster", "1.8x slower" (eager's time over the mode's, inverted when below
    1), both two significant figures as `times`."""
    return f"{times(speedup)} faster" if speedup >= 1 else f"{times(1 / speedup)} slower"


def count_words(n: float, noun: str) -> str:
    """"1 kernel", "18 kernels", "2.5 kernels" (a count per iteration may be a mean)."""
    return f"{n:g} {noun}{'' if n == 1 else 's'}"
