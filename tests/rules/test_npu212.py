"""NPU212 missing-fork-guard: its fixture cases (tests/fixtures/NPU212/), and what they cannot say: the owner a
fork guard names comes from the repository under review (its guards, the App's payload or the git remote, its
project URL), never from a built-in list; only jobs forks run by themselves, in projects that guard jobs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from npu_review.checks import engine
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity
from npu_review.checks.rules.npu212_missing_fork_guard import guard_owners
from npu_review.cli import main
from tests.rules.support import (
    case_findings_change,
    change,
    fixture_tests,
)
from tests.test_cli import git, write

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU212")


def test_guard_owners() -> None:
    assert guard_owners("github.repository_owner == 'verl-project'") == ["verl-project"]
    assert guard_owners("${{ 'volcengine' == github.repository_owner && x }}") == ["volcengine"]
    assert guard_owners('github.repository == "verl-project/verl"') == ["verl-project"]
    assert guard_owners("github.repository_owner != 'verl-project'") == []


def test_npu212_suggests_the_owner_of_the_repository_at_that_revision() -> None:
    (f,) = case_findings_change("NPU212/trap_owner_from_project_url")
    assert (f.rule, f.line, f.severity) == ("NPU212", 14, Severity.NOTICE)  # verl then guarded no job
    assert f.message.endswith("to spare forks, add `if: github.repository_owner == 'volcengine'`.")
    assert f.suggestion is not None and "github.repository_owner == 'volcengine'" in f.suggestion


# -- the owner from the repository, where forks run jobs ---------------------------------------------------------

WF = ".github/workflows/e2e.yml"
PUSH_JOB = """\
    name: e2e
    on:
      push:
        branches: [main]
    jobs:
      e2e_npu:
        runs-on: linux-aarch64-a2b3-8
        steps:
          - run: pytest tests/npu
    """
# The project guards against forks without naming an owner: the suggestion takes the repository's own.
NOT_FORK = """\
    name: unit
    on: [push]
    jobs:
      unit_npu:
        if: ${{ !github.event.repository.fork }}
        runs-on: linux-aarch64-a2b3-8
        steps:
          - run: pytest tests/unit
    """
WAITS = "in every fork with Actions enabled, on `push`, it waits for a runner that never comes, until it times out."


def _files(files: dict[str, str]) -> dict[str, str | None]:
    return {k: textwrap.dedent(v) for k, v in files.items()}


def audit(files: dict[str, str], repository: str = "") -> list[Finding]:
    cs = ChangeSet(head=MemoryTree(_files(files)), audit=True, repository=repository)
    return [f for f in engine.run(cs).findings if f.rule == "NPU212"]


def add(base: dict[str, str], new: dict[str, str], repository: str = "") -> list[Finding]:
    """A change that adds the files of `new` (every line added) to `base`."""
    b, n = _files(base), _files(new)
    changes = {
        p: FileChange(p, ChangeStatus.ADDED, added_lines=frozenset(range(1, len((t or "").splitlines()) + 1)))
        for p, t in n.items()
    }
    cs = ChangeSet(head=MemoryTree({**b, **n}), base=MemoryTree(b), changes=changes, repository=repository)
    return [f for f in engine.run(cs).findings if f.rule == "NPU212"]


def rows(findings: list[Finding]) -> list[tuple[str, int, Severity, str]]:
    return [(f.path, f.line, f.severity, f.message) for f in findings]


def test_the_owner_comes_from_the_repository_when_its_guards_name_none() -> None:
    files = {WF: PUSH_JOB, ".github/workflows/unit.yml": NOT_FORK}
    assert rows(audit(files, repository="acme/serve")) == [
        (
            WF,
            7,
            Severity.ERROR,
            "Job `e2e_npu` runs on the self-hosted Ascend runner `linux-aarch64-a2b3-8` but has no fork guard: "
            f"{WAITS} Add `if: github.repository_owner == 'acme'`.",
        )
    ]
    # No owner known anywhere (no payload, no remote, no project URL): nothing to suggest, nothing reported.
    assert audit(files) == []


def test_the_projects_guards_win_over_the_remote_of_a_fork_under_review() -> None:
    """Reviewing a clone of a fork (its remote is the fork): the guard still names the project's owner."""
    guarded = NOT_FORK.replace("${{ !github.event.repository.fork }}", "github.repository_owner == 'upstream'")
    files = {WF: PUSH_JOB, ".github/workflows/unit.yml": guarded}
    (f,) = audit(files, repository="me/serve")  # and the `upstream` guard is not "another owner's"
    assert f.message.endswith("Add `if: github.repository_owner == 'upstream'`.")
    assert f.suggestion == "    if: github.repository_owner == 'upstream'\n    runs-on: linux-aarch64-a2b3-8"


def test_a_project_that_guards_nothing_gets_a_notice_on_an_added_job_only() -> None:
    pyproject = '[project.urls]\nRepository = "https://github.com/acme/serve"\n'
    # --all: its existing jobs are its choice.
    assert audit({WF: PUSH_JOB, "pyproject.toml": pyproject}) == []
    # A change adding the job: a notice, with the owner of the project's URL.
    assert rows(add({"pyproject.toml": pyproject}, {WF: PUSH_JOB})) == [
        (
            WF,
            7,
            Severity.NOTICE,
            "Job `e2e_npu` runs on the self-hosted Ascend runner `linux-aarch64-a2b3-8`: "
            f"{WAITS} This project guards no job against forks yet (which may be its choice); to spare forks, "
            "add `if: github.repository_owner == 'acme'`.",
        )
    ]


def test_a_guard_naming_another_owner_than_the_repositorys_is_reported() -> None:
    typo = PUSH_JOB.replace("    runs-on:", "    if: github.repository_owner == 'acme-typo'\n        runs-on:")
    unit = NOT_FORK.replace("${{ !github.event.repository.fork }}", "github.repository_owner == 'acme'")
    files = {WF: typo, ".github/workflows/unit.yml": unit}
    # One guard each: the repository's owner (payload or remote) says which is the typo.
    assert rows(audit(files)) == []
    assert rows(audit(files, repository="acme/serve")) == [
        (
            WF,
            7,
            Severity.ERROR,
            "The fork guard of job `e2e_npu` names owner `acme-typo`, but this repository's guards name `acme`: "
            "the job never runs here.",
        )
    ]


def test_a_transfer_renaming_the_owner_in_several_guards_is_not_a_wrong_owner() -> None:
    old = PUSH_JOB.replace("    runs-on:", "    if: github.repository_owner == 'volcengine'\n        runs-on:")
    two = {WF: old, ".github/workflows/e2e2.yml": old.replace("name: e2e", "name: e2e2")}
    renamed = {p: t.replace("volcengine", "verl-project") for p, t in two.items()}
    b, h = _files(two), _files(renamed)
    changes = {p: FileChange(p, ChangeStatus.MODIFIED, added_lines=frozenset({6})) for p in h}
    cs = ChangeSet(head=MemoryTree(h), base=MemoryTree(b), changes=changes)
    assert [f for f in engine.run(cs).findings if f.rule == "NPU212"] == []


# -- the owner from the git remote (CLI) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["https://github.com/acme/serve.git", "git@github.com:acme/serve.git", "ssh://git@github.com/acme/serve"],
)
def test_the_cli_reads_the_owner_from_the_git_remote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, WF, textwrap.dedent(PUSH_JOB))
    write(repo, ".github/workflows/unit.yml", textwrap.dedent(NOT_FORK))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ci")
    git(repo, "remote", "add", "upstream-mirror", "https://gitlab.com/other/serve.git")
    git(repo, "remote", "add", "origin", url)
    assert main(["check", "--repo", str(repo), "--all", "--format", "json", "--fail-on", "never"]) == 0
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "NPU212"]
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [(WF, 7, "error")]
    assert found[0]["message"].endswith("Add `if: github.repository_owner == 'acme'`.")


LOGIN_GUARDED = """\
    name: image
    on: [push]
    jobs:
      image:
        runs-on: ubuntu-latest
        steps:
          - uses: docker/login-action@v3
            if: github.repository_owner == 'acme'
            with:
              password: ${{ secrets.QUAY_PASSWORD }}
    """
RETAG = """\
    name: retag
    on: [push]
    jobs:
      retag:
        runs-on: ubuntu-latest
        steps:
          - uses: docker/login-action@v3
            with:
              password: ${{ secrets.QUAY_PASSWORD }}
    """


def test_guarded_login_steps_guard_secrets_not_runner_jobs() -> None:
    """A project that guards only the steps using its registry secrets keeps those out of forks; it has not
    chosen to keep jobs from queueing there (vllm-ascend before it guarded a job)."""
    files = {WF: PUSH_JOB, ".github/workflows/image.yml": LOGIN_GUARDED, ".github/workflows/retag.yml": RETAG}
    assert rows(audit(files)) == [
        (
            ".github/workflows/retag.yml",
            5,
            Severity.ERROR,
            "Job `retag` uses `secrets.QUAY_PASSWORD` but has no fork guard: in every fork with Actions enabled, on "
            "`push`, it runs without those secrets and fails. Add `if: github.repository_owner == 'acme'`.",
        )
    ]


def test_a_change_adding_the_first_guards_makes_a_guarding_project() -> None:
    """The change brings the project's CI with one job guarded and one not: the head says it guards."""
    unit = NOT_FORK.replace("${{ !github.event.repository.fork }}", "github.repository_owner == 'acme'")
    assert rows(add({"README.md": "# serve\n"}, {WF: PUSH_JOB, ".github/workflows/unit.yml": unit})) == [
        (
            WF,
            7,
            Severity.ERROR,
            "Job `e2e_npu` runs on the self-hosted Ascend runner `linux-aarch64-a2b3-8` but has no fork guard: "
            f"{WAITS} Add `if: github.repository_owner == 'acme'`.",
        )
    ]


def test_a_guard_suggested_during_a_transfer_names_both_owners() -> None:
    """flagos-ai/FlagTree 36a29659 (rs-r20, judged false): the change adds `|| github.repository ==
    'flagos-ai/flagtree'` to every guard (the repository moves to flagos-ai) and a new Ascend job without one. A
    guard naming FlagTree alone would keep the job from running once the move is done: the suggestion names both."""

    def guarded(name: str, owners: tuple[str, ...]) -> str:
        cond = " || ".join(f"github.repository == '{o}/flagtree'" for o in owners)
        return (
            f"name: {name}\non: [push]\njobs:\n  {name}:\n    runs-on: {name}-runner\n"
            f"    if: ${{{{ {cond} }}}}\n    steps:\n      - run: echo build\n"
        )

    base = {f".github/workflows/{n}.yml": guarded(n, ("FlagTree",)) for n in ("nv", "xpu", "metax")}
    head = {f".github/workflows/{n}.yml": guarded(n, ("FlagTree", "flagos-ai")) for n in ("nv", "xpu", "metax")}
    head[".github/workflows/ascend-build-and-test.yml"] = (
        "name: ascend\non: [push]\njobs:\n  ascend-build-and-test:\n    runs-on: ascend\n"
        "    steps:\n      - run: source /usr/local/Ascend/ascend-toolkit/set_env.sh && python3 setup.py build\n"
    )
    (f,) = [f for f in change(base, head).findings if f.rule == "NPU212"]
    assert (f.path, f.line) == (".github/workflows/ascend-build-and-test.yml", 5)
    assert f.message.endswith(
        "Add `if: github.repository_owner == 'FlagTree' || github.repository_owner == 'flagos-ai'`."
    )
    assert f.suggestion == (
        "    if: github.repository_owner == 'FlagTree' || github.repository_owner == 'flagos-ai'\n    runs-on: ascend"
    )
    # At the head, whose guards name both owners together (one older one FlagTree alone; sweep-r17), the audit
    # suggests both as well.
    head[".github/workflows/cambricon.yml"] = guarded("cambricon", ("FlagTree",))
    audit = engine.run(ChangeSet(head=MemoryTree(head), audit=True))
    (f,) = [f for f in audit.findings if f.rule == "NPU212"]
    assert f.message.endswith(
        "Add `if: github.repository_owner == 'FlagTree' || github.repository_owner == 'flagos-ai'`."
    )
