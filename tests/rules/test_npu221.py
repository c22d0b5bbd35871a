"""NPU221 build-arg-not-declared: its fixture cases (tests/fixtures/NPU221/) and messages."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import file_findings, fixture_tests, line_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU221")


def test_undeclared_argument_names_the_close_declared_one() -> None:
    [(line, sev, message, _s)] = line_findings("NPU221/bad_workflow_build_args", "NPU221")
    assert (line, sev) == (14, Severity.WARNING)
    assert message == (
        "This build passes `TORCH_VERSION` to `docker/npu/Dockerfile`, which declares no such `ARG`: docker ignores "
        "it (with a warning), so the setting does nothing (`TORCH_VERSION` -> `TORCH_NPU_VERSION`?). Pass the "
        "arguments the Dockerfile declares and needs."
    )


def test_an_argument_from_needs_is_an_error_on_its_arg_line() -> None:
    [(line, sev, message, _s)] = line_findings("NPU221/bad_script_never_passes_from_arg", "NPU221")
    assert (line, sev) == (1, Severity.ERROR)
    assert message.startswith(
        "`ARG BASE_TAG` has no default and no build of this Dockerfile passes it (scripts/build_npu_image.sh:3): "
        "the `FROM` at line 2 names no image without it."
    )


def test_doc_example_gets_both_halves() -> None:
    found = file_findings("NPU221/bad_doc_example_args", "NPU221")
    assert set(found) == {("Dockerfile", 5), ("OVERVIEW.md", 8)}
    assert "the RUN at line 6 breaks when it is empty" in found[("Dockerfile", 5)][2]
