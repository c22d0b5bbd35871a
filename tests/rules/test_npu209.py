"""NPU209 export-not-persisted: its fixture cases (tests/fixtures/NPU209/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.rules.npu209_export_not_persisted import _suggest as suggest_209
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU209")


def test_export_suggestion_is_exact_or_absent() -> None:
    assert suggest_209('    export A="x y"') == '    echo "A=x y" >> "$GITHUB_ENV"'
    assert suggest_209("    export A='$x'") == "    echo 'A=$x' >> \"$GITHUB_ENV\""
    assert suggest_209("    export A=~/logs") == '    echo "A=$HOME/logs" >> "$GITHUB_ENV"'
    assert suggest_209("    export A=$(pwd)/x") is None
    assert suggest_209("    export A=a:~/b") is None
