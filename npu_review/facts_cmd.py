"""`npu-review facts`: the shipped facts, section by section, each with its source and date (and `--format json`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from npu_review.checks import facts as facts_data
from npu_review.checks.facts.typed import FactsError

if TYPE_CHECKING:
    from npu_review.checks.facts import Facts

EXIT_OK, EXIT_UNSOURCED, EXIT_USAGE = 0, 1, 2


def add_parser(sub: Any) -> None:
    """The `facts` subcommand, on the CLI's subparsers."""
    f = sub.add_parser(
        "facts",
        help="print the shipped facts, each section with its source and date",
        description="Print the shipped facts sections with each one's source and date. Exit 1 when a universal "
        "section names no source or date.",
    )
    f.add_argument("section", nargs="?", help="print this section's data in full (e.g. torch_npu_releases)")
    f.add_argument("--format", choices=("text", "json"), default="text", help="json: every section with its data")
    f.add_argument(
        "--profile",
        default=facts_data.DEFAULT_PROFILE,
        help=f"the project profile whose project sections are shown (default: {facts_data.DEFAULT_PROFILE})",
    )


def plain(value: Any) -> Any:
    """A section's data as JSON values (dataclasses and mappings as objects, tuples as lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _sizes(section: Any) -> dict[str, int]:
    """How many entries each table or list of a section holds."""
    return {
        f.name: len(v)
        for f in dataclasses.fields(section)
        if f.name not in ("source", "date") and isinstance(v := getattr(section, f.name), Mapping | tuple)
    }


def unsourced(facts: Facts) -> list[str]:
    """The universal sections that name no source or no date (a fact nobody can trace is a guess)."""
    from npu_review.checks.facts.schema import UNIVERSAL, sections

    return [
        name
        for name in sections(UNIVERSAL)
        if not getattr(facts, name).source.strip() or not getattr(facts, name).date.strip()
    ]


def report(facts: Facts) -> dict[str, Any]:
    from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, sections, sourced_sections

    sourced = set(sourced_sections())
    out = []
    for scope in (UNIVERSAL, PROJECT):
        for name in sections(scope):
            section = getattr(facts, name)
            data = plain(section)
            out.append(
                {
                    "name": name,
                    "scope": scope,
                    "sourced": name in sourced,
                    "source": " ".join(section.source.split()),
                    "date": section.date,
                    "about": facts_data.about(name),
                    "sizes": _sizes(section),
                    "data": {k: v for k, v in data.items() if k not in ("source", "date")},
                }
            )
    return {"version": 1, "profile": facts.profile, "sections": out}


def run(args: argparse.Namespace) -> int:
    try:
        facts = facts_data.load(profile=args.profile)
    except FactsError as exc:
        print(f"npu-review: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    doc = report(facts)
    if args.section:
        found = [s for s in doc["sections"] if s["name"] == args.section]
        if not found:
            names = ", ".join(s["name"] for s in doc["sections"])
            print(f"npu-review: error: unknown facts section {args.section!r} (known: {names})", file=sys.stderr)
            return EXIT_USAGE
        doc["sections"] = found
    if args.format == "json":
        sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_text(doc, full=bool(args.section)))
    missing = unsourced(facts)
    if missing:
        print(f"npu-review: universal sections without a source or date: {', '.join(missing)}", file=sys.stderr)
        return EXIT_UNSOURCED
    return EXIT_OK


def _text(doc: dict[str, Any], full: bool) -> str:
    lines = [f"Facts of profile {doc['profile']} (universal: true of any project; project: the profile's)", ""]
    for s in doc["sections"]:
        kind = f"{s['scope']}, read from its sources by bench/facts/refresh.py" if s["sourced"] else s["scope"]
        lines.append(f"{s['name']} ({kind})")
        if s["about"]:
            lines.append(f"  about:  {s['about']}")
        lines.append(f"  source: {s['source'] or '(none)'}")
        lines.append(f"  date:   {s['date'] or '(none)'}")
        if s["sizes"]:
            lines.append("  holds:  " + ", ".join(f"{n} {k}" for k, n in s["sizes"].items()))
        if full:
            lines.append("  data:")
            lines.extend("    " + ln for ln in json.dumps(s["data"], indent=1, ensure_ascii=False).splitlines())
        lines.append("")
    return "\n".join(lines)
