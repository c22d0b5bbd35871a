"""The terminal: whether to colour the output, and a progress line on stderr for long runs."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TextIO

COLOR_CHOICES = ("auto", "always", "never")


def use_color(choice: str, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour for `--color auto|always|never`: `auto` on a terminal (not TERM=dumb). NO_COLOR set to anything
    but the empty string (https://no-color.org) turns it off whatever --color says, as the contract promises."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if choice != "auto":
        return choice == "always"
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False
    return tty and env.get("TERM") != "dumb"


class Progress:
    """One line on a terminal's stderr, rewritten in place at most 10 times a second and erased at the end;
    nothing at all when the stream is not a terminal (a log, CI, a pipe)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None
        self._shown = 0.0
        self._width = 0

    @property
    def active(self) -> bool:
        return self.stream is not None

    def show(self, text: str, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._shown < 0.1:
            return
        self._shown = now
        pad = " " * max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
