"""`npu-review init` on a verl-shaped and a vllm-ascend-shaped repository: the config it writes is one `check`
accepts, lists what it counts as Ascend and every rule with its default; the first look is what check --all says."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from npu_review.checks import facts as facts_data
from npu_review.checks.config import parse_config
from npu_review.checks.engine import known_rule_ids
from npu_review.checks.kinds import KindMap
from npu_review.checks.rule import all_rules
from npu_review.cli import main

VERL = {
    "docker/ascend/Dockerfile.ascend_9.1.0_a2": (
        "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\n"
        "ARG MAX_JOBS=8\n"
        "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"
    ),
    "tests/special_npu/run_qwen3_06b_ppo.sh": (
        "#!/usr/bin/env bash\nset -x\npython3 -m verl.trainer.main_ppo trainer.device=npu trainer.n_gpus_per_node=8\n"
    ),
    "examples/grpo_trainer/run_qwen2_7b.sh": "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo trainer.n_gpus=8\n",
    "verl/__init__.py": "",
    "README.md": "# verl\n",
}
VLLM_ASCEND = {
    "Dockerfile": "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\nRUN pip install vllm==0.11.0\n",
    "Dockerfile.a3": "FROM quay.io/ascend/cann:8.3.rc1-a3-ubuntu22.04-py3.11\nRUN pip install vllm==0.11.0\n",
    ".github/workflows/vllm_ascend_test.yaml": (
        "name: test\non: [pull_request]\njobs:\n  unit:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pytest tests/ut\n"
    ),
    "vllm_ascend/__init__.py": "",
    "examples/offline_inference_npu.py": "from vllm import LLM\nllm = LLM(model='Qwen/Qwen3-0.6B')\n",
    "README.md": "# vLLM Ascend\n",
}


def make_repo(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
        ["add", "-A"],
        ["commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, out, err = cli(capsys, "check", "--repo", str(repo), "--format", "json", "--jobs", "1", *args)
    assert code in (0, 1), err  # never 2: the config is accepted
    return code, json.loads(out)


def counted(files: dict[str, str], profile: str) -> dict[str, list[str]]:
    """What the profile's globs count as Ascend among the files, computed apart from init."""
    kinds = KindMap(defaults=facts_data.load(None, profile).file_kinds)
    return {
        k: sorted(p for p in files if kinds.has(p, k)) for k in ("npu_script", "ascend_workflow", "ascend_dockerfile")
    }


VERL_ASCEND = {
    "npu_script": ["tests/special_npu/run_qwen3_06b_ppo.sh"],
    "ascend_workflow": [],
    "ascend_dockerfile": ["docker/ascend/Dockerfile.ascend_9.1.0_a2"],
}


@pytest.mark.parametrize(
    ("files", "ascend"),
    [(VERL, VERL_ASCEND), (VLLM_ASCEND, None)],
    ids=["verl", "vllm-ascend"],
)
def test_init_writes_a_config_check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], ascend: dict[str, list[str]] | None
) -> None:
    repo = make_repo(tmp_path / "project", files)
    code, out, err = cli(capsys, "init", "--repo", str(repo), "--jobs", "1")
    assert (code, err) == (0, "")
    config = repo / ".github/npu-review.yml"
    text = config.read_text()
    assert out.splitlines()[0] == f"npu-review init: wrote {config}"
    assert (
        out.splitlines()[-1]
        == "Commit .github/npu-review.yml: the App and `npu-review check` read it from the base branch."
    )
    # The detected profile (verl's for the verl-shaped tree), what it counts as Ascend, every rule.
    counts = {name: len({p for ps in counted(files, name).values() for p in ps}) for name in facts_data.profiles()}
    best = facts_data.detect(files)  # what check and the App choose without a profile key
    profile = re.search(r"^profile: (\S+)$", text, re.M)
    assert profile is not None and profile.group(1) == best
    if ascend is not None:
        assert best == "verl" and counted(files, "verl") == ascend
    ascend = counted(files, best)
    listed = "; ".join(f"{name}: {n}" for name, n in sorted(counts.items()))
    shipped = ", ".join(facts_data.profiles())
    assert f"# Shipped profiles: {shipped}. Ascend files each counts in this repository: {listed}." in text
    for kind, paths in ascend.items():
        block = re.search(rf"^#   {kind}: (\d+) files?\n((?:#     .*\n)*)", text, re.M)
        assert block is not None, kind
        assert (int(block.group(1)), [line[6:] for line in block.group(2).splitlines()]) == (len(paths), paths)
    rule_lines = re.findall(r"^  # (NPU\d{3}): (\w+) +# ([\w-]+): (.*)$", text, re.M)
    rules = all_rules()
    assert [r[0] for r in rule_lines] == list(rules)
    for rid, default, name, title in rule_lines:
        cls = rules[rid]
        assert (default, name, title) == (cls.severity.label if cls.enabled_by_default else "off", cls.name, cls.title)
    # Uncommented, the rule lines are a valid config that changes nothing.
    uncommented = re.sub(r"^  # (NPU\d{3}: \w+)", r"  \1", text, flags=re.M)
    parsed = parse_config(uncommented, known_rule_ids())
    assert {rid: parsed.enabled(rid, cls.enabled_by_default) for rid, cls in rules.items()} == {
        rid: cls.enabled_by_default for rid, cls in rules.items()
    }

    # check accepts it, given explicitly and read from the base revision; the first look is check --all's report.
    _, audit = check_json(capsys, repo, "--all", "--config", str(config))
    by_rule: dict[str, int] = {}
    for f in audit["findings"]:
        by_rule[f["rule"]] = by_rule.get(f["rule"], 0) + 1
    groups = dict(re.findall(r"^  (NPU\d{3}) [\w-]+ \([\w, ]+\): (\d+)$", out, re.M))
    assert {k: int(v) for k, v in groups.items()} == by_rule
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "npu-review config"], check=True)
    (repo / "README.md").write_text("# changed\n")
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-am", "docs"], check=True)
    code, change = check_json(capsys, repo, "--base", "HEAD~1")
    assert code == 0 and change["findings"] == []


def test_init_first_look_on_the_verl_shaped_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "verl", VERL)
    _, out, _ = cli(capsys, "init", "--repo", str(repo), "--jobs", "1")
    assert "  NPU301 tls-verification-disabled (warning): 1\n" in out
    assert "      docker/ascend/Dockerfile.ascend_9.1.0_a2:3  `wget --no-check-certificate` downloads" in out
    # One of each, said in the singular.
    assert (
        "\n1 finding (0 errors, 1 warning, 0 notices) in 5 files checked. On a pull request only what it adds or "
        "changes is reported.\n" in out
    )


def test_init_keeps_an_existing_config_and_needs_a_work_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "verl", {**VERL, ".github/npu-review.yml": "rules:\n  NPU301: off\n"})
    code, out, err = cli(capsys, "init", "--repo", str(repo))
    assert (code, out) == (2, "")
    assert err == "npu-review: error: .github/npu-review.yml exists already (--force replaces it)\n"
    assert (repo / ".github/npu-review.yml").read_text() == "rules:\n  NPU301: off\n"
    code, _, _ = cli(capsys, "init", "--repo", str(repo), "--force", "--jobs", "1")
    assert code == 0 and "profile: verl" in (repo / ".github/npu-review.yml").read_text()
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    code, _, err = cli(capsys, "init", "--repo", str(bare))
    assert code == 2
    assert (
        err == f"npu-review: error: {bare}: init writes .github/npu-review.yml into the work tree, and this repository "
        "has none\n"
    )
