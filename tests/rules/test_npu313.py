"""NPU313 arg-used-before-declared: its fixture cases (tests/fixtures/NPU313/)."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU313")


def test_the_declaration_the_message_names_is_a_related_place() -> None:
    from tests.rules.support import FIXTURES, load_case, run_case

    report = run_case(load_case(FIXTURES / "NPU313/bad_used_before_arg"))
    related = {f.line: [(r.line, r.note) for r in f.related] for f in report.findings if f.rule == "NPU313"}
    assert related[7] == [(13, "`ARG MOONCAKE_TAG`")]  # declared later in the stage
    assert related[9] == [(2, "`ARG TORCH_NPU_VERSION`")]  # declared before FROM only
    assert related[10] == []  # a platform argument: nothing declared
