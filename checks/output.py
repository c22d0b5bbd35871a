"""Report formats for the command line: text, json (the contract's), sarif 2.1.0 and GitHub Actions commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import groupby

from npu_review.checks import lazyre
from npu_review.checks.engine import Report
from npu_review.checks.model import Finding, Tree
from npu_review.checks.rule import all_rules
from npu_review.checks.severity_map import ACTIONS_COMMAND, SARIF_LEVEL

JSON_VERSION = 1
TOOL_URI = "https://github.com/npu-review/npu-review"
# The documentation site (docs/, built by MkDocs): one page per rule.
DOCS_URI = "https://npu-review.github.io/npu-review/"


def rule_uri(rule_id: str) -> str:
    """The page of a rule on the documentation site."""
    return f"{DOCS_URI}rules/{rule_id}/"


FINGERPRINT_KEY = "npuReview/v1"

FORMATS = ("text", "concise", "json", "sarif", "github")

# ANSI styles for a terminal (the CLI decides whether to use them: a terminal, no NO_COLOR, --color).
_RESET = "\x1b[0m"
_SEVERITY_STYLE = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "notice": "\x1b[1;36m"}
_BOLD, _DIM = "\x1b[1m", "\x1b[2m"


class _Paint:
    """Wraps text in ANSI styles, or leaves it as it is."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.color and text else text

    def severity(self, label: str) -> str:
        return self(_SEVERITY_STYLE.get(label, ""), label)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: Report) -> str:
    c = report.counts()
    total = len(report.findings)
    return (
        f"{_plural(total, 'finding')} ({_plural(c['error'], 'error')}, {_plural(c['warning'], 'warning')}, "
        f"{_plural(c['notice'], 'notice')}) in {_plural(report.files_checked, 'file')} checked"
    )


def render_text(report: Report, head: Tree | None = None, color: bool = False) -> str:
    """Grouped by file: the location, severity, rule, message, the source line and the fix."""
    paint = _Paint(color)
    out: list[str] = []
    cache: dict[str, list[str]] = {}

    def source_line(path: str, n: int) -> str | None:
        if head is None:
            return None
        if path not in cache:
            cache[path] = (head.read(path) or "").splitlines()
        lines = cache[path]
        return lines[n - 1] if 1 <= n <= len(lines) else None

    for path, group in groupby(report.findings, key=lambda f: f.path):
        out.append(paint(_BOLD, path))
        for f in group:
            out.append(f"  {f.line}: {paint.severity(f.severity.label)} {paint(_BOLD, f.rule)} {f.name}: {f.message}")
            src = source_line(path, f.line)
            if src is not None:
                out.append(paint(_DIM, f"      | {src.strip()}"))
            for rel in f.related:
                out.append(f"      see {rel.path}:{rel.line}" + (f" ({rel.note})" if rel.note else ""))
            if f.suggestion is not None:
                fix = f.suggestion.splitlines() or ["(delete the line)"]
                out.append(f"      fix: {fix[0].strip()}")
                out.extend(f"           {extra.strip()}" for extra in fix[1:])
        out.append("")
    out.extend(f"npu-review: {e}" for e in report.errors)
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


def concise_line(f: Finding, color: bool = False) -> str:
    """`path:line:col: RULE severity message`, as compilers and linters print them (an editor's or a CI problem
    matcher's format). npu-review reports lines, so the column is always 1."""
    paint = _Paint(color)
    message = " ".join(f.message.split("\n"))
    return (
        f"{paint(_BOLD, f'{f.path}:{f.line}:1:')} {paint(_BOLD, f.rule)} {paint.severity(f.severity.label)} {message}"
    )


def render_concise(report: Report, head: Tree | None = None, color: bool = False) -> str:
    """One line per finding (see `concise_line`), nothing else: the summary and errors are the caller's."""
    return "".join(concise_line(f, color) + "\n" for f in report.findings)


# A lone surrogate: a byte of a file name that is not UTF-8 (`\xbd` of a GBK name), kept by the surrogateescape
# decoding every path and text goes through.
_LONE_SURROGATE = lazyre.compile("[\ud800-\udfff]")


def json_text(doc: object) -> str:
    """The document as JSON, UTF-8 clean: non-ASCII text as itself, and a lone surrogate (a non-UTF-8 byte of a file
    name, `figures/Presenter-Server\xbd\xe7\xc3\xe6.png`) as its `\\udcbd` escape, which a JSON reader turns back
    into the same string; written raw, those bytes made the output invalid UTF-8 (rs-r71's sampler failed on it)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def render_json(report: Report, head: Tree | None = None) -> str:
    doc = {
        "version": JSON_VERSION,
        "findings": [f.to_json() for f in report.findings],
        "summary": {**report.counts(), "files_checked": report.files_checked},
    }
    if report.errors:
        doc["errors"] = report.errors
    return json_text(doc)


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, object]:
    region = {"startLine": f.line, "endLine": f.end_line}
    result: dict[str, object] = {
        "ruleId": f.rule,
        "level": SARIF_LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}, "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
    }
    if f.rule in index:
        result["ruleIndex"] = index[f.rule]
    if f.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {"artifactLocation": {"uri": r.path}, "region": {"startLine": r.line}},
                **({"message": {"text": r.note}} if r.note else {}),
            }
            for i, r in enumerate(f.related)
        ]
    if f.suggestion is not None:
        result["fixes"] = [
            {
                "description": {"text": "Suggested replacement"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": f.path},
                        "replacements": [
                            {
                                "deletedRegion": {"startLine": f.line, "endLine": f.end_line},
                                "insertedContent": {"text": f.suggestion + "\n" if f.suggestion else ""},
                            }
                        ],
                    }
                ],
            }
        ]
    return result


def render_sarif(report: Report, head: Tree | None = None) -> str:
    from npu_review import version  # the installed distribution's: metadata, read once per report

    release = version()
    rules = all_rules()
    descriptors = [
        {
            "id": rid,
            "name": cls.name,
            "shortDescription": {"text": cls.title},
            "fullDescription": {"text": cls.doc()},
            "defaultConfiguration": {"level": SARIF_LEVEL[cls.severity], "enabled": cls.enabled_by_default},
            "help": {"text": cls.doc()},
            "helpUri": rule_uri(rid),
        }
        for rid, cls in rules.items()
    ]
    index = {rid: i for i, rid in enumerate(rules)}
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "npu-review",
                        "version": release,
                        "semanticVersion": release,
                        "informationUri": DOCS_URI,
                        "downloadUri": TOOL_URI,
                        "rules": descriptors,
                    }
                },
                "results": [_sarif_result(f, index) for f in report.findings],
                "invocations": [
                    {
                        "executionSuccessful": not report.errors,
                        "toolExecutionNotifications": [
                            {"level": "warning", "message": {"text": e}} for e in report.errors
                        ],
                    }
                ],
            }
        ],
    }
    return json_text(doc)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report, head: Tree | None = None) -> str:
    """GitHub Actions workflow commands: `::error file=…,line=…,endLine=…,title=…::message`."""
    out = []
    for f in report.findings:
        props = ",".join(
            [
                f"file={_escape_property(f.path)}",
                f"line={f.line}",
                f"endLine={f.end_line}",
                f"title={_escape_property(f'{f.rule} {f.name}')}",
            ]
        )
        out.append(f"::{ACTIONS_COMMAND[f.severity]} {props}::{_escape_data(f.message)}")
    out.extend(f"::warning::{_escape_data('npu-review: ' + e)}" for e in report.errors)
    return "\n".join(out) + ("\n" if out else "")


RENDERERS: dict[str, Callable[[Report, Tree | None], str]] = {
    "text": render_text,
    "concise": render_concise,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}


def render(fmt: str, report: Report, head: Tree | None = None, color: bool = False) -> str:
    """The report in one of FORMATS; `color` styles the formats meant for a person (text, concise)."""
    if fmt == "text":
        return render_text(report, head, color)
    if fmt == "concise":
        return render_concise(report, head, color)
    return RENDERERS[fmt](report, head)
