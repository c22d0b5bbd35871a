"""NPU324 wheel-retagged-manylinux: its fixture cases (tests/fixtures/NPU324/) and messages."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU324")


def test_the_message_says_why_and_how() -> None:
    found = file_findings("NPU324/bad_workflow_sets_the_platform_name", "NPU324")
    assert sorted(found) == [("release_npu.yml", 12)]
    message = found[("release_npu.yml", 12)][2]
    assert message.startswith("This gives the wheel a manylinux platform tag by its name alone (a rename or a retag)")
    assert message.endswith("or keep the `linux_<arch>` tag.")


def _npu324(script: str) -> list[int]:
    report = run(ChangeSet(head=MemoryTree({"scripts/release_npu.sh": script}), audit=True))
    return [f.line for f in report.findings if f.rule == "NPU324"]


def test_each_way_to_retag_and_what_makes_the_tag_true() -> None:
    build = "#!/bin/bash\npython3 setup.py bdist_wheel\n"
    assert _npu324(build + "rename linux_x86_64 manylinux1_x86_64 dist/*.whl\n") == [3]
    assert _npu324(build + "python3 setup.py bdist_wheel -p manylinux2014_x86_64\n") == [3]
    assert _npu324(build + 'cp "$w" "${w/linux/manylinux2014}"\n') == [3]
    assert _npu324(build + "sed -i 's/linux_x86_64/manylinux2014_x86_64/' setup.cfg\n") == [3]
    # Moving a wheel that has its tag already, or a line that only mentions manylinux, renames nothing.
    assert _npu324(build + "mv dist/x-manylinux_2_28_aarch64.whl out/ && echo manylinux\n") == []
    assert _npu324(build + "mv dist/a.whl dist/a-manylinux2014.whl\nauditwheel show dist/*.whl\n") == []
    assert _npu324("#!/bin/bash\n# mv dist/a.whl dist/a-manylinux2014.whl\n") == []
