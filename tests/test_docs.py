"""The documentation: the site (MkDocs, Material) builds strictly, with one page per rule made from its docstring;
the README is what a newcomer needs and links there; the rules document why, bad, good and fix."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from npu_review.checks.output import rule_uri
from npu_review.checks.rule import all_rules

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def text_of(page: Path) -> str:
    """A built page's article as text (tags dropped, entities read)."""
    body = page.read_text(encoding="utf-8")
    article = re.search(r"<article[^>]*>(.*?)</article>", body, re.S)
    assert article is not None, page
    return html.unescape(re.sub(r"<[^>]+>", "", article.group(1)))


def test_every_rule_has_its_page_with_why_bad_good_fix(docs_site: Path) -> None:
    for rid, cls in all_rules().items():
        assert rule_uri(rid).endswith(f"/rules/{rid}/")  # SARIF's helpUri is this page
        page = text_of(docs_site / "rules" / rid / "index.html")
        assert f"{rid} {cls.name}" in page
        for heading in ("Why", "Bad", "Good", "Fix", "Calibration", "Configure"):
            assert re.search(rf"^{heading}\b.*¶$", page, re.M), (rid, heading)


def test_a_rule_page_says_what_the_rule_is_since_when_and_how_it_measured(docs_site: Path) -> None:
    page = text_of(docs_site / "rules" / "NPU301" / "index.html")
    assert "TLS certificate verification disabled in a Dockerfile" in page
    # The facts row: severity, default, the release that brought it, the group.
    assert re.search(r"warning\s+on\s+0\.1\.0\s+Dockerfiles \(NPU3xx\)", page)
    # Its row of the calibration table (docs/calibration.md), cell by cell.
    table = (ROOT / "docs" / "calibration.md").read_text().splitlines()
    row = next(line for line in table if line.startswith("| NPU301 |"))
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    assert re.search(r"\s+".join(re.escape(c) for c in cells), page)
    # The Bad example as a code block, whole.
    assert "RUN wget --no-check-certificate https://example.com/Ascend-cann-toolkit_9.1.0_linux-aarch64.run" in page
    # A rule new since the last release, caught in the labeled set; one not in the calibration table.
    newer = text_of(docs_site / "rules" / "NPU322" / "index.html")
    assert re.search(r"error\s+on\s+unreleased\s+Dockerfiles", newer)
    assert "Not in the calibration table yet" in text_of(docs_site / "rules" / "NPU217" / "index.html")


def test_the_rules_index_lists_every_rule_with_a_link(docs_site: Path) -> None:
    index = (docs_site / "rules" / "index.html").read_text(encoding="utf-8")
    for rid in all_rules():
        assert f'<a href="{rid}/">{rid}</a>' in index, rid


def test_the_pages_load_nothing_from_elsewhere(docs_site: Path) -> None:
    page = (docs_site / "rules" / "NPU301" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in page and "fonts.gstatic.com" not in page


def test_every_rule_is_named_in_the_changelog() -> None:
    """A rule's page says since when it exists: the first release whose CHANGELOG section names it."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    named = set()
    for first, last in re.findall(r"NPU(\d{3})(?:\s*[–-]\s*NPU(\d{3}))?", changelog):
        named.update(f"NPU{n:03d}" for n in range(int(first), int(last or first) + 1))
    assert set(all_rules()) - named == set()


def test_the_readme_is_a_start_and_links_to_the_rest() -> None:
    readme = README.read_text()
    assert len(readme) < 8000
    assert "<!-- rules-table -->" not in readme and "| NPU301 |" not in readme  # the tables live on the site
    assert "### Calibration" not in readme
    # The quick start: one line to install and run, one to run every test.
    assert "pipx install . && npu-review check --all" in readme
    assert "bash .ci/run " in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link


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
