"""NPU325: its fixture cases (tests/fixtures/NPU325/) and a change that drops a line's `\\`."""

from __future__ import annotations

from tests.rules.support import change, file_findings, fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU325")

_FROM = "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"


def test_a_command_that_lost_its_run_gets_run_back_and_an_indented_one_no_suggestion() -> None:
    lost = file_findings("NPU325/bad_lost_run", "NPU325")
    assert (
        lost[("Dockerfile.ascend_8.5.0_a2", 7)][1] == "RUN python3 -m pip install torch==2.8.0 torch-npu==2.8.0.post2"
    )
    missing = file_findings("NPU325/bad_missing_and", "NPU325")
    assert missing[("Dockerfile", 4)][1] is None  # indented: the RUN above may be what it belongs to
    assert missing[("Dockerfile", 7)][1] is None  # `&&`: no command to prefix


def test_a_change_that_drops_the_backslash_above_an_untouched_line_is_reported_on_that_line() -> None:
    base = {
        "docker/ascend/Dockerfile.a2": _FROM + "RUN pip install torch==2.8.0 && \\\n    pip install torch-npu==2.8.0\n"
    }
    head = {
        "docker/ascend/Dockerfile.a2": _FROM + "RUN pip install torch==2.8.0 &&\n    pip install torch-npu==2.8.0\n"
    }
    # The RUN now ends with `&&`: NPU318's finding, not a second one here.
    assert got(change(base, head), "NPU325") == []
    head = {"docker/ascend/Dockerfile.a2": _FROM + "RUN pip install torch==2.8.1\n    pip install torch-npu==2.8.0\n"}
    base = {
        "docker/ascend/Dockerfile.a2": _FROM + "RUN pip install torch==2.8.0 \\\n    pip install torch-npu==2.8.0\n"
    }
    assert got(change(base, head), "NPU325") == [
        (
            "docker/ascend/Dockerfile.a2",
            3,
            "error",
            "`pip` is no Dockerfile instruction, so `docker build` stops at this line (`unknown instruction`): the "
            "RUN above ends on line 2, where no `\\` continues it. Start this line with its instruction (`RUN` for "
            "a command), or, if this line belongs to that RUN, end line 2 with ` \\` (and `&&` before it if this "
            "line starts a command of its own).",
        )
    ]


def test_an_untouched_unknown_line_below_an_untouched_instruction_is_not_the_change_s() -> None:
    broken = _FROM + "RUN pip install torch==2.8.0\npip install torch-npu==2.8.0\n"
    base = {"docker/ascend/Dockerfile.a2": broken}
    head = {"docker/ascend/Dockerfile.a2": broken + "ENV TASK_QUEUE_ENABLE=1\n"}
    assert got(change(base, head), "NPU325") == []
