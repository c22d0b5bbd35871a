"""NPU404 subpackage-not-packaged: its fixture cases (tests/fixtures/NPU404/) and messages."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU404")


def test_the_message_names_the_list_the_subpackage_and_its_import() -> None:
    found = file_findings("NPU404/bad_setup_py_list", "NPU404")
    assert sorted(found) == [("setup.py", 6)]
    severity, _, message = found[("setup.py", 6)]
    assert severity == "error"
    assert message.startswith(
        "`packages=` lists `vllm_ascend` but not `vllm_ascend.ops`, which vllm_ascend/platform.py:4 imports "
        "(`from vllm_ascend import ops`): setuptools installs only the packages listed"
    )


def test_a_change_that_adds_the_import_is_reported_on_the_import() -> None:
    found = file_findings("NPU404/bad_change_adds_import", "NPU404")
    assert sorted(found) == [("worker.py", 1)]
    assert "`packages=` (setup.py:3) lists `vllm_ascend`" in found[("worker.py", 1)][2]
