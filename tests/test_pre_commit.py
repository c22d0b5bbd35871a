"""The pre-commit hook (.pre-commit-hooks.yaml) through the real `pre-commit` tool: a plain commit gets the staged
review, `pre-commit run --all-files` audits the files it passes, committed ones included.

The hook runs as a `repo: local` hook with `language: system` (the same entry and options, the installed
`npu-review` on PATH): a remote or `language: python` hook would have pre-commit download and install it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_cli import git, write

ROOT = Path(__file__).resolve().parent.parent
A3 = "docker/ascend/Dockerfile.ascend_9.1.0_a3"
# The A2 CANN image in an A3 Dockerfile: NPU305, an error (the hook fails on errors, as `check` does).
DEBT = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\nRUN echo ok\n"
NEW_ERROR = "RUN pip install x \\\n    pip install y\n"  # NPU306: the missing && joins two commands


def pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)  # npu-review and pre-commit of this environment
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    config = {"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}
    write(r, ".pre-commit-config.yaml", yaml.safe_dump(config, sort_keys=False))
    write(r, A3, DEBT)
    write(r, "README.md", "# a project\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "a Dockerfile with a mistake")
    return r


def test_all_files_audits_the_committed_files(repo: Path, tmp_path: Path) -> None:
    proc = pre_commit(repo, "run", "--all-files", home=tmp_path / "pc")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{A3}\n  1: error NPU305 from-device-mismatch: " in proc.stdout
    assert "1 finding (1 error, 0 warnings, 0 notices) in " in proc.stdout
    # --files the same way.
    proc = pre_commit(repo, "run", "--files", A3, home=tmp_path / "pc")
    assert proc.returncode == 1 and "1: error NPU305" in proc.stdout


def test_a_plain_commit_gets_the_staged_review(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "pc"
    # A change elsewhere: the old mistake is not this commit's.
    write(repo, "README.md", "# a project\n\nMore.\n")
    git(repo, "add", "README.md")
    proc = pre_commit(repo, "run", home=home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A change that adds a mistake: only that one is reported, on its line.
    write(repo, A3, DEBT + NEW_ERROR)
    git(repo, "add", A3)
    proc = pre_commit(repo, "run", home=home)
    assert proc.returncode == 1
    assert f"{A3}\n  3: error NPU306 missing-and-in-continued-run: " in proc.stdout
    assert "NPU305" not in proc.stdout
    # Installed as the git hook, it stops the commit.
    assert pre_commit(repo, "install", home=home).returncode == 0
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["PRE_COMMIT_HOME"] = str(home)
    commit = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert commit.returncode == 1 and "NPU306" in commit.stdout + commit.stderr
