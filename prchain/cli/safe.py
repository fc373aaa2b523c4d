"""Everything the CLI prints goes through here: untrusted text (PR titles and bodies, file names,
reasons quoting a repository, model output) is data, never terminal control or markup.

- `SafeConsole`: a rich Console whose every rendered segment loses control characters and escape
  sequences (CSI, OSC, the C1 set, bidirectional overrides), whose styles carry no hyperlink, and
  whose markup parser falls back to plain text instead of raising (`tests/[/]x.py`);
- `echo()`: click.echo of scrubbed text;
- `markup()`: untrusted text to embed in our own rich markup (scrubbed, then escaped).

Newlines and tabs stay. Rich's own styling is added after the segments are scrubbed, so colours
and bold still work; only the text that came in loses its controls.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

import click
from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

# An escape sequence (CSI ... final, OSC ... BEL/ST, or a two-byte ESC x), then any other control
# character except \n and \t, C1 controls, and the bidi embeddings/overrides/isolates.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b.?|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x9c]*[\x07\x9c]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def scrub(text: str) -> str:
    """`text` without escape sequences or control characters (newlines and tabs kept)."""
    return _ESCAPES.sub("", text)


def markup(text: str) -> str:
    """Untrusted text to put inside our own rich markup."""
    return escape(scrub(text))


def echo(text: str = "", **kwargs: Any) -> None:
    click.echo(scrub(text), **kwargs)


# A log, a pipe or CI is no terminal: rich would squeeze every table into 80 columns there, one
# word per line in wide tables. Such output gets room for a table's natural width instead.
LOG_WIDTH = 200


class SafeConsole(Console):
    """A Console that renders untrusted text as data (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_terminal and "width" not in kwargs and not os.environ.get("COLUMNS"):
            self.width = LOG_WIDTH

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(_scrubbed(buffer))

    def render_str(self, text: str, **kwargs: Any) -> Text:
        try:
            return super().render_str(text, **kwargs)
        except MarkupError:
            return super().render_str(text, **{**kwargs, "markup": False})


def _scrubbed(buffer: Iterable[Segment]) -> Iterable[Segment]:
    for segment in buffer:
        if segment.control:  # rich's own cursor moves, not text
            yield segment
            continue
        style = segment.style
        if style is not None and style.link:
            style = style.update_link(None)
        yield Segment(scrub(segment.text), style)


def secho(text: str = "", **kwargs: Any) -> None:
    click.secho(scrub(text), **kwargs)
