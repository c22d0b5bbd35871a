"""NPU506 package-index-mismatch: its fixture cases (tests/fixtures/NPU506/) and messages."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import file_findings, fixture_tests, line_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU506")


def test_project_page_index_gets_the_root() -> None:
    [(line, sev, message, suggestion)] = line_findings("NPU506/bad_guide_project_page_index", "NPU506")
    assert (line, sev) == (5, Severity.ERROR)
    assert message.endswith("Give the index root, `https://test.pypi.org/simple/`.")
    assert suggestion == "pip install -i https://test.pypi.org/simple/ triton_ascend==3.2.0.dev20251226"


def test_local_version_without_its_index() -> None:
    [(line, sev, message, suggestion)] = line_findings("NPU506/bad_readme_local_version", "NPU506")
    assert (line, sev) == (6, Severity.ERROR)
    assert message.startswith("`torch==2.1.0+cpu` asks for a local version (`+cpu`)")
    assert suggestion == "pip3 install torch==2.1.0+cpu --index-url https://download.pytorch.org/whl/cpu"


def test_x86_image_cases_are_warnings() -> None:
    found = file_findings("NPU506/bad_image_installs_vllm_on_x86", "NPU506")
    assert set(found) == {("Dockerfile", 4), ("Dockerfile.a3", 2)}
    assert all(sev == "warning" for sev, _s, _m in found.values())


def test_a_vendor_index_may_publish_local_versions() -> None:
    """flagos-ai/FlagBLAS installs `torch==2.10.0+cpu` and `flagtree==0.6.0+ascend3.5` from its own index
    (`--index-url https://resource.flagos.net/.../flagos-pypi-ascend/simple`, on the continued line): the rule said no
    other index was given (rs-r53, two judged false). PyPI and its mirrors never publish local versions."""
    from tests.rules.support import change

    script = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "uv pip install torch==2.10.0+cpu torch-npu==2.10.0 \\\n"
        "    --index-url https://resource.flagos.net/repository/flagos-pypi-ascend/simple\n"
        "pip install flagtree==0.6.0+ascend3.5 -i https://mirrors.tuna.tsinghua.edu.cn/pypi/web/simple\n"
    )
    found = [(f.path, f.line) for f in change({}, {"tools/setup_npu.sh": script}).findings if f.rule == "NPU506"]
    assert found == [("tools/setup_npu.sh", 5)]
