"""Packaging for PyPI: `python -m build` makes an sdist, then the wheel from that sdist (so what the sdist
installs is that wheel), which installs in a fresh venv and runs `npu-review rules`; the action's install step
installs it too; the version named for users (pre-commit `rev`, the Action's `@v…`) is the package's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def run(*cmd: str | Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


def test_sdist_and_wheel_install_in_a_fresh_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--outdir", dist, ROOT)
    wheel = dist / f"npu_review-{VERSION}-py3-none-any.whl"
    sdist = dist / f"npu_review-{VERSION}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == [wheel.name, sdist.name]
    names = set(zipfile.ZipFile(wheel).namelist())
    # The data the code reads at run time ships in the wheel.
    for data in (
        "npu_review/bot/app.yaml",
        "npu_review/checks/facts/ascend.yml",
        "npu_review/checks/facts/profiles/verl.yml",
    ):
        assert data in names, data
    # One import namespace: every module of the wheel is under npu_review/ (beside its .dist-info).
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"npu_review"}

    expected = run(sys.executable, "-m", "npu_review", "rules")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    pip = [venv / "bin/python", "-m", "pip", "--disable-pip-version-check", "-q"]
    run(*pip, "install", wheel)
    assert run(venv / "bin/npu-review", "rules") == expected
    # The GitHub Action's install step, as a runner runs it with this venv's Python on PATH.
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "INPUT_VERSION": str(wheel)}
    env.pop("VIRTUAL_ENV", None)
    assert run("bash", "--noprofile", "--norc", "-eo", "pipefail", ROOT / "action/install.sh", env=env) == (
        f"npu-review installed from {wheel}\n"
    )
    installed = run(venv / "bin/python", "-c", "import importlib.metadata as m; print(m.version('npu-review'))")
    assert installed.strip() == VERSION


def test_the_version_users_pin_is_the_packages() -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"^\s+rev: (v[\d.]+)$", readme, re.M) == [f"v{VERSION}"]  # pre-commit
    assert re.findall(r"uses: npu-review/npu-review@(v[\d.]+)", readme) == [f"v{VERSION}"]  # the Action
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert re.findall(r"rev: (v[\d.]+)", hooks) == [f"v{VERSION}"]
