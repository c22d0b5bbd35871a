"""NPU125 argument-count-check-contradicts: its fixture cases (tests/fixtures/NPU125/)."""

from __future__ import annotations

from npu_review.checks.model import Related
from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU125")


def test_an_argument_of_a_program_in_single_quotes_is_not_the_script_s() -> None:
    """NetX-lab/Libra's `discover_npu_nodes_readonly.sh` checks `$# -ne 1`, then runs `xargs … bash -c '… ip="$1.$2"
    …' _ "$subnet" {}`: the `$2` is the inner shell's second argument, never the script's (rs-r62, judged false). The
    same read outside the quotes is one no allowed call reaches."""
    from tests.rules.support import change

    script = (
        "#!/usr/bin/env bash\n# Find the hosts of an NPU subnet.\nset -euo pipefail\n\n"
        'if [[ "$#" -ne 1 ]]; then\n  echo "usage: $0 subnet-prefix" >&2\n  exit 2\nfi\n\n'
        'subnet="$1"\nseq 1 254 | xargs -P 48 -I{} bash -c \'\n  ip="$1.$2"\n'
        '  timeout 2 bash -c ">/dev/tcp/${ip}/22" && echo "$ip"\n\' _ "$subnet" {}\n'
    )
    path = "scripts/discover_npu_nodes.sh"
    assert [f for f in change({}, {path: script}).findings if f.rule == "NPU125"] == []
    outside = script.replace("seq 1 254", 'seq 1 "$2"')
    assert [(f.path, f.line) for f in change({}, {path: outside}).findings if f.rule == "NPU125"] == [(path, 11)]


def test_npu125_puts_a_rejected_documented_call_on_the_usage_the_change_wrote() -> None:
    """The change added an argument to the usage and left the count: the finding goes on the usage line it wrote
    and names the check (a finding on the untouched check would be dropped from the review)."""
    from tests.fixture_support import FIXTURES, load_case, run_case

    report = run_case(load_case(FIXTURES / "NPU125/change_usage_gains_an_argument"))
    (found,) = [f for f in report.findings if f.rule == "NPU125"]
    assert (found.line, found.related) == (
        3,
        (Related("research/cv/stgcn/scripts/run_distribute_train.sh", 2, "the argument-count check"),),
    )
