"""A JSON Schema of the repo config `.github/npu-review.yml`, generated from the typed config and facts.

Editors that read `# yaml-language-server: $schema=…` (VS Code's YAML extension, JetBrains, Neovim's yamlls)
complete keys and flag typos with it; `npu-review init` writes that comment. The shipped file
(`npu_review/npu-review.schema.json`) is this module's output:

    python -m npu_review.configschema > npu_review/npu-review.schema.json

`tests/test_config_schema.py` fails while the file and the code (a new rule, facts field or config key) disagree.
What the schema says is what `checks/config.py` accepts, in its canonical spelling (upper-case rule ids); the
tool itself stays the judge (a `knowledge:` entry new to a mapping must still hold every key of its type).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from npu_review import version
from npu_review.checks import facts as facts_data
from npu_review.checks.config import CONFIG_PATH
from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, Facts
from npu_review.checks.kinds import KNOWN_KINDS
from npu_review.checks.rule import all_rules

FILE_NAME = "npu-review.schema.json"
REPOSITORY = "npu-review/npu-review"
# The words a rule setting may be (checks/config.py _rule_setting, Severity.parse); YAML 1.1 reads on/off as
# booleans, which are accepted too.
_RULE_WORDS = ("on", "off", "true", "false", "enable", "enabled", "disable", "disabled", "error", "warning", "notice")


def schema_url(release: str | None = None) -> str:
    """Where editors fetch the schema of a release: the file as tagged (the default branch's for a build that is
    no release)."""
    release = release or version()
    ref = f"v{release}" if release[:1].isdigit() and "+" not in release else "main"
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{ref}/npu_review/{FILE_NAME}"


def modeline(release: str | None = None) -> str:
    return f"# yaml-language-server: $schema={schema_url(release)}"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """A top-level key may be left empty (`rules:` with every line commented out reads as null)."""
    return {"anyOf": [schema, {"type": "null"}]}


def _strings() -> dict[str, Any]:
    return {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def _described(cls: type) -> str | None:
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(f"{cls.__name__}("):  # the docstring dataclasses make up
        return None
    return doc.split("\n\n")[0].replace("\n", " ")


def _type(tp: Any) -> dict[str, Any]:
    """The schema of one facts type, as checks/facts/typed.py reads it (mappings' keys are strings; inside
    `knowledge:` every key of a section is optional, since mappings merge into the shipped ones)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        out = _type(args[0])
        if "regex" in args[1:]:
            out["format"] = "regex"
        return out
    if origin is Literal:
        return {"enum": list(args)}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is type(None):
        return {"type": "null"}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_type(a) for a in args]}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type(args[0])}
        return {"type": "array", "items": [_type(a) for a in args], "minItems": len(args), "maxItems": len(args)}
    if origin in (Mapping, dict):
        return {"type": "object", "additionalProperties": _type(args[1])}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        out = {
            "type": "object",
            "properties": {f.name: _type(hints[f.name]) for f in dataclasses.fields(tp)},
            "additionalProperties": False,
        }
        described = _described(tp)
        if described:
            out["description"] = described
        return out
    raise TypeError(f"unsupported type {tp!r} in the facts schema")


def _knowledge() -> dict[str, Any]:
    hints = typing.get_type_hints(Facts, include_extras=True)
    sections = {}
    for f in dataclasses.fields(Facts):
        scope = f.metadata.get("scope")
        if scope not in (UNIVERSAL, PROJECT):
            continue  # `profile` is the top-level key
        section = _type(hints[f.name])
        where = "checks/facts/ascend.yml" if scope == UNIVERSAL else "the profile, checks/facts/profiles/<name>.yml"
        section["description"] = f"{section.get('description', f.name)} ({scope} facts; shipped in {where})"
        sections[f.name] = section
    # A key of older configs that checks/facts/__init__.py (_legacy) still reads as today's.
    sections["cann_torch_npu"] = {
        "type": "object",
        "description": "Older spelling: {table: {CANN version: [torch_npu versions]}} adds those releases to "
        "torch_npu_releases.",
        "deprecationMessage": "Use torch_npu_releases.releases.",
        "properties": {
            "table": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            "source": {"type": "string"},
            "date": {"type": "string"},
        },
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "description": "Override or extend the shipped facts, section by section: mappings merge into the shipped "
        "ones, lists and scalars replace them.",
        "properties": sections,
        "additionalProperties": False,
    }


def config_schema() -> dict[str, Any]:
    rules = all_rules()
    setting = {
        "anyOf": [
            {"type": "boolean"},
            {"enum": list(_RULE_WORDS)},
            {
                "type": "object",
                "properties": {"enabled": {"type": "boolean"}, "severity": {"enum": ["error", "warning", "notice"]}},
                "additionalProperties": False,
            },
        ]
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": f"npu-review repo config ({CONFIG_PATH})",
        "description": "Read from the pull request's base branch. `npu-review init` writes a commented one.",
        "type": "object",
        "properties": {
            "rules": _nullable(
                {
                    "type": "object",
                    "description": "Per rule: on, off, a severity, or {enabled, severity}.",
                    "properties": {
                        rid: {
                            **setting,
                            "description": f"{cls.name}: {cls.title} (default: "
                            f"{cls.severity.label if cls.enabled_by_default else 'off'})",
                        }
                        for rid, cls in rules.items()
                    },
                    "additionalProperties": False,
                }
            ),
            "ignore_paths": _nullable({**_strings(), "description": "Globs of paths never reviewed."}),
            "paths": _nullable(
                {
                    "type": "object",
                    "description": "Replace the default globs of a file kind.",
                    "properties": {kind: _strings() for kind in sorted(KNOWN_KINDS)},
                    "additionalProperties": False,
                }
            ),
            "profile": _nullable({"enum": list(facts_data.profiles()), "description": "The project profile."}),
            "knowledge": _nullable(_knowledge()),
            "review": _nullable(
                {
                    "type": "object",
                    "properties": {
                        "inline_notices": {
                            "type": "boolean",
                            "description": "Post notices as inline comments too (default: errors and warnings).",
                        },
                        "max_inline_comments": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Inline comments on one PR at most, one per cause (default 10); the "
                            "other causes are listed in the review body, most severe first.",
                        },
                    },
                    "additionalProperties": False,
                }
            ),
        },
        "additionalProperties": False,
    }


def schema_text() -> str:
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(schema_text())
