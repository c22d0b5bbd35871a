"""NPU217 cache-restored-without-content-hash: its fixture cases, and what they do not say."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU217")

_WF = """\
name: ci
on: [pull_request]
jobs:
  build:
    runs-on: linux-arm64-npu-1
    steps:
      - id: hash
        run: echo "CSRC_HASH=$(find csrc -type f | sort | xargs sha1sum | sha1sum | cut -c1-12)" >> "$GITHUB_OUTPUT"
      - uses: runs-on/cache/restore@v4
        with:
          path: pkg/*.so
          key: build-${{ steps.hash.outputs.CSRC_HASH }}
          restore-keys: build-
      - run: |
          if find pkg -maxdepth 1 -name '*.so' | grep -q .; then
            SKIP_KERNELS=1 pip install -e .
          else
            pip install -e .
          fi
"""


def test_a_fork_of_the_cache_action_and_a_find_test_are_recognised() -> None:
    assert got(audit({".github/workflows/ci.yml": _WF}), "NPU217") == [
        (
            ".github/workflows/ci.yml",
            13,
            "warning",
            "`restore-keys: build-` restores `pkg/*.so` from a cache built from other sources (it drops "
            "`steps.hash.outputs.CSRC_HASH` of the key), and step `#3` skips the build when the files are there: a "
            "change to the sources is tested and shipped with stale binaries. Restore compiled outputs by the exact "
            "key only.",
        )
    ]


def test_a_dependency_cache_next_to_compiled_outputs_is_left_alone() -> None:
    wf = _WF.replace("path: pkg/*.so", "path: |\n            ~/.cache/pip\n            pkg/*.so")
    assert got(audit({".github/workflows/ci.yml": wf}), "NPU217") == []
