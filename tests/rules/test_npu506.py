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
