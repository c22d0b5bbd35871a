"""NPU117: its fixture cases (tests/fixtures/NPU117/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU117")


from tests.rules.support import case_findings  # noqa: E402


def test_the_unknown_option_names_what_the_parser_knows() -> None:
    found = [f for f in case_findings("NPU117/bad_unknown_option") if f.rule == "NPU117"]
    assert len(found) == 1
    assert found[0].message.startswith(
        "`scripts/npu_ci_install_dependency.sh` does not handle `--torch-version`: its option parser (line 5) knows "
        "`--cann-version`, `-h`, `--help`"
    )
    assert [(r.path, r.line) for r in found[0].related] == [("scripts/npu_ci_install_dependency.sh", 5)]
