"""The JSON Schema of `.github/npu-review.yml` (npu_review/configschema.py): the shipped file is the generated one,
`npu-review init`'s config validates against it and names it for editors, and it refuses what the tool refuses."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from npu_review import version
from npu_review.checks.config import ConfigError, parse_config
from npu_review.checks.engine import known_rule_ids
from npu_review.configschema import FILE_NAME, schema_text, schema_url
from tests.test_init import VERL, cli, make_repo

ROOT = Path(__file__).resolve().parent.parent


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(resources.files("npu_review").joinpath(FILE_NAME).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def errors(text: str) -> list[str]:
    return [e.message for e in validator().iter_errors(yaml.safe_load(text))]


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = (ROOT / "npu_review" / FILE_NAME).read_text(encoding="utf-8")
    assert shipped == schema_text(), (
        "npu_review/npu-review.schema.json is stale: python -m npu_review.configschema > "
        "npu_review/npu-review.schema.json"
    )


def test_init_writes_the_schema_comment_and_a_config_that_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "verl", VERL)
    code, _, _ = cli(capsys, "init", "--repo", str(repo), "--jobs", "1")
    assert code == 0
    text = (repo / ".github/npu-review.yml").read_text()
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={schema_url()}"
    assert schema_url() == (
        f"https://raw.githubusercontent.com/npu-review/npu-review/v{version()}/npu_review/npu-review.schema.json"
    )
    assert errors(text) == []
    # Every rule line uncommented, and the commented review key: still valid.
    uncommented = re.sub(r"^  # (NPU\d{3}: \w+)", r"  \1", text, flags=re.M).replace("# review:\n#   ", "review:\n  ")
    assert "\n  NPU301: warning" in uncommented and "\nreview:\n  inline_notices: true\n" in uncommented
    assert errors(uncommented) == []
    # A typo is refused, by the schema as by the tool.
    typo = text.replace("ignore_paths: []", "ignore_path: []")
    assert errors(typo) == ["Additional properties are not allowed ('ignore_path' was unexpected)"]
    with pytest.raises(ConfigError, match="unknown key 'ignore_path'"):
        parse_config(typo, known_rule_ids())


GOOD = [
    "rules:\n  NPU103: off\n  NPU301: {severity: error}\n  NPU302: {enabled: false}\n  NPU304: notice\n",
    "ignore_paths:\n  - third_party/**\npaths:\n  npu_script: ['examples/ascend/**/*.sh', '**/*_npu.sh']\n",
    "profile: vllm-ascend\nreview:\n  inline_notices: true\n",
    "review:\n  max_inline_comments: 0\n",
    "knowledge:\n  graph_modes: {valid: [NONE, PIECEWISE, FULL]}\n  cann_torch_npu: {table: {'9.2.0': ['2.13.0']}}\n",
    "knowledge:\n  torch_npu_releases: {releases: {'2.14.0': {torch: '2.14.0', cann: '9.2.0', listed: true}}}\n",
    "knowledge:\n  ascend_runners:\n    labels: {x-8: {device: a3, npus: 8}}\n",
    "rules:\nignore_paths:\nknowledge:\n",  # keys left empty
]
BAD = [
    "rulez: {}\n",
    "rules:\n  NPU999: off\n",
    "rules:\n  NPU301: loud\n",
    "rules:\n  NPU301: {severity: loud}\n",
    "paths:\n  scripts: ['*.sh']\n",
    "ignore_paths: 3\n",
    "profile: nemo\n",
    "review:\n  inline_notice: true\n",
    "review:\n  max_inline_comments: -1\n",
    "review:\n  max_inline_comments: ten\n",
    "knowledge:\n  laucnh: {}\n",
    "knowledge:\n  launch:\n    cudagraph_mode_keys: actor_rollout_ref.rollout.mode\n",
    "knowledge:\n  ascend_runners:\n    labels: {x-8: {device: a3, npus: '8'}}\n",
    "knowledge:\n  fork_guard: {secret_pattern: '^QUAY_('}\n",
]


@pytest.mark.parametrize("text", GOOD + BAD)
def test_the_schema_and_the_tool_agree(text: str) -> None:
    try:
        parse_config(text, known_rule_ids())
        accepted = True
    except ConfigError:
        accepted = False
    assert accepted == (text in GOOD)
    assert (errors(text) == []) == accepted, errors(text)


def test_every_rule_and_facts_section_is_described() -> None:
    schema: dict[str, Any] = json.loads(schema_text())
    rules = schema["properties"]["rules"]["anyOf"][0]["properties"]
    assert rules["NPU301"]["description"] == (
        "tls-verification-disabled: TLS certificate verification disabled in a Dockerfile (default: warning)"
    )
    sections = schema["properties"]["knowledge"]["anyOf"][0]["properties"]
    assert all(s["description"] for s in sections.values())
    assert sections["torch_torchvision"]["properties"]["table"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    assert sections["cann_torch_npu"]["properties"]["table"] == {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
    }
