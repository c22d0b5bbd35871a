"""NPU116: its fixture cases (tests/fixtures/NPU116/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU116")


from tests.rules.support import file_findings  # noqa: E402


def test_the_split_override_is_joined_by_the_suggestion() -> None:
    severity, suggestion, message = file_findings("NPU116/bad_hydra_script", "NPU116")[("test_grpo_fsdp_A2.sh", 6)]
    assert severity == "error"
    assert suggestion == "    data.train_files=${TRAIN_FILE} \\"
    assert message.startswith("`data.train_files= ${TRAIN_FILE}`: the blank after `=` splits this in two")
