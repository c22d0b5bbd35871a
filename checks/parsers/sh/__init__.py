"""The one shell layer: sources with line maps, the lexer, words and simple commands.

Shell scripts (`checks.parsers.shell`), Dockerfile RUN instructions, workflow `run:` blocks and shell code in
docs are all read through it. See `lexer` for the tokens, `commands` for the command view rules use.
"""

from npu_review.checks.parsers.sh.commands import ASSIGNMENT, PREFIX_WORDS, Command, Redirect, commands, line_commands
from npu_review.checks.parsers.sh.lexer import (
    REDIRECT,
    Lexed,
    LogicalLine,
    Token,
    heredoc_markers,
    lex,
    logical_lines,
    open_after,
    read_word,
    split_logical,
    split_words,
    tokens,
)
from npu_review.checks.parsers.sh.source import Source
from npu_review.checks.parsers.sh.words import ArrayWord, Op, Word, matching_close, unquote

__all__ = [
    "ASSIGNMENT",
    "PREFIX_WORDS",
    "REDIRECT",
    "ArrayWord",
    "Command",
    "Lexed",
    "LogicalLine",
    "Op",
    "Redirect",
    "Source",
    "Token",
    "Word",
    "commands",
    "heredoc_markers",
    "lex",
    "line_commands",
    "logical_lines",
    "matching_close",
    "open_after",
    "read_word",
    "split_logical",
    "split_words",
    "tokens",
    "unquote",
]
