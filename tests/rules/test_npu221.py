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


def test_a_doc_s_build_after_cd_builds_that_folder_s_dockerfile() -> None:
    """hicann/cann-bench d0dafee7 (rs-r28, judged false): `docker/eval/README.md` builds the base image with
    `cd docker/base && docker build --build-arg ARCH=... .`, whose Dockerfile declares `ARCH`; the eval Dockerfile,
    beside the README, no longer does. The same build without the `cd` builds the eval one, and is reported."""
    from tests.rules.support import change

    readme = (
        "# Eval image (Ascend NPU)\n\n```bash\n"
        "cd docker/base && docker build --build-arg ARCH=$(uname -m) -t cann-toolkit-base:9.0.1 .\n```\n"
    )
    base_df = "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nARG ARCH\nRUN echo ${ARCH} > /arch\n"
    eval_old = "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nARG ARCH\nARG NPU_ARCH=ascend910b\n"
    eval_old += "RUN echo ${ARCH} ${NPU_ARCH}\n"
    eval_new = "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nARG NPU_ARCH=ascend910b\nRUN echo ${NPU_ARCH}\n"
    base = {"docker/base/Dockerfile": base_df, "docker/eval/Dockerfile": eval_old}
    head = dict(base, **{"docker/eval/Dockerfile": eval_new, "docker/eval/README.md": readme})
    assert [f for f in change(base, head).findings if f.rule == "NPU221"] == []
    no_cd = dict(head, **{"docker/eval/README.md": readme.replace("cd docker/base && ", "")})
    assert [(f.path, f.line) for f in change(base, no_cd).findings if f.rule == "NPU221"] == [
        ("docker/eval/README.md", 4)
    ]
