"""The typed facts: shipped data split into universal and project files, overrides validated, rules free of verl."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import re
import tokenize
from importlib import resources
from pathlib import Path

import pytest
import yaml

from npu_review.checks import facts as facts_data
from npu_review.checks import globs
from npu_review.checks.config import ConfigError, parse_config
from npu_review.checks.engine import known_rule_ids, run
from npu_review.checks.facts import FactsError, default_facts, load
from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, Facts, sections, sourced_sections
from npu_review.checks.model import ChangeSet, MemoryTree

ROOT = Path(__file__).resolve().parent.parent
RULES = sorted((ROOT / "checks" / "rules").glob("npu*.py"))


def _yaml(*parts: str) -> dict[str, object]:
    data = yaml.safe_load(resources.files("npu_review.checks.facts").joinpath(*parts).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_universal_and_project_facts_live_in_their_own_files() -> None:
    by_hand = [s for s in sections(UNIVERSAL) if s not in sourced_sections()]
    assert list(_yaml("ascend.yml")) == by_hand
    sourced = json.loads(resources.files("npu_review.checks.facts").joinpath("sourced.json").read_text("utf-8"))
    assert list(sourced) == ["about", *sourced_sections()]
    assert facts_data.profiles() == ("generic", "verl", "vllm-ascend")
    for name in facts_data.profiles():
        assert list(_yaml("profiles", f"{name}.yml")) == list(sections(PROJECT)), name
    assert {f.name for f in dataclasses.fields(Facts)} == {"profile", *sections(UNIVERSAL), *sections(PROJECT)}


def test_shipped_facts_load_into_frozen_typed_sections() -> None:
    facts = default_facts()
    assert facts.profile == "verl"
    assert facts.task_queue.graph_incompatible_levels == ("2",)
    assert facts.task_queue.env == "TASK_QUEUE_ENABLE"
    assert facts.torch_npu_releases.releases["2.8.0.post2"].cann == "8.5.0"
    assert facts.torch_npu_releases.releases["2.8.0.post2"].listed
    assert facts.ascend_runners.labels["linux-aarch64-a3-16"].npus == 16
    assert facts.invisible_unicode.ranges[0] == (0x200B, 0x200F)
    assert facts.image_tags.schemes[0].default_backend is None and facts.image_tags.schemes[2].default_backend == "vllm"
    assert facts.project.name == "verl"
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.launch.enforce_eager_key = "x"  # type: ignore[misc]
    assert load() is facts  # built once per process


def test_every_section_records_its_source_and_date() -> None:
    facts = default_facts()
    for name in (*sections(UNIVERSAL), *sections(PROJECT)):
        section = getattr(facts, name)
        assert section.source.strip() and re.fullmatch(r"\d{4}-\d{2}-\d{2}", section.date), name


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"laucnh": {}}, "knowledge: unknown key 'laucnh' (did you mean 'launch'?)"),
        ({"launch": {"enforce_eager_kye": "x"}}, "knowledge.launch: unknown key 'enforce_eager_kye' (did you mean "),
        ({"launch": {"cudagraph_mode_keys": "a.b"}}, "knowledge.launch.cudagraph_mode_keys: expected a list of "),
        ({"launch": 3}, "knowledge.launch: expected a mapping, got the number 3"),
        ({"twin_drift": {"one_sided": [1]}}, "knowledge.twin_drift.one_sided[0]: expected a string, got the number 1"),
        ({"image_tags": {"temporary": ["("]}}, "knowledge.image_tags.temporary[0]: not a valid regular expression"),
        ({"cann_torch_npu": {"table": {8.5: ["2.9.0"]}}}, "knowledge.cann_torch_npu.table: key 8.5 is not a string"),
        (
            {"torch_npu_releases": {"releases": {"9.9.9": {"torch": "9.9.9"}}}},
            "knowledge.torch_npu_releases.releases.9.9.9: missing key",
        ),
        (
            {"ascend_runners": {"labels": {"linux-x-8": {"device": "a3", "npus": "8"}}}},
            "knowledge.ascend_runners.labels.linux-x-8.npus: expected an integer, got the string '8'",
        ),
        (
            {"ascend_runners": {"labels": {"linux-x-8": {"device": "a3"}}}},
            "knowledge.ascend_runners.labels.linux-x-8: missing key 'npus'",
        ),
        (
            {"ascend_values": {"use_mbridge_default": "yes"}},
            "knowledge.ascend_values.use_mbridge_default: expected true or false or null, got the string 'yes'",
        ),
        ({"image_tags": {"tokens": [["cann"]]}}, "knowledge.image_tags.tokens[0]: expected a list of 2 items"),
        ({"default_sweep": {"max_listed": True}}, "knowledge.default_sweep.max_listed: expected an integer, got true"),
        ({"profile": "verl"}, "knowledge: unknown key 'profile' (the profile is named by the top-level"),
    ],
)
def test_bad_overrides_name_the_key(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(FactsError) as err:
        load(overrides)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


def test_overrides_merge_mappings_and_replace_lists() -> None:
    new = {"torch": "2.14.0", "cann": "9.2.0", "listed": True}
    facts = load({"torch_npu_releases": {"releases": {"2.14.0": new}}, "launch": {"cudagraph_mode_keys": ["a.b"]}})
    assert facts.torch_npu_releases.releases["2.14.0"].cann == "9.2.0"
    shipped = default_facts().torch_npu_releases.releases
    assert facts.torch_npu_releases.releases["2.8.0.post2"] == shipped["2.8.0.post2"]  # kept
    assert facts.launch.cudagraph_mode_keys == ("a.b",)  # replaced
    assert facts.launch.enforce_eager_key == default_facts().launch.enforce_eager_key
    assert "2.14.0" not in shipped  # the shipped facts are untouched


def test_the_older_cann_torch_npu_key_still_adds_releases() -> None:
    facts = load({"cann_torch_npu": {"table": {"9.2.0": ["2.14.0.post1"]}}})
    assert facts.torch_npu_releases.releases["2.14.0.post1"].cann == "9.2.0"
    assert facts.torch_npu_releases.releases["2.14.0.post1"].torch == "2.14.0"
    with pytest.raises(FactsError, match="expected a list of strings"):
        load({"cann_torch_npu": {"table": {"9.2.0": "2.14.0"}}})


def test_config_errors_carry_the_source_and_stop_at_parse_time() -> None:
    known = known_rule_ids()
    with pytest.raises(ConfigError) as err:
        parse_config("knowledge:\n  laucnh: {}\n", known, source="cfg.yml")
    assert str(err.value) == "cfg.yml: knowledge: unknown key 'laucnh' (did you mean 'launch'?)"
    with pytest.raises(ConfigError) as err:
        parse_config("profile: [verl]\n", known, source="cfg.yml")
    assert str(err.value) == "cfg.yml: profile: expected a profile name (generic, verl, vllm-ascend)"
    assert parse_config("profile: verl\n", known).facts is default_facts()


SCRIPT = """\
#!/bin/bash
export TASK_QUEUE_ENABLE=3
python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.rollout.enforce_eager=False
"""


def test_an_override_reaches_the_rules() -> None:
    tree = MemoryTree({"examples/run_qwen_npu.sh": SCRIPT})
    plain = run(ChangeSet(head=tree, audit=True))
    assert [f.rule for f in plain.findings if f.rule == "NPU101"] == []  # level 3 is not known to clash
    config = parse_config("knowledge:\n  task_queue: {graph_incompatible_levels: ['3']}\n", known_rule_ids())
    found = [(f.rule, f.path, f.line) for f in run(ChangeSet(head=tree, audit=True), config).findings]
    assert ("NPU101", "examples/run_qwen_npu.sh", 2) in found


# -- verl out of the code paths ------------------------------------------------------------------------------------


def _outside_docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every token of a module that is not a docstring: code, strings and comments."""
    text = path.read_text(encoding="utf-8")
    docstrings: set[tuple[int, int]] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.add((first.lineno, first.col_offset))
    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.start not in docstrings
    ]


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_rule_modules_name_no_project_outside_their_docstring(path: Path) -> None:
    assert [(n, t) for n, t in _outside_docstrings(path) if "verl" in t.lower()] == []


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_rule_modules_read_facts_only_through_ctx_facts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "knowledge" not in "".join(t for _n, t in _outside_docstrings(path) if not t.startswith("#"))
    # A `.get(key, default)` on a section would repeat a data value in code; typed fields have no defaults.
    assert re.findall(r"facts\.\w+\.get\(", text) == []


def test_the_configuration_reference_lists_every_section_with_its_scope() -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (universal|project) \|", reference, re.M))
    expected = {name: UNIVERSAL for name in sections(UNIVERSAL)} | {name: PROJECT for name in sections(PROJECT)}
    assert rows == expected


def test_the_profile_gives_the_globs_of_every_file_kind() -> None:
    from npu_review.checks.facts.schema import FileKinds
    from npu_review.checks.kinds import KNOWN_KINDS, UNIVERSAL_KIND_GLOBS, KindMap

    named = {f.name for f in dataclasses.fields(FileKinds)} - {"source", "date"}
    # `yaml` is decided by the extension in every layout: no profile lists it.
    assert named | set(UNIVERSAL_KIND_GLOBS) == KNOWN_KINDS and not named & set(UNIVERSAL_KIND_GLOBS)
    assert KindMap().kinds("verl/trainer/config/ppo_trainer.yaml") == {"hydra_config", "yaml"}
    assert KindMap().kinds("tests/e2e/configs/model.yml") == {"yaml"}
    # `knowledge: file_kinds` replaces a kind's globs like `paths:` does; other kinds keep the profile's.
    facts = load({"file_kinds": {"hydra_config": ["conf/**/*.yaml"]}})
    kinds = KindMap(None, facts.file_kinds)
    assert kinds.kinds("conf/a/b.yaml") == {"hydra_config", "yaml"}
    assert kinds.kinds("verl/trainer/config/ppo_trainer.yaml") == {"yaml"}
    assert kinds.kinds("run_npu.sh") == {"shell", "npu_script"}


@pytest.mark.parametrize(
    ("paths", "profile"),
    [
        (["verl/__init__.py", "verl/trainer/main_ppo.py", "docker/ascend/Dockerfile.ascend_9.1.0_a2"], "verl"),
        ([".github/workflows/docker-build-ascend-a2.yml", "README.md"], "verl"),
        (["vllm_ascend/__init__.py", "vllm_ascend/envs.py", "Dockerfile.a3"], "vllm-ascend"),
        (["docker/npu/Dockerfile", ".github/workflows/ci.yml", "train.sh"], "generic"),
        ([], "generic"),
    ],
)
def test_the_profile_is_detected_from_the_paths(paths: list[str], profile: str) -> None:
    assert facts_data.detect(paths) == profile


def test_a_config_without_profile_takes_the_detected_one_and_a_named_one_stays() -> None:
    detected = parse_config("rules: {NPU301: warning}\n", known_rule_ids())
    assert detected.profile is None
    assert detected.for_tree(["vllm_ascend/__init__.py"]).facts.project.name == "vllm-ascend"
    assert detected.for_tree(["acme/__init__.py"]).facts.fork_guard.owners == ()
    assert detected.for_tree(["verl/__init__.py"]) is detected  # the facts it holds already
    named = parse_config("profile: verl\n", known_rule_ids())
    assert named.for_tree(["vllm_ascend/__init__.py"]) is named
    overridden = parse_config("knowledge: {fork_guard: {owners: [acme]}}\n", known_rule_ids())
    assert overridden.for_tree(["train.sh"]).facts.fork_guard.owners == ("acme",)
    assert overridden.for_tree(["train.sh"]).facts.profile == "generic"


def test_no_message_of_another_project_reaches_an_unknown_layout() -> None:
    """The generic profile names no project's owners, images, paths or runner labels."""
    text = resources.files("npu_review.checks.facts").joinpath("profiles", "generic.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    for section in ("image_tags", "repo_links", "fork_guard", "published_tags", "npu_workarounds", "version_tables"):
        values = yaml.safe_dump({k: v for k, v in data[section].items() if k != "source"})
        assert "verl" not in values and "vllm-project" not in values, section


def test_every_shipped_profile_builds_and_detection_reads_its_globs() -> None:
    # Detection reads `project.looks_like` from the data as shipped, without building each profile's facts.
    detected = dict(facts_data._looks_like())
    for name in facts_data.profiles():
        facts = facts_data.load(None, name)
        assert facts.profile == name
        assert [p.pattern for p in detected[name]] == [globs.compile_glob(g).pattern for g in facts.project.looks_like]
