"""NPU125 argument-count-check-contradicts: its fixture cases (tests/fixtures/NPU125/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU125")
