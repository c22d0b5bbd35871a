"""NPU403 env-flag-read-as-truthy: its fixture cases (tests/fixtures/NPU403/) and messages."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU403")


def test_the_message_names_the_read_and_the_setting() -> None:
    found = file_findings("NPU403/bad_ci_script_exports_false", "NPU403")
    assert sorted(found) == [("setup.py", 9)]
    severity, _, message = found[("setup.py", 9)]
    assert severity == "warning"
    assert message.startswith(
        "`DISABLE_INSTALL_TORCHAIR` is read with `os.environ.get('DISABLE_INSTALL_TORCHAIR')` and tested for truth "
        "(setup.py:9), but ci/build.sh:4 sets it to `FALSE`: a non-empty string"
    )
