"""Patterns compiled at their first use (checks.lazyre): every module's compiles, and each stands for its compiled
pattern wherever one is taken."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys

from npu_review.checks import lazyre
from npu_review.checks.rule import all_rules


def test_every_module_level_pattern_compiles() -> None:
    # A bad pattern no longer fails its module's import: it would fail the first review that uses it.
    all_rules()  # every rule, and the parsers and analyses they import
    lazyre.compile_pending()
    assert all(type(p).__name__ == "_Compiled" for p in lazyre._made)


def test_a_pattern_compiles_at_its_first_use_and_keeps_its_text_before() -> None:
    word = lazyre.compile(r"(?P<w>[a-z]+)\d", re.I)
    assert type(word).__name__ == "_Lazy"
    built = lazyre.compile(r"\A" + word.pattern)  # another's text, read at import: nothing compiled
    assert type(word).__name__ == "_Lazy" and type(built).__name__ == "_Lazy"
    assert word.search("-- Ab1").group("w") == "Ab"  # type: ignore[union-attr]
    assert type(word).__name__ == "_Compiled"
    assert built.match("Ab1") is None and built.match("ab1") is not None


def test_a_pattern_stands_for_its_compiled_pattern() -> None:
    text, flags = r"(?P<n>a+)b", re.IGNORECASE
    lazy, real = lazyre.compile(text, flags), re.compile(text, flags)
    assert isinstance(lazy, re.Pattern)
    assert re.sub(lazy, "-", "xAAbx") == "x-x" and re.compile(lazy) is lazy
    assert re.findall(lazy, "ab aab") == ["a", "aa"] and re.split(lazy, "xabx") == ["x", "a", "x"]
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (
        real.pattern,
        real.flags,
        real.groups,
        real.groupindex,
    )
    assert repr(lazy) == repr(real) and lazy == real and hash(lazy) == hash(real)
    assert copy.copy(lazy) is lazy and copy.deepcopy(lazy) is lazy
    again = pickle.loads(pickle.dumps(lazyre.compile(text, flags)))
    assert again == real and again.match("AB") is not None


def test_importing_the_rules_compiles_no_pattern() -> None:
    code = (
        "import importlib\n"
        "from npu_review.checks import lazyre\n"
        "from npu_review.checks.rules import MODULES\n"
        "for module, _ in MODULES:\n"
        "    importlib.import_module(f'npu_review.checks.rules.{module}')\n"
        "print(sum(type(p).__name__ == '_Compiled' for p in lazyre._made), len(lazyre._made))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0" and int(out[1]) > 500, out
