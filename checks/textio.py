"""Bytes to text the same way for the CLI (git objects, files) and the App (GitHub contents)."""

from __future__ import annotations

# Larger files are not reviewed: no launch script, workflow or Dockerfile comes near this, and a rule must
# never be handed a multi-megabyte blob on the server's event loop.
MAX_TEXT_BYTES = 1_000_000


class CrlfText(str):
    """The text of a file whose line ends were CRLF, given with LF ends. The engine hands rules a plain str and
    says so in `SourceFile.crlf` (C parsers such as libyaml's take an exact str only)."""

    __slots__ = ()


def decode_blob(data: bytes) -> str | None:
    """Text of a file, or None for binary (a NUL byte) and oversized files.

    Invalid UTF-8 (a Latin-1 comment, say) is replaced rather than refused, so the rest of the file is still
    reviewed; a UTF-8 BOM is dropped; CRLF line ends become LF so line numbers match what GitHub shows (the text is
    then a `CrlfText`, so the engine can still tell: `SourceFile.crlf`).
    """
    if len(data) > MAX_TEXT_BYTES or b"\0" in data[:8192]:
        return None
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r\n" in text:
        return CrlfText(text.replace("\r\n", "\n"))
    return text
