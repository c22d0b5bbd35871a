"""MkDocs hooks (mkdocs.yml `hooks:`): the rule pages, generated from the rules' docstrings at build time.

One page per rule, `rules/<ID>.md` (served at rules/<ID>/, which SARIF's helpUri names): its id, name, default
severity, whether it is on by default, the release that brought it (the oldest release of CHANGELOG.md naming it),
the docstring as sections (Why, Bad, Good, Fix), and its row of the calibration table (docs/calibration.md). The
rules' index gets the table of every rule where it says `<!-- rules-table -->`. Nothing is written into docs/.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from npu_review.checks.output import rule_uri
from npu_review.checks.rule import Rule, all_rules

ROOT = Path(__file__).resolve().parent.parent
GROUPS = {
    "1": ("Launch scripts", "bash"),
    "2": ("CI workflows and images", "yaml"),
    "3": ("Dockerfiles", "dockerfile"),
    "4": ("Python code", "python"),
    "5": ("Docs and naming", "markdown"),
}
_EXAMPLE = re.compile(r"^(Bad|Good)\b(.*):\s*$")
_SECTION = re.compile(r"^(Why|Fix):\s*(.*)$")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def since_table(changelog: str) -> dict[str, str]:
    """Rule id -> the oldest release whose CHANGELOG section names it, alone or in a range (NPU301–NPU312)."""
    found: dict[str, str] = {}
    sections = re.split(r"^## ", changelog, flags=re.M)[1:]
    for section in sections:  # newest first: older releases overwrite
        release = section.split("\n", 1)[0].split()[0]
        if release.lower() == "unreleased":
            continue
        for first, last in re.findall(r"NPU(\d{3})(?:\s*[–-]\s*NPU(\d{3}))?", section):
            for n in range(int(first), int(last or first) + 1):
                found[f"NPU{n:03d}"] = release
    return found


def calibration_rows(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The calibration table of docs/calibration.md: its header cells, and each rule's cells."""
    header: list[str] = []
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "rule":
            header = cells
        elif re.fullmatch(r"NPU\d{3}", cells[0]):
            rows[cells[0]] = cells
    return header, rows


def _prose(line: str) -> str:
    """A docstring line as Markdown: `<` outside code spans is text, not an HTML tag."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(line):
        out.append(line[last : m.start()].replace("<", "&lt;"))
        out.append(m.group(0))
        last = m.end()
    out.append(line[last:].replace("<", "&lt;"))
    return "".join(out)


def _fence(lines: list[str], language: str) -> list[str]:
    body = textwrap.dedent("\n".join(lines)).strip("\n").splitlines()
    if any(b.startswith(("@@", "--- a/", "+++ b/")) for b in body):
        language = "diff"
    # A fence longer than any backtick run in the body (an install doc's own ``` block stays inside it).
    ticks = "`" * max([3, *(len(m) + 1 for b in body for m in re.findall(r"`{3,}", b))])
    return [f"{ticks}{language}", *body, ticks, ""]


def docstring_markdown(doc: str, language: str) -> str:
    """The rule's docstring with its Why/Fix paragraphs and Bad/Good examples as sections and code blocks."""
    lines = doc.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        example = _EXAMPLE.match(line)
        if example is not None or (line.startswith("    ") and (not out or not out[-1].strip())):
            if example is not None:
                out += [f"## {example.group(1)}{_prose(example.group(2))}", ""]
                i += 1
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i])
                i += 1
            out += _fence(block, language)
            continue
        section = _SECTION.match(line)
        if section is not None:
            text = section.group(2)
            out += [f"## {section.group(1)}", "", _prose(text[:1].upper() + text[1:])]
        else:
            out.append(_prose(line))
        i += 1
    return "\n".join(out).strip() + "\n"


def rule_page(rid: str, cls: type[Rule], since: str, calibration: tuple[list[str], dict[str, list[str]]]) -> str:
    group, language = GROUPS.get(rid[3], ("Other", "text"))
    default = "on" if cls.enabled_by_default else "off"
    header, rows = calibration
    out = [
        f"# {rid} {cls.name}",
        "",
        f"**{_prose(cls.title)}**",
        "",
        "| severity | default | since | group |",
        "|---|---|---|---|",
        f"| {cls.severity.label} | {default} | {since} | {group} ({rid[:4]}xx) |",
        "",
        docstring_markdown(cls.doc(), language),
        "## Calibration",
        "",
    ]
    if rid in rows:
        out += [
            "Measured on real histories ([Calibration](../calibration.md): how, and every rule's figures):",
            "",
            "| " + " | ".join(header[1:]) + " |",
            "|" + "---|" * (len(header) - 1),
            "| " + " | ".join(rows[rid][1:]) + " |",
            "",
        ]
    else:
        out += [
            "Not in the calibration table yet ([Calibration](../calibration.md)); the [rules overview](index.md) says "
            "what the rules stay silent on.",
            "",
        ]
    out += [
        "## Configure",
        "",
        "In `.github/npu-review.yml` ([Configuration](../configuration.md)):",
        "",
        "```yaml",
        "rules:",
        f"  {rid}: off          # or error, warning, notice",
        "```",
        "",
        f"On one line, or the line above it: `# npu-review: ignore[{rid}] reason`; for a whole file: "
        f"`# npu-review: ignore-file[{rid}]`. In the terminal: `npu-review rules {rid}`.",
        "",
    ]
    return "\n".join(out)


def rules_table() -> str:
    rows = ["| id | name | severity | default | what it reports |", "|---|---|---|---|---|"]
    for rid, cls in all_rules().items():
        on = "on" if cls.enabled_by_default else "off"
        rows.append(f"| [{rid}]({rid}.md) | `{cls.name}` | {cls.severity.label} | {on} | {_prose(cls.title)} |")
    return "\n".join(rows) + "\n"


def on_config(config: MkDocsConfig, **kwargs: Any) -> MkDocsConfig:
    """Every rule page in the navigation, under Rules."""
    for item in config.nav or []:
        if isinstance(item, dict) and "Rules" in item:
            item["Rules"] = ["rules/index.md", *(f"rules/{rid}.md" for rid in all_rules())]
    return config


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    since = since_table((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    calibration = calibration_rows((Path(config.docs_dir) / "calibration.md").read_text(encoding="utf-8"))
    for rid, cls in all_rules().items():
        # The page's address is the one SARIF's helpUri names.
        assert rule_uri(rid).endswith(f"/rules/{rid}/"), rule_uri(rid)
        page = rule_page(rid, cls, since.get(rid, "unreleased"), calibration)
        files.append(File.generated(config, f"rules/{rid}.md", content=page))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files, **kwargs: Any) -> str:
    return markdown.replace("<!-- rules-table -->", rules_table())
