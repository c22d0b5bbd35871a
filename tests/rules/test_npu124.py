"""NPU124: its fixture cases (tests/fixtures/NPU124/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU124")


from npu_review.checks.model import Severity  # noqa: E402
from tests.rules.support import line_findings  # noqa: E402


def test_each_misspelling_comes_with_the_line_spelled_right() -> None:
    found = sorted(line_findings("NPU124/bad_soc_and_tool_names", "NPU124"))
    assert found == [
        (
            3,
            Severity.WARNING,
            "`npu-sim` is no Ascend command: `npu-smi` is, so running this line gives `npu-sim: command not found`.",
            "The driver and firmware are runtime dependencies. Run `npu-smi info` to check the NPUs.",
        ),
        (
            4,
            Severity.WARNING,
            "`ascedn910_93` is no Ascend SOC name: `ascend910_93` is (the letters are misspelled), so a build or a "
            "check that compares SOC names does not recognise it.",
            '    echo "    --soc supported values: ascend910b ascend910_93 ascend950, e.g. A3 (--soc=ascend910_93)"',
        ),
        (
            8,
            Severity.WARNING,
            "`Acsend910B1` is no Ascend SOC name: `Ascend910B1` is (the letters are misspelled), so a build or a "
            "check that compares SOC names does not recognise it.",
            "      - run: bash build.sh --soc=Ascend910B1",
        ),
    ]
