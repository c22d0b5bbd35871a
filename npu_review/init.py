"""`npu-review init`: write a commented `.github/npu-review.yml` for the repository in front of it, and show what
`check --all` reports there today, grouped by rule.

The config names the project profile detected for the tree (the one check and the App would choose), lists the
files it counts as Ascend, and every rule with its default, commented out, so that the rules keep following the
shipped defaults until someone sets one.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from npu_review.checks import facts as facts_data
from npu_review.checks.config import CONFIG_PATH, Config, parse_config
from npu_review.checks.engine import Report, known_rule_ids, run
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT, KindMap
from npu_review.checks.model import ChangeSet, Finding
from npu_review.checks.output import summary_line
from npu_review.checks.rule import all_rules
from npu_review.configschema import modeline

# The kinds whose files are Ascend by their path (what the config's comment lists).
ASCEND_KINDS = (NPU_SCRIPT, ASCEND_WORKFLOW, ASCEND_DOCKERFILE)
# Paths listed per kind in the config's comment, and locations per rule in the first look.
LISTED_PATHS = 8
LISTED_FINDINGS = 5


@dataclass(frozen=True)
class Detected:
    profile: str
    ascend: dict[str, list[str]]  # kind -> paths, for the chosen profile
    counts: dict[str, int]  # profile -> Ascend files it counts


def detect(paths: Iterable[str]) -> Detected:
    """The profile check and the App choose for these paths when the config names none (checks.facts.detect),
    and the Ascend files each shipped profile's globs count among them."""
    all_paths = sorted(paths)
    counts: dict[str, int] = {}
    found: dict[str, dict[str, list[str]]] = {}
    for profile in facts_data.profiles():
        kinds = KindMap(defaults=facts_data.load(None, profile).file_kinds)
        by_kind = {k: [p for p in all_paths if kinds.has(p, k)] for k in ASCEND_KINDS}
        found[profile] = by_kind
        counts[profile] = len({p for ps in by_kind.values() for p in ps})
    best = facts_data.detect(all_paths)
    return Detected(best, found[best], counts)


def config_text(detected: Detected, repo_name: str, version: str, today: dt.date) -> str:
    """The commented config: profile, the Ascend files it counts, ignore_paths, every rule with its default."""
    shipped = ", ".join(facts_data.profiles())
    counted = "; ".join(f"{name}: {n}" for name, n in sorted(detected.counts.items()))
    out = [
        # Editors with a YAML language server complete and check the keys with the schema (npu_review/configschema).
        modeline(version),
        f"# npu-review configuration for {repo_name}, written by `npu-review init` (npu-review {version},"
        f" {today.isoformat()}).",
        "# Read from the pull request's base branch, so a PR cannot switch its own checks off. Reference: the",
        "# README's Configuration section, `npu-review rules` and `npu-review rules NPU301`.",
        "",
        "# The project profile: the facts and file globs the rules use (detected from the layout; without this key",
        "# check and the App detect it the same way).",
        f"# Shipped profiles: {shipped}. Ascend files each counts in this repository: {counted}.",
        f"profile: {detected.profile}",
        "",
        f"# The files {detected.profile} counts as Ascend here (by path; other rules read every Dockerfile,",
        "# workflow and script whatever its path):",
    ]
    for kind in ASCEND_KINDS:
        paths = detected.ascend[kind]
        out.append(f"#   {kind}: {len(paths)} file{'' if len(paths) == 1 else 's'}")
        out += [f"#     {path}" for path in paths[:LISTED_PATHS]]
        if len(paths) > LISTED_PATHS:
            out.append(f"#     … and {len(paths) - LISTED_PATHS} more")
    out += [
        "# To count others, replace a kind's globs (** crosses directories, * does not), e.g.:",
        "# paths:",
        '#   ascend_dockerfile: ["docker/npu/**/Dockerfile*"]',
        "",
        "# Paths never reviewed (globs):",
        "ignore_paths: []",
        "",
        "# Every rule with its default. Uncomment a line and set on, off, error, warning or notice.",
        "rules:",
    ]
    for rid, cls in all_rules().items():
        default = cls.severity.label if cls.enabled_by_default else "off"
        out.append(f"  # {rid}: {default:<7}  # {cls.name}: {cls.title}")
    out += [
        "",
        "# Inline review comments for notices too (by default errors and warnings only; notices are in the check run):",
        "# review:",
        "#   inline_notices: true",
    ]
    return "\n".join(out) + "\n"


def _short(message: str, width: int = 100) -> str:
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def first_look(report: Report, limit: int = LISTED_FINDINGS) -> str:
    """What check --all reports, grouped by rule: count, severity, and the first locations."""
    groups: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        groups[f.rule].append(f)
    if not groups:
        return "No findings: `npu-review check --all` reports nothing here today.\n"
    rules = all_rules()
    out = ["What `npu-review check --all` reports here today, by rule:"]
    for rid in sorted(groups):
        found = groups[rid]
        severities = sorted({f.severity.label for f in found})
        name = rules[rid].name if rid in rules else ""
        out.append(f"  {rid} {name} ({', '.join(severities)}): {len(found)}")
        for f in found[:limit]:
            out.append(f"      {f.path}:{f.line}  {_short(f.message)}")
        if len(found) > limit:
            out.append(f"      … and {len(found) - limit} more")
    out.append(f"{summary_line(report)}. On a pull request only what it adds or changes is reported.")
    return "\n".join(out) + "\n"


def init(
    changeset: ChangeSet,
    work_tree: Path,
    version: str,
    force: bool,
    today: dt.date,
    review: Callable[[ChangeSet, Config], Report] | None = None,
) -> tuple[Path, str]:
    """Writes the config into `work_tree`; returns its path and the first look to print."""
    target = work_tree / CONFIG_PATH
    if target.exists() and not force:
        raise FileExistsError(f"{CONFIG_PATH} exists already (--force replaces it)")
    detected = detect(changeset.head.paths())
    text = config_text(detected, work_tree.name, version, today)
    config = parse_config(text, known_rule_ids(), source=CONFIG_PATH)  # what check will read: must be valid
    report = review(changeset, config) if review is not None else run(changeset, config)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target, first_look(report)
