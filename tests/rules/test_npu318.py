"""NPU318: its fixture cases (tests/fixtures/NPU318/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU318")


from tests.rules.support import file_findings  # noqa: E402


def test_a_dangling_and_gets_the_backslash_and_a_last_line_none() -> None:
    found = file_findings("NPU318/bad_dangling_and", "NPU318")
    assert found[("Dockerfile.ascend_8.5.0_a2", 2)][1] == "RUN pip install torch-npu==2.8.0.post2 && \\"
    assert (
        "the next line (`pip install -e vllm-ascend`) is read as an instruction of its own"
        in (found[("Dockerfile.ascend_8.5.0_a2", 2)][2])
    )
    # the next line is an instruction: ending the RUN there was meant, only the operator is wrong
    assert found[("Dockerfile.ascend_8.5.0_a2", 4)][1] is None
