"""NPU303 sourcing-not-persisted: its fixture cases (tests/fixtures/NPU303/)."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU303")


def test_environment_scripts_sourced_each_in_a_run_of_their_own_are_one_cause() -> None:
    """FlagOpen/FlagPerf's Ascend image sourced CANN's, NNAL's and the toolbox's set_env.sh, each in a RUN of its
    own: one mistake, one comment (the other RUNs its places); an `export` left last in a RUN is another."""
    from tests.rules.support import change

    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        'SHELL ["/bin/bash", "-c"]\n'
        "RUN source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "RUN source /usr/local/Ascend/nnal/atb/set_env.sh\n"
        "RUN source /usr/local/Ascend/toolbox/set_env.sh\n"
        "RUN pip install torch_npu==2.7.1 && export HCCL_BUFFSIZE=512\n"
    )
    report = change({}, {"docker/ascend/Dockerfile": dockerfile})
    found = [(f.line, f.severity.label) for f in report.findings if f.rule == "NPU303"]
    assert found == [(3, "warning"), (4, "warning"), (5, "warning"), (6, "warning")]
    causes = [f.cause for f in report.findings if f.rule == "NPU303"]
    assert causes[0] == causes[1] == causes[2] != causes[3]
