"""NPU312 unsupported-package-on-npu: its fixture cases (tests/fixtures/NPU312/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU312")


def test_npu312_deletes_only_packages_that_have_no_place_on_npu() -> None:
    got = file_findings("NPU312/bad_requirements_npu", "NPU312")
    assert got[("requirements-npu.txt", 6)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 8)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 9)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 11)][:2] == ("error", None)  # a CUDA torch wants the CPU build
    assert got[("requirements-npu.txt", 2)][:2] == ("error", None)
