"""NPU307 cann-torch-npu-incompatible: its fixture cases (tests/fixtures/NPU307/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.analysis.installs import in_context
from npu_review.checks.parsers.dockerfile import copies, parse
from tests.fixture_support import audit
from tests.rules.support import (
    change,
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU307")


def test_npu307_newer_cann_build_of_a_line_the_cann_has_is_a_warning_with_the_fitting_version() -> None:
    # torch_npu 2.7.1.post2 is the CANN 8.5.0 build of torch 2.7.1, whose 8.3.RC1 build is 2.7.1: not the tested
    # pairing (torch_npu warns at import; verl's sglang images and MindSpeed-MM ship such pairings): a warning.
    got = file_findings("NPU307/bad_torch_npu_for_newer_cann", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend_8.3.rc1_a2", 12)]
    assert sev == "warning"
    assert message == (
        "torch_npu 2.7.1.post2 is built for CANN 8.5.0, newer than CANN 8.3.rc1 of the base image (line 2): not a "
        "pairing Ascend tests (torch_npu warns at import, and an operator this CANN lacks fails when called). For "
        "CANN 8.3.rc1 and torch 2.7.1, use torch_npu 2.7.1."
    )
    assert suggestion == (
        "    pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1 transformers==4.57.6 && \\"
    )


def test_npu307_error_for_a_torch_line_the_cann_has_no_torch_npu_for() -> None:
    got = file_findings("NPU307/bad_torch_npu_for_newer_cann", "NPU307")
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 16)] == (
        "error",
        None,
        "torch_npu 2.9.0 is built for CANN 8.5.0, newer than CANN 8.3.rc1 of the base image (line 15), which has "
        "no torch_npu for torch 2.9.0: it needs operators this CANN does not have.",
    )


def test_npu307_warnings_for_older_pairing_and_mismatches() -> None:
    got = file_findings("NPU307/bad_older_pairing_and_mismatches", "NPU307")
    name = "Dockerfile.ascend_8.5.0_a2_v0.7.1"
    # An older, once-valid pairing is a notice (issue 13), with the exact fix still attached.
    assert got[(name, 7)][:2] == ("notice", "    pip install torch==2.8.0 torch_npu==2.8.0.post2 && \\")
    assert "(line 1)" in got[(name, 7)][2]  # the first stage's FROM, not the second one's
    assert got[(name, 9)][:2] == ("warning", None)
    assert "whose torchvision is 0.23.0" in got[(name, 9)][2]
    assert got[(name, 14)][:2] == ("warning", None)
    assert "torch_npu 2.9.0 extends torch 2.9.0" in got[(name, 14)][2]


def test_npu307_installer_updates_cann_and_arg_wheel_has_no_fix() -> None:
    got = file_findings("NPU307/bad_cann_installer_and_wheel_arg", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend.sglang_8.5.2_a2", 5)]
    assert (sev, suggestion) == ("warning", None)
    assert "CANN 8.5.2 of the CANN installer (line 10)" in message


def test_npu307_arg_pin_suggests_the_fitting_version_on_the_arg_line() -> None:
    got = file_findings("NPU307/bad_pin_from_stage_arg", "NPU307")
    sev, suggestion, message = got[("Dockerfile", 3)]
    assert (sev, suggestion) == ("warning", "ARG TORCH_NPU_VERSION=2.7.1")
    assert message.startswith("torch_npu 2.7.1.post2 is built for CANN 8.5.0, newer than CANN 8.3.rc1")


def test_npu307_a_release_candidate_of_the_adapter_is_for_the_final_torch() -> None:
    # torch_npu 2.6.0rc1 extends the final torch 2.6.0 (torch publishes no rc on PyPI): once reported as "extends
    # torch 2.6.0rc1, but line 2 installs torch 2.6.0: pin the torch_npu built for torch 2.6.0", what was pinned.
    dockerfile = (
        "FROM quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11\n"
        "RUN pip install torch==2.6.0 torch_npu==2.6.0rc1 torchvision==0.21.0\n"
        "RUN pip install torch==2.7.1 torch_npu==2.6.0rc1\n"
    )
    # Written by the change: a warning; the same pairing the project already ships (an audit): a notice.
    got = [(f.line, f.severity.label, f.message) for f in change({}, {"Dockerfile": dockerfile}).findings]
    assert [(line, sev) for line, sev, _ in audit_findings(dockerfile)] == [(3, "notice")]
    assert got == [
        (
            3,
            "warning",
            "torch_npu 2.6.0rc1 extends torch 2.6.0, but line 3 installs torch 2.7.1: pin the torch_npu built for "
            "torch 2.7.1.",
        )
    ]


def audit_findings(dockerfile: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.severity.label, f.message) for f in audit({"Dockerfile": dockerfile}).findings]


def test_npu307_a_post_release_the_table_omits_is_judged_by_its_release_tag() -> None:
    got = file_findings("NPU307/bad_post_release_the_table_omits", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend_8.5.0_a2", 6)]
    assert (sev, suggestion) == ("warning", "    pip install torch_npu==2.9.0")
    assert message.startswith("torch_npu 2.9.0.post4 is built for CANN 9.0.0, newer than CANN 8.5.0")
    assert message.endswith("For CANN 8.5.0 and torch 2.9.0, use torch_npu 2.9.0.")
    assert got[("Dockerfile.ascend_8.5.0_a2", 9)][0] == "notice"


def test_npu307_a_pin_from_an_arg_before_from_is_not_seen_in_the_stage() -> None:
    # `ARG X=…` before FROM is not visible to RUN unless declared again after it (NPU313 says so): unknown.
    dockerfile = (
        "ARG TORCH_NPU_VERSION=2.7.1.post2\n"
        "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
        "RUN pip install torch==2.7.1 torch_npu==${TORCH_NPU_VERSION}\n"
    )
    assert [f for f in audit({"Dockerfile": dockerfile}).findings if f.rule == "NPU307"] == []


def test_npu307_requirement_change_names_the_dockerfile_that_installs_it() -> None:
    got = file_findings("NPU307/bad_change_bumps_requirement_not_base", "NPU307")
    sev, suggestion, message = got[("requirements.txt", 2)]
    assert (sev, suggestion) == ("warning", None)
    assert message.startswith(
        "docker/npu/Dockerfile line 4: `pip install -e /workspace/app` of this repository installs torch_npu "
        "2.10.0.post4 (requirements.txt line 2), which is built for CANN 9.1.0, newer than CANN 9.0.0"
    )


def test_in_context_maps_image_paths_back_to_the_repository() -> None:
    df = parse(
        "FROM cann:9.1.0-910b\n"
        "WORKDIR /w\n"
        "COPY . app/\n"
        "COPY requirements-npu.txt tools/setup.sh /opt/\n"
        "COPY --from=builder /out /w/app/out\n"
        "FROM ubuntu:22.04\n"
        "COPY docs /docs\n"
    )
    copied = copies(df)
    assert [(c.line, c.stage, c.sources, c.dest, c.into_dir) for c in copied] == [
        (3, 0, (".",), "/w/app", True),
        (4, 0, ("requirements-npu.txt", "tools/setup.sh"), "/opt", True),
        (7, 1, ("docs",), "/docs", False),
    ]
    assert in_context(copied, 0, 9, "/w/app") == ""
    assert in_context(copied, 0, 9, "/w/app/python/pyproject.toml") == "python/pyproject.toml"
    assert in_context(copied, 0, 9, "/opt/requirements-npu.txt") == "requirements-npu.txt"
    assert in_context(copied, 0, 9, "/opt/other.txt") is None
    assert in_context(copied, 0, 3, "/w/app") is None  # not copied yet
    assert in_context(copied, 1, 9, "/w/app") is None  # another stage
    assert in_context(copied, 1, 9, "/docs/index.md") == "docs/index.md"


def test_a_nightly_build_has_no_cann_of_its_release() -> None:
    """A `.devN` torch_npu is built before the release it leads to, on the CANN of its day: `2.5.1.post1` is the
    CANN 8.2.rc1 build, but vLLM-Ascend ran `2.5.1.post1.dev20250528` on CANN 8.1.rc1 (its CI, its release
    matrix). The nightly's CANN is unknown, so nothing is said; the release itself on 8.1.rc1 is reported."""

    def npu307(pin: str) -> list[tuple[str, int, str]]:
        files = {
            "docker/Dockerfile.npu": (
                "FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10\n"
                f"RUN pip install torch==2.5.1 torch_npu=={pin}\n"
            )
        }
        return [(f.path, f.line, f.severity.label) for f in audit(files).findings if f.rule == "NPU307"]

    assert npu307("2.5.1.post1.dev20250528") == []
    # (an audit introduces nothing: the pairing the project lives with is a notice)
    assert npu307("2.5.1.post1") == [("docker/Dockerfile.npu", 2, "notice")]
