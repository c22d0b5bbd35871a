"""Start-up: what the CLI imports before a command needs it, the version without importlib.metadata, and the facts
kept in a cache folder between runs."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from npu_review import cli, version
from npu_review.checks import config, diskcache, facts, output
from npu_review.term import COLOR_CHOICES


def test_the_cli_names_what_the_engine_defines() -> None:
    assert cli.CONFIG_PATH == config.CONFIG_PATH
    assert cli.FORMATS == output.FORMATS
    assert cli.COLOR_CHOICES == COLOR_CHOICES


def test_version_is_the_installed_metadata() -> None:
    from importlib import metadata

    assert version() == metadata.version("npu-review")


def _imported(code: str, cache: Path | None = None) -> set[str]:
    env = {**os.environ, "NPU_REVIEW_CACHE_DIR": str(cache or "")}
    out = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    return set(out.split()[-1000:]) if out else set()


def test_version_and_the_parser_import_neither_the_engine_nor_the_facts() -> None:
    loaded = _imported("from npu_review.cli import build_parser, main\nbuild_parser()\nmain(['--version'])")
    heavy = {
        "npu_review.checks.engine",
        "npu_review.checks.facts.schema",
        "npu_review.checks.rules",
        "yaml",
        "multiprocessing",
        "importlib.metadata",
        "socket",
        "aiohttp",
    }
    assert not loaded & heavy, sorted(loaded & heavy)


def test_a_facts_cache_is_used_and_a_corrupt_one_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = facts._default.__wrapped__("verl")  # type: ignore[attr-defined]
    monkeypatch.setattr(diskcache, "_folder", str(tmp_path / "cache"))
    first = facts._default.__wrapped__("verl")  # type: ignore[attr-defined]
    (written,) = [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("facts-verl-")]
    assert first == built
    assert pickle.loads(written.read_bytes()) == built
    written.write_bytes(b"not a pickle")
    assert facts._default.__wrapped__("verl") == built  # type: ignore[attr-defined]
    assert pickle.loads(written.read_bytes()) == built  # written anew
    written.write_bytes(pickle.dumps(facts._default.__wrapped__("generic")))  # type: ignore[attr-defined]
    assert facts._default.__wrapped__("verl") == built  # type: ignore[attr-defined]  # another profile's: rebuilt


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_cache_folder_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    monkeypatch.setattr(diskcache, "_folder", str(folder))
    assert facts._default.__wrapped__("verl").profile == "verl"  # type: ignore[attr-defined]
    assert list(folder.iterdir()) == []


def test_a_cache_folder_that_cannot_be_made_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(diskcache, "_folder", str(blocker / "cache"))
    assert facts._default.__wrapped__("verl").profile == "verl"  # type: ignore[attr-defined]


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPU_REVIEW_CACHE_DIR", "/somewhere")
    assert cli.cache_dir() == "/somewhere"
    monkeypatch.setenv("NPU_REVIEW_CACHE_DIR", "")
    assert cli.cache_dir() is None
    monkeypatch.delenv("NPU_REVIEW_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cli.cache_dir() == "/xdg/npu-review"


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "-C", str(repo), *ident, *args], check=True, env=env, capture_output=True)


@pytest.mark.parametrize("where", ["option", "after", "environment"])
def test_the_program_writes_a_profile_and_reaps_git(tmp_path: Path, where: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "run_npu.sh").write_text("#!/bin/bash\nexport TASK_QUEUE_ENABLE=1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    out = tmp_path / "run.prof"
    check = ["check", "--repo", str(repo), "--all", "--format", "json"]
    args = {
        "option": ["--profile", str(out), *check],
        "after": [*check[:1], "--profile", str(out), *check[1:]],
        "environment": check,
    }[where]
    env = {**os.environ, "NPU_REVIEW_CACHE_DIR": ""}
    if where == "environment":
        env["NPU_REVIEW_PROFILE"] = str(out)
    # The program's way out (os._exit) in a child, which reports the children it leaves unreaped.
    probe = (
        "import os, sys\n"
        "from npu_review import cli\n"
        "real = os._exit\n"
        "def parent(p):\n"
        "    try:\n"
        "        return open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1]\n"
        "    except OSError:\n"
        "        return None  # gone meanwhile (another process of the machine)\n"
        "def leave(code):\n"
        "    left = [p for p in os.listdir('/proc') if p.isdigit() and parent(p) == str(os.getpid())]\n"
        "    sys.stderr.write(f'children:{len(left)}\\n'); sys.stderr.flush(); real(code)\n"
        "os._exit = leave\n"
        "sys.argv = ['npu-review', *sys.argv[1:]]\n"
        "cli.program()\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "children:0" in proc.stderr
    import pstats

    stats = pstats.Stats(str(out))
    assert any(fn[2] == "cmd_check" for fn in stats.stats)  # type: ignore[attr-defined]


def test_facts_keeps_its_own_profile_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli.main(["facts", "--profile", "generic", "--format", "json"]) in (0, 1)
    finally:
        os.chdir(cwd)
    assert '"profile": "generic"' in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_a_review_imports_the_rules_of_the_kinds_it_meets(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "run_npu.sh").write_text("#!/bin/bash\nexport TASK_QUEUE_ENABLE=1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    review = (
        "import contextlib, io\nfrom npu_review.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['check', '--repo', {str(repo)!r}, '--all', '--jobs', '1'])"
    )
    assert "npu_review.checks.rules.npu301_tls_verification_disabled" in _imported(review)  # no cache: every rule
    _imported(review, tmp_path / "cache")  # the registry is kept
    loaded = _imported(review, tmp_path / "cache")
    assert "npu_review.checks.rules.npu101_graph_mode_with_task_queue_2" in loaded  # a shell script's
    assert "npu_review.checks.rules.npu301_tls_verification_disabled" not in loaded  # a Dockerfile's only
    assert "multiprocessing" not in loaded


def test_every_project_rule_runs_whatever_kind_the_change_touches() -> None:
    # NPU501 (a project rule about docs) reports an invisible character in any changed path: loading rules on
    # first use must not leave a project rule out because the change touches no file of its kinds.
    from npu_review.checks.engine import run
    from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree

    path = "scripts/run_npu\u200e.sh"
    head = MemoryTree({path: "#!/bin/bash\necho hi\n"})
    change = FileChange(path, ChangeStatus.ADDED, added_lines=frozenset({1, 2}))
    report = run(ChangeSet(head=head, base=MemoryTree({}), changes={path: change}))
    assert [f.rule for f in report.findings] == ["NPU501"]
