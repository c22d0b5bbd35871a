"""The README stays in step with the code: its rule table is `npu-review rules --format markdown`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npu_review.checks.rule import all_rules
from npu_review.cli import rules_markdown

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"<!-- rules-table -->\n(.*?)<!-- /rules-table -->", re.DOTALL)


def test_readme_rule_table_matches_the_registry() -> None:
    m = BLOCK.search(README.read_text())
    assert m, "README.md lacks the <!-- rules-table --> block"
    assert m.group(1) == rules_markdown(), (
        "README's rule table is stale: regenerate it with `npu-review rules --format markdown`"
    )


def test_every_rule_documents_why_bad_good_fix() -> None:
    for rid, cls in all_rules().items():
        doc = cls.doc()
        for section in ("Why", "Bad", "Good", "Fix"):
            assert re.search(rf"^{section}\b", doc, re.MULTILINE), f"{rid} documentation lacks the {section} section"


@pytest.mark.parametrize("rid", sorted(all_rules()))
def test_rule_docs_have_why_and_fix_a_one_line_title_and_no_invisible_character(rid: str) -> None:
    cls = all_rules()[rid]
    doc = cls.doc()
    for section in ("Why:", "Fix:"):
        assert section in doc, f"{rid} doc lacks {section}"
    assert cls.title and "\n" not in cls.title
    assert "\u200b" not in doc  # `npu-review rules` prints it: an example names an invisible character in words
