"""NPU326: its fixture cases (tests/fixtures/NPU326/) and its suggestions."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU326")


def test_the_suggestion_adds_yes_after_the_verb() -> None:
    found = file_findings("NPU326/bad_dockerfile_run", "NPU326")
    assert found[("Dockerfile.ascend_8.5.0_a2", 3)][1] == "    pip uninstall -y triton && \\"
    assert found[("Dockerfile.ascend_8.5.0_a2", 5)][1] == "RUN pip3 uninstall -y -q torchvision torchaudio"
    step = file_findings("NPU326/bad_ci_step", "NPU326")
    assert step[("npu_unit_test.yml", 12)][1] == "          python3 -m pip uninstall -y deepep"
    apt = file_findings("NPU326/bad_apt_in_ci_step", "NPU326")
    assert apt[("ascend_build.yml", 14)][1] == "          sudo -E apt-get install -y ccache clang-format"
    yum = file_findings("NPU326/bad_yum_dnf_in_image", "NPU326")
    assert yum[("Dockerfile.openeuler", 2)][1] == "RUN yum install -y gcc-c++ cmake && yum clean all"
    assert yum[("Dockerfile.openeuler", 3)][1] == "RUN dnf --nogpgcheck install -y git-lfs"
