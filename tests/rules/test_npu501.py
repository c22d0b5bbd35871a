"""NPU501 invisible-unicode-in-path: its fixture cases (tests/fixtures/NPU501/), and what they cannot say."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import (
    fixture_tests,
    locations,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU501")


def test_npu501_binary_file_with_invisible_name_is_reported_on_line_one() -> None:
    report = audit({"docs/ascend_tutorial/img/\u200bflow.png": None})
    assert locations(report, "NPU501") == [("docs/ascend_tutorial/img/\u200bflow.png", 1)]


def test_npu501_suggestion_removes_only_the_invisible_character() -> None:
    text = "见[指南](./a\u200b.md)，👩\u200d💻\n"
    report = audit({"docs/x.md": text, "docs/a.md": "# a\n"})
    (f,) = [f for f in report.findings if f.rule == "NPU501"]
    assert f.suggestion == "见[指南](./a.md)，👩\u200d💻"
