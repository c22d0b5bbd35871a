"""The registry: the explicit list in checks/rules/__init__.py names every rule module's rule, in id order."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import npu_review.checks.rules
from npu_review.checks.model import Severity
from npu_review.checks.rule import Rule, all_rules, validate
from npu_review.checks.rules import RULES


def test_every_rule_module_has_one_rule_and_the_list_names_it() -> None:
    found = []
    for mod in pkgutil.iter_modules(npu_review.checks.rules.__path__):
        module = importlib.import_module(f"npu_review.checks.rules.{mod.name}")
        classes = [
            c
            for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, Rule) and c.__module__ == module.__name__
        ]
        assert len(classes) == 1, f"{mod.name}: {classes}"
        cls = classes[0]
        # The module is named after the id and the name: npu301_tls_verification_disabled.py for NPU301.
        assert mod.name == f"{cls.id.lower()}_{cls.name.replace('-', '_')}"
        found.append(cls)
    assert list(RULES) == sorted(found, key=lambda c: c.id)
    assert list(all_rules()) == [c.id for c in RULES]


def test_every_rule_says_what_it_is() -> None:
    for rid, cls in all_rules().items():
        assert isinstance(cls.severity, Severity), rid
        assert cls.title and "\n" not in cls.title, rid
        assert cls.kinds or cls.is_project(), f"{rid} checks no kind of file"
        assert cls.is_per_file() or cls.is_project(), f"{rid} implements neither check_file nor check_project"


class _Rule(Rule):
    id = "NPU999"
    name = "some-rule"
    severity = Severity.NOTICE
    title = "t"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "NPU99"}, "bad rule id 'NPU99'"),
        ({"name": "Some_Rule"}, "rule name 'Some_Rule' is not kebab-case"),
    ],
)
def test_malformed_rules_are_refused(change: dict[str, str], message: str) -> None:
    bad = type("Bad", (_Rule,), change)
    with pytest.raises(ValueError, match=message):
        validate((bad,))


def test_a_reused_id_is_refused() -> None:
    twin = type("Twin", (_Rule,), {"name": "other-rule"})
    with pytest.raises(ValueError, match="rule id NPU999 listed twice"):
        validate((_Rule, twin))


def test_the_walk_kinds_are_the_file_kinds() -> None:
    from npu_review.checks import kinds, rule

    assert {kinds.WORKFLOW, kinds.ASCEND_WORKFLOW} == rule.WORKFLOW_KINDS
    assert {kinds.DOCKERFILE, kinds.ASCEND_DOCKERFILE} == rule.DOCKERFILE_KINDS


def test_the_walk_hands_each_job_and_step_once_and_honours_needles() -> None:
    from npu_review.checks.config import DEFAULT_CONFIG
    from npu_review.checks.context import Context
    from npu_review.checks.kinds import KindMap
    from npu_review.checks.model import ChangeSet, MemoryTree
    from npu_review.checks.rule import Hit

    seen: list[str] = []

    class Walker(_Rule):
        kinds = frozenset({"workflow", "dockerfile"})
        needles = ("runs-on", "FROM")

        def check_workflow(self, wf, src, ctx):  # type: ignore[no-untyped-def]
            seen.append(f"workflow {wf.path}")
            return ()

        def check_job(self, job, wf, src, ctx):  # type: ignore[no-untyped-def]
            seen.append(f"job {job.id}")
            return ()

        def check_step(self, step, job, wf, src, ctx):  # type: ignore[no-untyped-def]
            seen.append(f"step {job.id}/{step.index}")
            yield Hit(src.path, step.node.line, "s")

        def check_dockerfile(self, df, src, ctx):  # type: ignore[no-untyped-def]
            seen.append(f"dockerfile {[i.keyword for i in df.instructions]}")
            return ()

    files = {
        ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo 1\n"
        "      - run: echo 2\n  b:\n    runs-on: y\n    steps:\n      - run: echo 3\n",
        ".github/workflows/none.yml": "on: push\n",  # no needle: not parsed, no hook
        "Dockerfile": "FROM ubuntu\nRUN true\n",
    }
    ctx = Context(ChangeSet(MemoryTree(files), audit=True), DEFAULT_CONFIG, KindMap())
    hits = [h for path in files if (src := ctx.source(path)) is not None for h in Walker().run_file(src, ctx)]
    assert seen == [
        "workflow .github/workflows/ci.yml",
        "job a",
        "step a/0",
        "step a/1",
        "job b",
        "step b/0",
        "dockerfile ['FROM', 'RUN']",
    ]
    assert [(h.path, h.line) for h in hits] == [
        (".github/workflows/ci.yml", 6),
        (".github/workflows/ci.yml", 7),
        (".github/workflows/ci.yml", 11),
    ]
    assert Walker.is_per_file()


def test_the_specs_say_what_the_rules_say(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from npu_review.checks import diskcache, rule

    fresh = rule._make_specs()
    for rid, cls in all_rules().items():
        spec = fresh[rid]
        assert spec.load() is cls
        assert (spec.name, spec.severity, spec.title, spec.enabled_by_default) == (
            cls.name,
            cls.severity,
            cls.title,
            cls.enabled_by_default,
        )
        assert (spec.kinds, spec.per_file, spec.project, spec.triggers) == (
            cls.kinds,
            cls.is_per_file(),
            cls.is_project(),
            cls.triggers_context(),
        )
    # Kept in the cache folder, and read back from it; an entry that does not load is made anew.
    monkeypatch.setattr(diskcache, "_folder", str(tmp_path))
    monkeypatch.setattr(rule, "_SPECS", None)
    assert rule.rule_specs() == fresh
    (entry,) = tmp_path.iterdir()
    monkeypatch.setattr(rule, "_SPECS", None)
    assert rule.rule_specs() == fresh
    entry.write_bytes(b"\x80\x05garbage")
    monkeypatch.setattr(rule, "_SPECS", None)
    assert rule.rule_specs() == fresh
    assert entry.read_bytes() != b"\x80\x05garbage"
