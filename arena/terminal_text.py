"""Text from a seat, a plugin or a name, made safe to show on a terminal.

What a model says or notes, and what a policy or entrant is called, may hold anything:
an escape sequence (``\\x1b[2J`` clears the screen, ``\\x1b]8;;URL`` draws a link), a
bidi override that reorders what is shown, a line separator, a lone surrogate that
stdout cannot encode, or Rich markup (``[red]``). :func:`printable` spells each such
character as its Python escape, so the terminal shows what was said instead of obeying
it; :func:`cell` is the same text as a Rich renderable that is never read as markup or
emoji codes. Everything else, any script or emoji, is shown as it is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_UNSHOWABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0 and C1 controls, DEL: ESC starts every terminal sequence
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, overrides
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # lone surrogates: no encoding can print them
)


def printable(text: str) -> str:
    """``text`` with every control, bidi, separator or surrogate character escaped
    (``\\x1b``, ``\\u202e``); text without one comes back as it is."""
    if text.isascii() and text.isprintable():
        return text
    return _UNSHOWABLE.sub(_escape, text)


SHOWN_SPEC = 160
"""The most of a seat spec a warning or error line shows."""
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/?#@\s]*@")


def spec_text(spec: object) -> str:
    """A seat spec as a warning or error line shows it: printable, any credentials in a URL
    it holds (``//user:password@``) cut out, at most :data:`SHOWN_SPEC` characters (a
    100 KB URL was echoed whole)."""
    text = printable(_URL_CREDENTIALS.sub("***@", str(spec)))
    return text if len(text) <= SHOWN_SPEC else text[: SHOWN_SPEC - 1] + "…"


def printable_lines(text: str) -> str:
    """:func:`printable` of each line of a text made of several (a screen, a wrapped
    listing): its own newlines stay newlines, every other character as printable."""
    return "\n".join(map(printable, text.split("\n")))


def cell(value: object) -> Text:
    """A Rich table cell or title showing ``str(value)`` literally (see :func:`printable`).

    Rich is imported here, not with the module: ``arena play`` prints plain lines and
    never pays for it."""
    from rich.text import Text

    return Text(printable(str(value)))


def _escape(match: re.Match) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
