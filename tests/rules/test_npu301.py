"""NPU301 tls-verification-disabled: its fixture cases (tests/fixtures/NPU301/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.causes import by_cause
from tests.fixture_support import audit
from tests.rules.support import fixture_tests, rule_findings, tree_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU301")

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


def test_npu301_error_only_when_the_download_is_run() -> None:
    got = rule_findings("NPU301/bad_run_installer")
    assert got[("NPU301", 10)] == (
        "error",
        "    wget -v https://ascend-repo.example.com/CANN/CANN%209.1.0/Ascend-cann-toolkit_9.1.0_linux-${ARCH}.run"
        " && \\",
    )
    assert got[("NPU301", 13)] == (
        "error",
        "    curl -fsSL https://ascend-repo.example.com/CANN/CANN%209.1.0/Ascend-cann-nnal_9.1.0_linux-${ARCH}.run"
        " -o nnal.run && \\",
    )
    assert got[("NPU301", 19)] == ("error", "RUN curl https://tools.example.com/install-npu-tools.sh | bash")
    assert got[("NPU301", 22)][0] == "warning"  # a sha256sum -c check stands between download and run
    settings = rule_findings("NPU301/bad_settings")
    assert settings[("NPU301", 7)] == ("warning", "")
    assert settings[("NPU301", 10)] == ("notice", None)  # pip trusted-host: a mirror setup, a notice
    assert settings[("NPU301", 22)] == (
        "notice",
        "    pip install --extra-index-url https://wheels.example.net/simple mathruler && \\",
    )


def test_npu301_one_cause_one_comment_across_a_run_and_twin_files() -> None:
    loop = "".join(
        f"    wget --no-check-certificate https://example.com/pkg/Ascend-{part}_9.1.0_linux-aarch64.run && \\\n"
        for part in ("cann-toolkit", "cann-kernels", "cann-nnal", "a", "b", "c")
    )
    dockerfile = f"FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.11\nRUN cd /tmp && \\\n{loop}    true\n"
    findings = tree_findings(
        {"docker/ascend/Dockerfile.a2": dockerfile, "docker/ascend/Dockerfile.a3": dockerfile.replace("910b", "a3")}
    )
    found = [f for f in findings if f.rule == "NPU301"]
    assert len(found) == 12 and len({f.cause for f in found}) == 1
    (comment,) = by_cause(found)
    assert (comment.lead.path, comment.lead.line, len(comment.also)) == ("docker/ascend/Dockerfile.a2", 3, 11)


def test_npu301_a_mirror_trusted_host_is_a_notice_written_or_not() -> None:
    from npu_review.checks.model import Severity
    from tests.rules.support import change

    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "RUN pip config set global.index-url https://mirrors.example.com/simple && \\\n"
        "    pip config set global.trusted-host mirrors.example.com\n"
    )
    files = {"docker/Dockerfile.npu": dockerfile}
    assert [(f.line, f.severity) for f in audit(files).findings if f.rule == "NPU301"] == [(3, Severity.NOTICE)]
    written = [(f.line, f.severity) for f in change({}, files).findings if f.rule == "NPU301"]
    assert written == [(3, Severity.NOTICE)]


def test_npu301_a_download_copied_from_a_twin_dockerfile_is_a_notice() -> None:
    from npu_review.checks.model import Severity
    from tests.rules.support import change

    twin = (
        "FROM quay.io/ascend/cann:8.5.0-a3-ubuntu22.04-py3.11\n"
        "RUN wget --no-check-certificate https://example.com/tool.tar.gz && tar xf tool.tar.gz\n"
    )
    new = twin.replace("-a3-", "-910b-") + "RUN curl -k https://example.com/other.tar.gz -o /tmp/other.tar.gz\n"
    base = {"docker/Dockerfile.ascend_a3": twin}
    head = {**base, "docker/Dockerfile.ascend_a2": new}
    found = [(f.line, f.severity) for f in change(base, head).findings if f.rule == "NPU301"]
    # The wget line is the a3 twin's, copied; the curl -k is this change's own.
    assert found == [(2, Severity.NOTICE), (3, Severity.WARNING)]


def test_no_suggestion_to_drop_the_flag_where_the_image_has_no_ca_certificates() -> None:
    # ubuntu:22.04 is a minimal rootfs; `--no-install-recommends` leaves ca-certificates out of wget's install:
    # the line without the flag fails there. With ca-certificates installed, the suggestion is safe.
    bare = (
        "FROM ubuntu:22.04\n"
        "RUN apt-get update && apt-get install -y --no-install-recommends wget\n"
        "RUN wget --no-check-certificate https://a.example.com/x.run -O /tmp/x.run\n"
    )
    with_certs = bare.replace(
        "install -y --no-install-recommends wget", "install -y --no-install-recommends wget ca-certificates"
    )
    for text, suggestion in (
        (bare, None),
        (with_certs, "RUN wget https://a.example.com/x.run -O /tmp/x.run"),
    ):
        report = audit({"docker/ascend/Dockerfile": text})
        assert report.errors == []
        got = [(f.rule, f.line, f.severity.label, f.suggestion) for f in report.findings if f.rule == "NPU301"]
        assert got == [("NPU301", 3, "warning", suggestion)]
    # Every Ubuntu LTS image is as bare: intelligent-machine-learning/dlrover's ubuntu:18.04 (sweep-r17, judged
    # false while it suggested the line without `-k`).
    report = audit({"docker/ascend/Dockerfile": bare.replace("ubuntu:22.04", "ubuntu:18.04")})
    got = [(f.line, f.suggestion) for f in report.findings if f.rule == "NPU301"]
    assert got == [(3, None)]
