"""Packaging for PyPI: `python -m build` makes an sdist, then the wheel from that sdist (so what the sdist
installs is that wheel); `twine check` passes both. The wheel installs in a fresh venv with the core dependencies
only: the CLI works (`--version`, `rules`, `check`) and never imports the App's server modules, and `serve` says
to install the `app` extra; with the extra, `serve` gets to its settings. The action's install step installs it too; the
version named for users (pre-commit `rev`, the Action's `@v…`) is the package's.

Nothing is downloaded: the build runs without isolation (setuptools and wheel are dev dependencies), and each
fresh venv sees the dependencies it is given, from this environment, through a .pth file (pip runs with
PIP_NO_INDEX, so a missing one fails instead of being fetched)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
APP_MODULES = ("aiohttp", "gidgethub", "jwt", "redis", "tenacity")


def run(*cmd: str | Path, env: dict[str, str] | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=600)
    if ok:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


def closure(extras: tuple[str, ...]) -> set[str]:
    """The installed distributions npu-review needs with these extras, its own dependencies' included."""
    seen: set[str] = set()
    todo = [(name, extras) for name in ["npu-review"]]
    while todo:
        name, wanted = todo.pop()
        dist = metadata.distribution(name)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *wanted)):
                continue
            key = req.name.lower().replace("_", "-")
            if key not in seen and key != "npu-review":
                seen.add(key)
                todo.append((req.name, tuple(req.extras)))
            elif key == "npu-review":
                todo.append((name, tuple(req.extras)))
    return seen


def site_with(names: set[str], where: Path) -> Path:
    """A directory holding copies of exactly these distributions' files (packages, modules, .dist-info). Copies, not
    links: pip in the fresh venv may move a distribution it sees aside while it installs (and put it back), which
    through a link would empty this environment's copy for every process running beside the test."""
    where.mkdir()
    for name in names:
        dist = metadata.distribution(name)
        base = Path(str(dist.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            source, target = base / top, where / top
            if target.exists() or not source.exists():
                continue
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, target)
    return where


def fresh_venv(path: Path, deps: Path) -> tuple[Path, dict[str, str]]:
    run(sys.executable, "-m", "venv", path)
    (purelib,) = path.glob("lib/python*/site-packages")
    (purelib / "deps.pth").write_text(f"{deps}\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "GITHUB_", "NPU_REVIEW_", "VIRTUAL_ENV"))},
        "PATH": f"{path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CONFIG_FILE": os.devnull,
    }
    return path / "bin", env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    return out


def test_sdist_and_wheel_pass_twine_check_and_hold_one_namespace(dist: Path) -> None:
    wheel = dist / f"npu_review-{VERSION}-py3-none-any.whl"
    sdist = dist / f"npu_review-{VERSION}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == [wheel.name, sdist.name]
    checked = run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    names = set(zipfile.ZipFile(wheel).namelist())
    # The data the code reads at run time ships in the wheel, and the license.
    for data in (
        "npu_review/bot/app.yaml",
        "npu_review/checks/facts/ascend.yml",
        "npu_review/checks/facts/profiles/verl.yml",
        "npu_review/npu-review.schema.json",
        f"npu_review-{VERSION}.dist-info/licenses/LICENSE",
    ):
        assert data in names, data
    # One import namespace: every module of the wheel is under npu_review/ (beside its .dist-info).
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"npu_review"}
    requires = [
        line.split(": ", 1)[1]
        for line in zipfile.ZipFile(wheel).read(f"npu_review-{VERSION}.dist-info/METADATA").decode().splitlines()
        if line.startswith("Requires-Dist: ")
    ]
    core = sorted(Requirement(r).name for r in requires if Requirement(r).marker is None)
    assert core == ["PyYAML", "markdown-it-py", "packaging", "pathspec", "rapidfuzz", "unidiff"]


def test_the_cli_installs_without_the_app_and_never_imports_it_then_the_extra(dist: Path, tmp_path: Path) -> None:
    wheel = dist / f"npu_review-{VERSION}-py3-none-any.whl"
    core = closure(())
    assert not {"aiohttp", "gidgethub", "pyjwt", "redis", "tenacity"} & core
    bin_dir, env = fresh_venv(tmp_path / "venv", site_with(core, tmp_path / "core"))
    run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, env=env)
    assert run(bin_dir / "npu-review", "--version", env=env).stdout == f"npu-review {VERSION}\n"
    expected = run(sys.executable, "-m", "npu_review", "rules").stdout
    assert run(bin_dir / "npu-review", "rules", env=env).stdout == expected
    # A review, and what it imported: nothing of the App's.
    repo = tmp_path / "repo"
    run("git", "init", "-q", "-b", "main", repo)
    (repo / "run_npu.sh").write_text("export TASK_QUEUE_ENABLE=2\n")
    run("git", "-C", repo, "add", "-A")
    run("git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x")
    probe = (
        "import sys; from npu_review.cli import main; code = main(['check', '--all', '--repo', sys.argv[1], "
        "'--format', 'concise']); print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[2:])), code)"
    )
    proc = run(bin_dir / "python", "-c", probe, repo, *APP_MODULES, env=env)
    assert proc.stdout.splitlines()[-1] == "[] 0"
    # Also where the App's modules are installed (this environment): the CLI does not load them.
    proc = run(sys.executable, "-c", probe, repo, *APP_MODULES, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.splitlines()[-1] == "[] 0"
    serve = run(bin_dir / "npu-review", "serve", env=env, ok=False)
    assert (serve.returncode, serve.stdout) == (2, "")
    assert serve.stderr == (
        "npu-review: error: `npu-review serve` runs the GitHub App, whose dependencies are not installed (aiohttp): "
        "pip install 'npu-review[app]'\n"
    )
    # The GitHub Action's install step, as a runner runs it with this venv's Python on PATH.
    env_action = {**env, "INPUT_VERSION": str(wheel)}
    installed = run("bash", "--noprofile", "--norc", "-eo", "pipefail", ROOT / "action/install.sh", env=env_action)
    assert installed.stdout == f"npu-review installed from {wheel}\n"

    # With the app extra (its dependencies given as the core's were), serve gets past its imports to the
    # settings: started with part of them, it stops and says which.
    (purelib,) = (bin_dir.parent).glob("lib/python*/site-packages")
    (purelib / "app.pth").write_text(f"{site_with(closure(('app',)) - core, tmp_path / 'app')}\n")
    run(bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[app]", env=env)
    serve = run(bin_dir / "npu-review", "serve", "--port", "0", env={**env, "GITHUB_WEBHOOK_SECRET": "s"}, ok=False)
    assert (serve.returncode, serve.stderr) == (
        2,
        "npu-review serve: GITHUB_APP_ID is not set: the numeric App ID from the App's settings page\n",
    )


def test_the_image_installs_the_hashed_lock_and_ships_the_license() -> None:
    docker = (ROOT / "Dockerfile").read_text()
    assert "RUN pip install --require-hashes --no-deps -r requirements/app.lock\n" in docker
    assert "COPY pyproject.toml README.md LICENSE ./\n" in docker
    assert "pip install --no-deps --no-build-isolation ." in docker and "pip check" in docker
    lock = (ROOT / "requirements/app.lock").read_text()
    pinned = dict(re.findall(r"^([a-z0-9-]+)==(\S+) \\$", lock, re.M))
    hashes = re.findall(r"^([a-z0-9-]+)==\S+ \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", lock, re.M)
    assert len(hashes) == len(pinned)  # every pin has its hashes
    # The lock holds every requirement of the core and the app extra, at a version they allow, and the build
    # backend the image builds the package with.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for text in [*project["dependencies"], *project["optional-dependencies"]["app"]]:
        req = Requirement(text)
        name = req.name.lower().replace("_", "-")
        assert name in pinned, f"{name} is not in requirements/app.lock: regenerate it (see its header)"
        assert req.specifier.contains(pinned[name], prereleases=True), (name, pinned[name], str(req.specifier))
    assert {"setuptools", "wheel"} <= set(pinned)


def test_the_version_users_pin_is_the_packages() -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"^\s+rev: (v[\d.]+)$", readme, re.M) == [f"v{VERSION}"]  # pre-commit
    assert re.findall(r"uses: npu-review/npu-review@(v[\d.]+)", readme) == [f"v{VERSION}"]  # the Action
    docs = (ROOT / "docs/cli.md").read_text()
    assert re.findall(r"^\s+rev: (v[\d.]+)$", docs, re.M) == [f"v{VERSION}"]
    assert re.findall(r"uses: npu-review/npu-review@(v[\d.]+)", docs) == [f"v{VERSION}"]
    # The schema editors fetch: the one tagged with this release.
    for text in (readme, (ROOT / "docs/configuration.md").read_text()):
        assert re.findall(r"\$schema=\S+/(v[\d.]+)/npu_review/npu-review\.schema\.json", text) == [f"v{VERSION}"]
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert re.findall(r"rev: (v[\d.]+)", hooks) == [f"v{VERSION}"]
