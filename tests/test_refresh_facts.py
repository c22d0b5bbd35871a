"""bench/facts/refresh.py on small sources written here: git mirrors built in a temporary folder and PyPI answers as
files (no network). Every table it writes comes from these excerpts, with the sources and dates they give."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

COMPATIBILITY = """\
# Version Matching

| TorchNPU installation package version | GitCode Branch | PyTorch Version | CANN version |
|:-------------------------------------:|:--------------:|:---------------:|:------------:|
|                2.9.0.post2            | v2.9.0-26.0.0  |      2.9.0      |  CANN 9.0.0  |
|                 2.9.0                 |  v2.9.0-7.3.0  |      2.9.0      |  CANN 8.5.0  |
|                 2.7.1                 |  v2.7.1-7.2.0  |      2.7.1      | CANN 8.3.RC1 |

| TorchNPU installation package version |  GitCode Branch   | PyTorch Version |  CANN version  |
|:-------------------------------------:|:-----------------:|:---------------:|:--------------:|
|               2.1.0.rc1               |  v2.1.0-5.0.rc3   |      2.1.0      |  CANN 7.0.RC1  |

## PyTorch and Python versions

| PyTorch Version |                        Python version                         |
|:---------------:|:-------------------------------------------------------------:|
|  PyTorch 2.9.0  |       Python3.10, Python3.11, Python 3.12, Python 3.13        |
"""

DEVEL = """\
ARG CANN_VERSION=9.1.0
ARG CANN_PRODUCT=910b
RUN CANN_FILE_VER=$(echo ${CANN_VERSION} | sed 's/_beta/-beta/') && \\
    ARCH_NAME=$(uname -m) && \\
    wget ${CANN_URL}/Ascend-cann-toolkit_${CANN_FILE_VER}_linux-${ARCH_NAME}.run && \\
    wget ${CANN_URL}/Ascend-cann-${CANN_PRODUCT}-ops_${CANN_FILE_VER}_linux-${ARCH_NAME}.run
"""

IMAGE = """\
RUN ARCH=$(case "${{TARGETPLATFORM}}" in \\
        "linux/amd64") echo "x86_64" ;; \\
        "linux/arm64") echo "aarch64" ;; \\
    esac) && \\
    CANN_TOOLKIT_URL=https://example.invalid/CANN/Ascend-cann-toolkit_{v}_linux-${{ARCH}}.run && \\
    CANN_KERNELS_URL=https://example.invalid/CANN/{kernels}_{v}_linux-${{ARCH}}.run
"""

VISION = """\
| `torch`            | `torchvision`      | Python              |
| ------------------ | ------------------ | ------------------- |
| `main` / `nightly` | `main` / `nightly` | `>=3.10`, `<=3.14`  |
| `2.9`              | `0.24`             | `>=3.10`, `<=3.14`  |
| `2.0`              | `0.15`             | `>=3.8`, `<=3.11`   |
"""

ENVS_OLD = 'env_variables = {\n    "VLLM_ASCEND_ENABLE_TOPK_OPTIMZE": lambda: 1,\n}\n'
ENVS_NEW = 'env_variables = {\n    "VLLM_ASCEND_ENABLE_NZ": lambda: 1,\n    "MAX_JOBS": lambda: 1,\n}\n'

# Each mirror: its files at HEAD, then (ref, files) for the release tags and branches made on top.
MIRRORS: dict[str, dict[str, Any]] = {
    "Ascend/pytorch": {
        "files": {
            "COMPATIBILITY.en.md": COMPATIBILITY,
            "docs/zh/api/environment_variable/op_execution/TASK_QUEUE_ENABLE.md": "# TASK_QUEUE_ENABLE\n",
            "docs/zh/api/environment_variable/_menu_environment_variable.md": "- [x](x.md)\n",
            "torch_npu/npu/config.py": 'import os\nos.getenv("TORCH_NPU_LOGS")\nos.getenv("TRITON_HOME")\n',
            "torch_npu/csrc/core/options.cpp": 'const char* v = std::getenv("PYTORCH_NPU_ALLOC_CONF");\n',
            "benchmarks/run.py": 'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n',
            "docker/devel/Dockerfile": DEVEL,
            "docker/devel/builder.sh": 'VALID_CANN_PRODUCTS="A3 910b"\n',
        },
        "refs": [
            ("tag", "v26.0.1-pytorch2.9.0", {"version.txt": "2.9.0.post4\n"}),
            ("tag", "v26.1.0-beta.1-pytorch2.9.0", {"version.txt": "# comment\n2.9.0.post3\n2.10.0.post1\n"}),
            ("branch", "v2.7.1-7.2.0", {"version.txt": "2.7.1.post1\n"}),
        ],
    },
    "hicann/runtime": {
        "files": {
            "docs/zh/env_vars/ASCEND_GLOBAL_LOG_LEVEL.md": "x\n",
            "docs/zh/env_vars/README.md": "x\n",
            "src/log.cc": 'auto a = getenv("ASCEND_PROCESS_LOG_PATH"); auto b = getenv("TEST_FLAG");\n',
        }
    },
    "hicann/ge": {"files": {"ge/x.cc": 'mmGetEnv("ASCEND_CACHE_PATH", buf, len);\n'}},
    "hicann/metadef": {"files": {"m/x.h": "// none\n"}},
    "hicann/hccl": {
        "files": {
            "docs/zh/user_guide/hccl_env/HCCL_CONNECT_TIMEOUT.md": "x\n",
            "src/a.cc": 'std::string t = GetEnv("HCCL_EXEC_TIMEOUT");\nsetenv("HCCL_BUFFSIZE", "200", 1);\n',
        }
    },
    "hicann/ascend-transformer-boost": {
        "files": {"src/c.cpp": 'IsEnable("ATB_MATMUL_SHUFFLE_K_ENABLE", true); getenv("LCCL_PARALLEL");\n'}
    },
    "vllm-project/vllm-ascend": {
        "history": [{"vllm_ascend/envs.py": ENVS_OLD}],
        "files": {
            "vllm_ascend/envs.py": ENVS_NEW,
            "vllm_ascend/platform.py": 'os.environ.get("VLLM_ASCEND_TRACE_RECOMPILES")\n',
            "tests/run.sh": "export CUDA_VISIBLE_DEVICES=0\n",
        },
    },
    "verl-project/verl": {"files": {"run.sh": "export TORCH_NCCL_AVOID_RECORD_STREAMS=1\nCUDA_TARGET = 1\n"}},
    "Ascend/ascend-docker-runtime": {"files": {"main.go": 'const visible = "ASCEND_VISIBLE_DEVICES"\n'}},
    "kvcache-ai/Mooncake": {"files": {"t.cpp": 'getenv("ASCEND_CONNECT_TIMEOUT");\n'}},
    "NVIDIA/nccl": {
        "files": {
            "src/init.cc": 'NCCL_PARAM(IbTc, "IB_TC", 0);\nNCCL_PARAM(Nvls, "NVLS_ENABLE", 1);\n',
            "src/net.cc": 'ncclGetEnv("NCCL_SOCKET_IFNAME");\n',
        }
    },
    "Ascend/cann-container-image": {
        "files": {
            "cann/8.3.rc1-a3-ubuntu22.04-py3.11/Dockerfile": IMAGE.format(v="8.3.RC1", kernels="Atlas-A3-cann-kernels"),
            "cann/8.5.0-910b-ubuntu22.04-py3.11/Dockerfile": IMAGE.format(v="8.5.0", kernels="Ascend-cann-910b-ops"),
        }
    },
    "octokit/webhooks": {
        "files": {
            "payload-schemas/api.github.com/repository_dispatch/event.schema.json": json.dumps(
                {"type": "object", "properties": {"action": {}, "client_payload": {}, "repository": {}}}
            ),
            "payload-schemas/api.github.com/pull_request/opened.schema.json": json.dumps(
                {"properties": {"action": {}, "number": {}, "pull_request": {}}}
            ),
            "payload-schemas/api.github.com/pull_request/closed.schema.json": json.dumps(
                {"properties": {"action": {}, "number": {}, "pull_request": {}, "sender": {}}}
            ),
            "payload-schemas/api.github.com/common/user.schema.json": json.dumps({"properties": {"login": {}}}),
        }
    },
    "Ascend/ascend-docker-image": {
        "files": {
            "README.md": (
                "| Ascend-cann-kernels-910b_7.0.RC1_linux.run | x |\n| Ascend-cann-nnrt_{version}_linux-{arch}.run |\n"
            )
        }
    },
}


def _git(repo: Path, *args: str, date: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _write(repo: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")


def _mirrors(root: Path) -> Path:
    """One git repository per source at <root>/<owner>+<repo>/repo, as `fetch` leaves them."""
    for name, spec in MIRRORS.items():
        repo = root / name.replace("/", "+") / "repo"
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main", date="2026-01-01T00:00:00")
        for i, files in enumerate(spec.get("history", [])):
            _write(repo, files)
            _git(repo, "add", "-A", date="2026-01-01T00:00:00")
            _git(repo, "commit", "-q", "-m", f"old {i}", date=f"2026-02-0{i + 1}T00:00:00")
        _write(repo, spec["files"])
        _git(repo, "add", "-A", date="2026-03-01T00:00:00")
        _git(repo, "commit", "-q", "-m", "head", date="2026-03-01T12:00:00")
        for kind, ref, files in spec.get("refs", []):
            _git(repo, "checkout", "-q", "-b", f"work-{ref}", date="2026-03-01T00:00:00")
            _write(repo, files)
            _git(repo, "add", "-A", date="2026-03-01T00:00:00")
            _git(repo, "commit", "-q", "-m", ref, date="2026-03-02T00:00:00")
            if kind == "tag":
                _git(repo, "tag", ref, date="2026-03-02T00:00:00")
            else:
                _git(repo, "branch", ref, date="2026-03-02T00:00:00")
            _git(repo, "checkout", "-q", "main", date="2026-03-01T00:00:00")
            _git(repo, "branch", "-q", "-D", f"work-{ref}", date="2026-03-01T00:00:00")
    return root


def _pypi(root: Path) -> Path:
    def rel(*versions: str, yanked: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
        return {
            v: [{"upload_time": f"2026-0{1 + i % 9}-15T10:00:00", "yanked": v in yanked}]
            for i, v in enumerate(versions)
        }

    answers = {
        "torch": rel("2.0.0", "2.9.0", "2.9.1"),
        "torch-npu": rel("2.9.0rc1", "2.9.0", "2.9.0.post2", "2.9.0.post4"),
        "torchvision": {**rel("0.15.1", "0.24.0", "0.24.1", yanked=()), "0.15.0": [{"yanked": True}], "0.1": []},
        "triton-ascend": rel("3.2.0"),
        "vllm": rel("0.9.1"),
        "vllm-ascend": rel("0.9.1rc1", "0.9.1"),
    }
    root.mkdir()
    for name, releases in answers.items():
        (root / f"{name}.json").write_text(json.dumps({"releases": releases}), encoding="utf-8")
    return root


def _refresh() -> ModuleType:
    name = "bench_facts_refresh"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "facts" / "refresh.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("sources")
    mirrors, pypi = _mirrors(root / "mirrors"), _pypi(root / "pypi")
    (root / "vision.md").write_text(VISION, encoding="utf-8")
    out = root / "sourced.json"
    args = [
        *("--mirrors", str(mirrors), "--pypi-dir", str(pypi), "--out", str(out)),
        *(
            "--vision-readme",
            str(root / "vision.md"),
            "--vision-source",
            "vision README",
            "--vision-date",
            "2026-04-01",
        ),
    ]
    refresh = _refresh()
    assert refresh.main(args) == 0
    text = out.read_text(encoding="utf-8")
    assert refresh.main([*args, "--check"]) == 0  # the same sources give the same bytes
    data: dict[str, Any] = json.loads(text)
    return data


def test_the_torch_npu_releases_come_from_the_table_the_tags_and_the_branches(written: dict[str, Any]) -> None:
    section = written["torch_npu_releases"]
    head = _sha("Ascend/pytorch", written)
    assert section["source"].startswith(f"Ascend/pytorch@{head} COMPATIBILITY.en.md")
    assert section["date"] == "2026-03-01"
    assert section["lines"] == {"26.0": "9.0.0", "7.3": "8.5.0", "7.2": "8.3.rc1", "5.0.rc3": "7.0.rc1"}
    assert section["releases"] == {
        "2.9.0.post4": {"torch": "2.9.0", "cann": "9.0.0", "listed": False},  # the tag of TorchNPU 26.0.1
        "2.9.0.post3": {"torch": "2.9.0", "cann": "", "listed": False},  # a beta of a line the table lacks
        "2.9.0.post2": {"torch": "2.9.0", "cann": "9.0.0", "listed": True},
        "2.9.0": {"torch": "2.9.0", "cann": "8.5.0", "listed": True},
        "2.7.1.post1": {"torch": "2.7.1", "cann": "8.3.rc1", "listed": False},  # the tip of a release branch
        "2.7.1": {"torch": "2.7.1", "cann": "8.3.rc1", "listed": True},
        "2.1.0rc1": {"torch": "2.1.0", "cann": "7.0.rc1", "listed": True},
    }
    assert section["python"] == {"2.9.0": ["3.10", "3.11", "3.12", "3.13"]}


def test_torchvision_pairs_by_patch_number_where_no_release_was_yanked(written: dict[str, Any]) -> None:
    section = written["torch_torchvision"]
    assert section["table"] == {"2.9.1": "0.24.1", "2.9.0": "0.24.0"}  # 2.0 is older than 2.1 (and yanked 0.15.0)
    assert section["source"].startswith("vision README")
    assert section["date"] == "2026-04-15"  # the newest of the README's date and the uploads paired


def test_published_versions_are_every_release_with_a_file(written: dict[str, Any]) -> None:
    section = written["published_versions"]
    assert section["packages"]["torchvision"] == ["0.15.0", "0.15.1", "0.24.0", "0.24.1"]  # yanked kept, empty not
    assert section["packages"]["torch-npu"] == ["2.9.0rc1", "2.9.0", "2.9.0.post2", "2.9.0.post4"]
    assert section["date"] == "2026-04-15"  # the newest upload


def test_environment_variables_come_from_docs_pages_and_code_reads(written: dict[str, Any]) -> None:
    assert written["env_cann"]["names"] == ["ASCEND_CACHE_PATH", "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_PROCESS_LOG_PATH"]
    assert written["env_hccl"]["names"] == ["HCCL_BUFFSIZE", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT"]
    assert written["env_atb"]["names"] == ["ATB_MATMUL_SHUFFLE_K_ENABLE", "LCCL_PARALLEL"]
    assert written["env_torch_npu"]["names"] == ["PYTORCH_NPU_ALLOC_CONF", "TASK_QUEUE_ENABLE", "TORCH_NPU_LOGS"]
    assert written["env_vllm_ascend"]["names"] == [
        "MAX_JOBS",
        "VLLM_ASCEND_ENABLE_NZ",
        "VLLM_ASCEND_ENABLE_TOPK_OPTIMZE",  # retired: from the file's history
        "VLLM_ASCEND_TRACE_RECOMPILES",
    ]
    assert written["env_ecosystem"]["names"] == ["ASCEND_CONNECT_TIMEOUT", "ASCEND_VISIBLE_DEVICES"]
    assert written["env_cuda"]["counterparts"] == {
        "CUDA_VISIBLE_DEVICES": "none",  # no ASCEND_RT_VISIBLE_DEVICES in these sources
        "NCCL_IB_TC": "none",
        "NCCL_NVLS_ENABLE": "none",
        "NCCL_SOCKET_IFNAME": "none",
        "PYTORCH_CUDA_ALLOC_CONF": "PYTORCH_NPU_ALLOC_CONF",
        "TORCH_NCCL_AVOID_RECORD_STREAMS": "none",
    }


def test_cann_package_files_per_version_and_architecture(written: dict[str, Any]) -> None:
    section = written["cann_packages"]
    both = ["aarch64", "x86_64"]
    assert section["versions"] == {
        "9.1.0": {"Ascend-cann-910b-ops": both, "Ascend-cann-A3-ops": both, "Ascend-cann-toolkit": both},
        "8.5.0": {"Ascend-cann-910b-ops": both, "Ascend-cann-toolkit": both},
        "8.3.RC1": {"Ascend-cann-toolkit": both, "Atlas-A3-cann-kernels": both},
        "7.0.RC1": {"Ascend-cann-kernels-910b": [""]},
    }
    assert set(section["kinds"]) == {"toolkit", "nnal", "operators"}


def test_event_payload_properties_are_every_activity_types_together(written: dict[str, Any]) -> None:
    section = written["github_events"]
    assert section["payload_keys"] == {
        "pull_request": ["action", "number", "pull_request", "sender"],
        "repository_dispatch": ["action", "client_payload", "repository"],
    }
    assert section["source"].startswith("octokit/webhooks@") and section["date"] == "2026-03-01"


def test_every_section_names_its_sources_and_a_date(written: dict[str, Any]) -> None:
    from npu_review.checks.facts.schema import sourced_sections

    assert list(written) == ["about", *sourced_sections()]
    for name in sourced_sections():
        assert written[name]["source"] and written[name]["date"].startswith("2026-"), name


def test_a_missing_mirror_stops_the_refresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refresh().main(["--mirrors", str(tmp_path), "--out", str(tmp_path / "x.json")]) == 2
    assert "Ascend/pytorch: no mirror at" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def _sha(name: str, written: dict[str, Any]) -> str:
    source = written["torch_npu_releases"]["source"]
    return source.split("@", 1)[1].split(" ", 1)[0]
