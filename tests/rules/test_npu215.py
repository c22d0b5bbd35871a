"""NPU215 ci-test-config-missing: its fixture cases (tests/fixtures/NPU215/), and lists without base paths."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU215")

_LIST = """\
models:
  - name: a
    config_file_path: a.yaml
  - name: b
    config_file_path: b.yaml
  - name: c
    config_file_path: c.yaml
  - name: d
    config_file_path: d.yaml
"""
_FILES = {
    "ci/weekly_matrix.yaml": _LIST,
    "tests/npu/nightly/models/a.yaml": "x: 1\n",
    "tests/npu/nightly/models/b.yaml": "x: 1\n",
    "tests/npu/nightly/models/c.yaml": "x: 1\n",
    "tests/npu/weekly/models/d.yaml": "x: 1\n",
}


def test_the_odd_entry_is_reported_with_where_its_file_is() -> None:
    assert got(audit(_FILES), "NPU215") == [
        (
            "ci/weekly_matrix.yaml",
            9,
            "warning",
            "`d.yaml` is not under `tests/npu/nightly/models/`, where this list's other test configs are: this test "
            "entry's job fails when it runs. A file of that name is at `tests/npu/weekly/models/d.yaml`: under "
            "another base directory than the list's.",
        )
    ]


def test_a_workflow_that_reads_the_list_and_passes_the_files_base_path_keeps_it_silent() -> None:
    workflow = """\
name: weekly
on: [schedule]
jobs:
  e2e:
    uses: ./.github/workflows/_e2e.yml
    with:
      matrix_file: ci/weekly_matrix.yaml
      config_base_path: tests/npu/weekly/models/
"""
    assert got(audit(dict(_FILES, **{".github/workflows/weekly.yml": workflow})), "NPU215") == []
