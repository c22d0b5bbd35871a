"""What linter users expect of `npu-review`: --version, colour and NO_COLOR, --format concise, progress on a
terminal, `check --fix` (and `--fix --diff`), PATH arguments, and one-line errors for unreadable input."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from npu_review import version
from npu_review.cli import main
from tests.test_cli import DOCKERFILE, git, run_cli, write

ROOT = Path(__file__).resolve().parent.parent
FROM = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12"
# Three findings with exact suggestions: NPU302 (ENV -> ARG), NPU301 (drop the flag), NPU304 (delete the blank).
FIXABLE = (
    f"{FROM}\n"
    "ENV MAX_JOBS=4\n"
    "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"
    "RUN pip install x && \\\n"
    "\n"
    "    pip install y\n"
)
FIXED = (
    f"{FROM}\n"
    "ARG MAX_JOBS=4\n"
    "RUN wget https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"
    "RUN pip install x && \\\n"
    "    pip install y\n"
)
CONCISE = [
    f"{DOCKERFILE}:2:1: NPU302 warning `ENV MAX_JOBS=4` stays in the image: every later build in the container and "
    "in images built FROM it inherits this parallelism. Use `ARG` for the build or set it on the command that needs "
    "it (`MAX_JOBS=4 pip install …`).",
    f"{DOCKERFILE}:3:1: NPU301 warning `wget --no-check-certificate` downloads without checking the server's "
    "certificate: anyone on the path can swap the file.",
    f"{DOCKERFILE}:5:1: NPU304 notice Blank line inside the RUN that starts on line 4: Docker skips it with a warning "
    '("Empty continuation lines will become errors in a future release"). Delete it or make it a `#` comment.',
]


@pytest.fixture
def fixable(tmp_path: Path) -> Path:
    r = tmp_path / "fixable"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, DOCKERFILE, FIXABLE)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "a Dockerfile with three fixable findings")
    return r


def program(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "npu_review", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        cwd=cwd,
        timeout=300,
    )


def on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Runs `python -m npu_review ARGS` with stdout and stderr on a pseudo-terminal each."""
    out_master, out_slave = pty.openpty()
    err_master, err_slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "npu_review", *args],
        stdout=out_slave,
        stderr=err_slave,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    os.close(out_slave)
    os.close(err_slave)
    got = {out_master: b"", err_master: b""}
    for fd in got:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other end closed (EIO)
                break
            if not chunk:
                break
            got[fd] += chunk
        os.close(fd)
    code = proc.wait(timeout=300)
    return code, got[out_master].decode(), got[err_master].decode()


def test_version() -> None:
    proc = program("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"npu-review {version()}\n", "")
    assert version() != "0+unknown"  # installed: the package's own version


def test_concise_format_is_one_line_per_finding(fixable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--format", "concise")
    assert out.splitlines() == CONCISE
    assert err == "3 findings (0 errors, 2 warnings, 1 notice) in 1 file checked\n"
    assert code == 0


def test_colour_on_a_terminal_and_never_with_no_color(
    fixable: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["check", "--repo", str(fixable), "--all", "--format", "concise"]
    env = {"NO_COLOR": "", "TERM": "xterm"}
    code, out, _ = on_a_terminal(args, env)
    first = out.splitlines()[0]
    assert code == 0
    assert first == (
        f"\x1b[1m{DOCKERFILE}:2:1:\x1b[0m \x1b[1mNPU302\x1b[0m \x1b[1;33mwarning\x1b[0m `ENV MAX_JOBS=4` stays in the "
        "image: every later build in the container and in images built FROM it inherits this parallelism. Use `ARG` "
        "for the build or set it on the command that needs it (`MAX_JOBS=4 pip install …`)."
    )
    # NO_COLOR wins, even over --color always; --color never on a terminal.
    for extra, env_over in (([], {"NO_COLOR": "1"}), (["--color", "never"], {})):
        _, out, _ = on_a_terminal([*args, *extra], {**env, **env_over})
        assert out.replace("\r\n", "\n").splitlines() == CONCISE
    # Off a terminal (pytest's capture): none unless --color always, and then not with NO_COLOR.
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert run_cli(capsys, *args)[1].splitlines() == CONCISE
    assert "\x1b[1;33mwarning" in run_cli(capsys, *args, "--color", "always")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert run_cli(capsys, *args, "--color", "always")[1].splitlines() == CONCISE
    # The text format too: the severity coloured, the rule id bold.
    monkeypatch.delenv("NO_COLOR")
    text = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--color", "always")[1]
    assert "  2: \x1b[1;33mwarning\x1b[0m \x1b[1mNPU302\x1b[0m global-build" in text


def test_progress_on_a_terminal_for_a_long_audit(tmp_path: Path) -> None:
    r = tmp_path / "big"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    for i in range(250):
        write(r, f"docker/ascend/Dockerfile.ascend_{i:03d}_a2", FIXABLE)
        write(r, f"docs/ascend_{i:03d}.md", f"# Page {i}\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "many files")
    code, out, err = on_a_terminal(["check", "--repo", str(r), "--all", "--jobs", "2", "--format", "json"], {})
    assert code == 0 and out.startswith("{")
    # Rewritten in place, the last state showing every file, then erased.
    # The 250 Dockerfiles in one share, the 250 docs in 2 x 4 pieces.
    assert "\rnpu-review: 500 files checked (9/9 parts)" in err
    assert err.endswith("\r" + " " * len("npu-review: 500 files checked (9/9 parts)") + "\r")
    # Not on a pipe.
    piped = program("check", "--repo", str(r), "--all", "--jobs", "2", "--format", "json")
    assert piped.stderr == ""


def test_fix_writes_every_suggestion_and_is_idempotent(fixable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--fix", "--format", "concise")
    assert (fixable / DOCKERFILE).read_text() == FIXED
    assert (code, out) == (0, "")  # nothing left to fix by hand
    assert err == (
        "npu-review: fixed 3 findings in 1 file\n0 findings (0 errors, 0 warnings, 0 notices) in 1 file checked\n"
    )
    # Again: the revision still has the findings, and the work tree has their fixes: nothing changes.
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--fix", "--format", "concise")
    assert (fixable / DOCKERFILE).read_text() == FIXED
    assert (code, out) == (0, "")
    assert err.splitlines()[0] == "npu-review: nothing to fix (3 findings fixed in the work tree already)"
    # And the work tree reviewed as it is now has nothing to fix.
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--fix", str(fixable / DOCKERFILE))
    assert err == "npu-review: nothing to fix\n"
    assert out == "0 findings (0 errors, 0 warnings, 0 notices) in 1 file checked\n"


def test_fix_diff_shows_the_fixes_and_writes_nothing(fixable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--fix", "--diff")
    assert (fixable / DOCKERFILE).read_text() == FIXABLE
    assert out == (
        f"--- a/{DOCKERFILE}\n+++ b/{DOCKERFILE}\n@@ -1,6 +1,5 @@\n {FROM}\n-ENV MAX_JOBS=4\n"
        "-RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n+ARG MAX_JOBS=4\n"
        "+RUN wget https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n RUN pip install x && \\\n-\n     pip install y\n"
    )
    assert err == "npu-review: would fix 3 findings in 1 file\n"
    assert code == 0
    # The diff is what --fix writes: git applies it.
    git(fixable, "apply", stdin=out)
    assert (fixable / DOCKERFILE).read_text() == FIXED


def test_fix_leaves_alone_a_file_changed_where_a_suggestion_goes(
    fixable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = FIXABLE.replace("ENV MAX_JOBS=4", "ENV MAX_JOBS=8")
    write(fixable, DOCKERFILE, edited)
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--fix", "--format", "concise")
    assert (fixable / DOCKERFILE).read_text() == edited
    assert err.splitlines()[:2] == [
        "npu-review: nothing fixed",
        f"npu-review: not fixed: {DOCKERFILE}: line 2 changed since the reviewed revision",
    ]
    assert out.splitlines() == CONCISE  # still to fix
    assert code == 0


def test_fix_keeps_crlf_line_ends_and_a_missing_last_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = tmp_path / "crlf"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, DOCKERFILE, FIXABLE.rstrip("\n").replace("\n", "\r\n").encode())
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "CRLF")
    code, _, err = run_cli(capsys, "check", "--repo", str(r), "--all", "--fix")
    assert (r / DOCKERFILE).read_bytes() == FIXED.rstrip("\n").replace("\n", "\r\n").encode()
    assert err.startswith("npu-review: fixed 3 findings in 1 file\n")
    assert code == 0


def test_fix_needs_a_work_tree(fixable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fixable), str(bare)], check=True)
    code, out, err = run_cli(capsys, "check", "--repo", str(bare), "--all", "--fix")
    assert (code, out) == (2, "")
    assert err == f"npu-review: error: {bare}: --fix writes into the work tree, and this repository has none\n"


def test_paths_audit_those_files_of_the_work_tree(fixable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(fixable, "docker/ascend/Dockerfile.ascend_9.1.0_a3", FIXABLE)  # untracked, reviewed as it is
    code, out, _ = run_cli(
        capsys, "check", "--repo", str(fixable), "--format", "concise", str(fixable / DOCKERFILE.replace("a2", "a3"))
    )
    # The A2 base image in an A3 file (NPU305) and the three of FIXABLE; nothing of the other Dockerfile.
    assert [line.split(":", 3)[:3] + line.split(" ")[1:3] for line in out.splitlines()] == [
        ["docker/ascend/Dockerfile.ascend_9.1.0_a3", "1", "1", "NPU305", "error"],
        ["docker/ascend/Dockerfile.ascend_9.1.0_a3", "2", "1", "NPU302", "warning"],
        ["docker/ascend/Dockerfile.ascend_9.1.0_a3", "3", "1", "NPU301", "warning"],
        ["docker/ascend/Dockerfile.ascend_9.1.0_a3", "5", "1", "NPU304", "notice"],
    ]
    assert code == 1
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "/etc/hostname")
    assert (code, out) == (2, "")
    assert err.startswith("npu-review: error: /etc/hostname: not inside the repository ")


def test_paths_are_the_only_files_the_rules_check(fixable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`check PATH` checks that file alone (the rest of the tree is context): its findings are those of the whole
    audit on it, and one file is checked, whatever the tree holds."""
    write(fixable, "docker/ascend/Dockerfile.ascend_9.1.0_a3", FIXABLE)
    write(fixable, "docker/ascend/Dockerfile.ascend_9.1.0_a3_extra", FIXABLE)
    _, out, _ = run_cli(capsys, "check", "--repo", str(fixable), "--format", "json", "--fail-on", "never", str(fixable))
    whole = json.loads(out)
    a3 = "docker/ascend/Dockerfile.ascend_9.1.0_a3"
    assert whole["summary"]["files_checked"] >= 3
    _, out, _ = run_cli(capsys, "check", "--repo", str(fixable), "--format", "json", str(fixable / a3))
    one = json.loads(out)
    assert one["findings"] == [f for f in whole["findings"] if f["path"] == a3]
    assert [(f["rule"], f["line"]) for f in one["findings"]] == [
        ("NPU305", 1),
        ("NPU302", 2),
        ("NPU301", 3),
        ("NPU304", 5),
    ]
    assert one["summary"]["files_checked"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01\x02binary\x00", "a binary file (it holds NUL bytes), not a unified diff"),
        (b"just some text\nno diff here\n", "no file diff in it: not a unified diff"),
    ],
)
def test_a_diff_that_is_no_diff_exits_2(
    fixable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    bad = tmp_path / "changes.diff"
    bad.write_bytes(content)
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--diff", str(bad))
    assert (code, out, err) == (2, "", f"npu-review: error: {bad}: {message}\n")
    empty = tmp_path / "empty.diff"
    empty.write_bytes(b"")
    code, out, _ = run_cli(capsys, "check", "--repo", str(fixable), "--diff", str(empty))
    assert (code, out) == (0, "0 findings (0 errors, 0 warnings, 0 notices) in 0 files checked\n")


def test_an_unreadable_diff_exits_2(fixable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--diff", str(tmp_path))
    assert (code, out, err) == (2, "", f"npu-review: error: cannot read diff {tmp_path}: Is a directory\n")
    code, _, err = run_cli(capsys, "check", "--repo", str(fixable), "--diff")
    assert (code, err) == (2, "npu-review: error: --diff needs a FILE or - (without a FILE it goes with --fix)\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"rules:\x00\n", "a binary file (it holds NUL bytes), not YAML"),
        (b"rules:\n  NPU301: \xff\xfe off\n", "not UTF-8 text (byte 18)"),
    ],
)
def test_a_binary_or_undecodable_config_exits_2(
    fixable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    cfg = tmp_path / "cfg.yml"
    cfg.write_bytes(content)
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all", "--config", str(cfg))
    assert (code, out, err) == (2, "", f"npu-review: error: {cfg}: {message}\n")
    # Read from the base revision, where it used to be taken for no config at all.
    write(fixable, ".github/npu-review.yml", content)
    git(fixable, "add", "-A")
    git(fixable, "commit", "-q", "-m", "a broken config")
    code, out, err = run_cli(capsys, "check", "--repo", str(fixable), "--all")
    assert (code, out, err) == (2, "", f"npu-review: error: .github/npu-review.yml (base revision): {message}\n")


def test_main_returns_for_version_as_for_any_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"npu-review {version()}\n"
