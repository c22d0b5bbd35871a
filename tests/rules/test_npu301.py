"""NPU301 tls-verification-disabled: what the fixture cases do not say."""

from __future__ import annotations

from tests.fixture_support import audit

_MESSAGE = "`curl -fsSLk` downloads without checking the server's certificate: anyone on the path can swap the file."


def test_a_flag_group_twice_on_one_line_is_reported_without_a_suggestion() -> None:
    # `_suggest` once left `shrink` unbound when the group occurred twice: NameError, "could not check".
    dockerfile = (
        "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
        "RUN curl -fsSLk https://a.example.com/x -o x && curl -fsSLk https://b.example.com/y -o y\n"
        "RUN curl -fsSLk https://a.example.com/x -o x\n"
    )
    report = audit({"Dockerfile": dockerfile})
    assert report.errors == []
    got = [(f.rule, f.line, f.severity.label, f.message, f.suggestion) for f in report.findings]
    assert got == [
        ("NPU301", 2, "warning", _MESSAGE, None),  # two groups: which one to shrink is ambiguous
        ("NPU301", 3, "warning", _MESSAGE, "RUN curl -fsSL https://a.example.com/x -o x"),
    ]
