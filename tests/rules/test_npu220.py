"""NPU220 image-pushed-not-built: its fixture cases (tests/fixtures/NPU220/) and messages."""

from __future__ import annotations

from tests.rules.support import fixture_tests, line_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU220")


def test_literal_variable_name_message() -> None:
    [(line, _sev, message, suggestion)] = line_findings("NPU220/bad_imagetools_literal_variable", "NPU220")
    assert line == 14
    assert message.startswith("`-t TAGS` tags the image with the literal word `TAGS`: the variable `TAGS` is written")
    assert 'Write `"$TAGS"`' in message
    assert suggestion is None


def test_matrix_legs_of_one_push_are_one_finding() -> None:
    [(_line, _sev, message, _s)] = line_findings("NPU220/bad_push_of_a_name_never_built", "NPU220")
    assert message.startswith(
        "`docker push quay.io/ascend/app:latest-a2` in job `image` [device=a2] pushes a reference"
    )
    assert "Made before it: `quay.io/ascend/app:a2`." in message
    assert message.endswith("(the same in 1 more matrix leg(s))")


def test_a_guide_s_capitalised_fill_in_is_no_reference() -> None:
    """502022240018/MomentSeek's image guide builds `-t YOUR_REGISTRY/momentseek-platform:VERSION-ascend`, the
    registry the reader fills in (sweep-r23, judged false). A script's `-t MyOrg/app` is refused by docker."""
    from tests.rules.support import change

    guide = (
        "# Build the Ascend image\n\n```bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "docker build -f docker/Dockerfile.ascend -t YOUR_REGISTRY/momentseek-platform:VERSION-ascend .\n```\n"
    )
    assert [f for f in change({}, {"docs/IMAGE_BUILD.md": guide}).findings if f.rule == "NPU220"] == []
    script = "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\ndocker build -t MyOrg/app:npu .\n"
    found = [(f.path, f.line) for f in change({}, {"docker/build_npu.sh": script}).findings if f.rule == "NPU220"]
    assert found == [("docker/build_npu.sh", 3)]
