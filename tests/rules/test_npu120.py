"""NPU120: its fixture cases (tests/fixtures/NPU120/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU120")


from tests.rules.support import file_findings  # noqa: E402


def test_the_message_names_the_set_u_line_and_the_fix() -> None:
    severity, suggestion, message = file_findings("NPU120/bad_nnal_under_set_u", "NPU120")[("run.sh", 4)]
    assert severity == "error"
    assert suggestion is None
    assert message.startswith("`source /usr/local/Ascend/nnal/atb/set_env.sh` runs under `set -u` on line 2")
    assert message.endswith("Put `set +u` before this line and `set -u` after it.")


def test_the_set_u_line_is_a_related_place() -> None:
    from tests.rules.support import FIXTURES, load_case, run_case

    report = run_case(load_case(FIXTURES / "NPU120/bad_nnal_under_set_u"))
    [finding] = [f for f in report.findings if f.rule == "NPU120"]
    assert [(r.path.rsplit("/", 1)[-1], r.line, r.note) for r in finding.related] == [
        ("run.sh", 2, "turns on `set -u`")
    ]
