"""The analysis layer's boundaries: rules share derived facts through checks/analysis, never through each other,
and the layer names each of its facts once."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[1] / "checks"


def _imported_modules(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_no_rule_module_imports_another_rule_module() -> None:
    rules = sorted((CHECKS / "rules").glob("npu*.py"))
    assert len(rules) > 80
    crossing = {
        p.name: sorted(m for m in _imported_modules(p) if ".rules.npu" in m or m.startswith("checks.rules.npu"))
        for p in rules
    }
    assert {name: mods for name, mods in crossing.items() if mods} == {}


def test_each_public_name_of_the_analysis_layer_is_defined_in_one_module() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((CHECKS / "analysis").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                where[node.name].append(path.name)
    assert {name: files for name, files in where.items() if len(files) > 1} == {}
