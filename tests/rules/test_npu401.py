"""NPU401 silent-cuda-default-on-npu-path: its fixture cases (tests/fixtures/NPU401/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from tests.fixture_support import audit
from tests.rules.support import (
    fixture_tests,
    locations,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU401")


LIB = (
    "class RayResourcePool:\n"
    "    def get_placement_groups(self, strategy='STRICT_PACK', name=None, device_name='cuda'):\n"
    "        return []\n"
)


def test_npu401_positional_argument_covers_the_default() -> None:
    user = "def f(p, d):\n    p.get_placement_groups('PACK', None, d)\n    p.get_placement_groups('PACK')\n"
    report = audit({"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": user})
    assert locations(report, "NPU401") == [("verl/trainer/u.py", 3)]


def test_npu401_index_is_limited_to_index_dirs() -> None:
    user = "def f(p):\n    p.get_placement_groups()\n"
    report = audit({"recipe/pool.py": LIB, "verl/trainer/u.py": user})
    assert locations(report, "NPU401") == []


def test_npu401_only_added_lines_on_a_change() -> None:
    old = "def f(p):\n    p.get_placement_groups()\n"
    new = old + "\n\ndef g(p):\n    p.get_placement_groups()\n"
    base = {"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": old}
    head = {"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": new}
    change = FileChange("verl/trainer/u.py", ChangeStatus.MODIFIED, added_lines=frozenset({3, 4, 5, 6}))
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes={change.path: change}))
    assert locations(report, "NPU401") == [("verl/trainer/u.py", 6)]


def test_npu401_lines_of_call_sites_whatever_the_line_breaks() -> None:
    """A call is reported on its line whether the lines end in "\\n" or "\\r\\n" (numbered by `str.splitlines`);
    a commented-out call is not reported, and two calls on one line are one finding."""
    body = (
        "def f(p):\n"
        "    p.get_placement_groups(); p.get_placement_groups()\n"
        "    # p.get_placement_groups()\n"
        "    x = 1\n"
        "    p.get_placement_groups()\n"
    )
    plain = audit({"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": body})
    assert locations(plain, "NPU401") == [("verl/trainer/u.py", 2), ("verl/trainer/u.py", 5)]
    windows = body.replace("\n", "\r\n")
    other = audit({"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": windows})
    assert locations(other, "NPU401") == [("verl/trainer/u.py", 2), ("verl/trainer/u.py", 5)]
