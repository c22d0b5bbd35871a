"""NPU218 reusable-workflow-input-not-forwarded: its fixture cases, and what they do not say."""

from __future__ import annotations

from npu_review.checks import engine
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.fixture_support import audit
from tests.rules.support import change, fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU218")

_REUSABLE = """\
name: reusable
on:
  workflow_call:
    inputs:
      model:
        type: string
        required: true
    secrets:
      TOKEN:
        required: true
      UPLOAD:
        required: false
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - run: ./run.sh "${{ inputs.model }}"
"""


def _caller(secrets: str) -> str:
    return (
        "name: caller\non: [push]\njobs:\n  a:\n    uses: ./.github/workflows/reusable.yml\n"
        f"    with:\n      model: m\n{secrets}"
    )


def test_a_required_secret_left_out_is_an_error() -> None:
    report = audit({".github/workflows/reusable.yml": _REUSABLE, ".github/workflows/caller.yml": _caller("")})
    assert got(report, "NPU218") == [
        (
            ".github/workflows/caller.yml",
            5,
            "error",
            "This call of `.github/workflows/reusable.yml` does not pass the required secret `TOKEN`: the run fails "
            "before the called workflow starts.",
        )
    ]


def test_inherit_passes_every_secret_and_names_are_case_insensitive() -> None:
    files = {
        ".github/workflows/reusable.yml": _REUSABLE,
        ".github/workflows/caller.yml": _caller("    secrets: inherit\n"),
        ".github/workflows/other.yml": _caller("    secrets:\n      token: ${{ secrets.TOKEN }}\n").replace(
            "model: m", "MODEL: m"
        ),
    }
    assert got(audit(files), "NPU218") == []


def test_a_change_reports_the_gap_it_makes_on_the_call_it_did_not_touch() -> None:
    base = {".github/workflows/reusable.yml": _REUSABLE.replace("      UPLOAD:\n        required: false\n", "")}
    base[".github/workflows/caller.yml"] = _caller("    secrets:\n      TOKEN: ${{ secrets.TOKEN }}\n")
    # the change makes UPLOAD required: the untouched caller now fails
    head = dict(
        base,
        **{
            ".github/workflows/reusable.yml": _REUSABLE.replace(
                "      UPLOAD:\n        required: false\n", "      UPLOAD:\n        required: true\n"
            )
        },
    )
    assert got(change(base, head), "NPU218") == [
        (
            ".github/workflows/caller.yml",
            5,
            "error",
            "This call of `.github/workflows/reusable.yml` does not pass the required secret `UPLOAD`: the run fails "
            "before the called workflow starts.",
        )
    ]
    # a gap that was there before the change is not the change's
    assert got(change(head, dict(head, **{"README.md": "x\n"})), "NPU218") == []


def test_an_input_read_by_bracket_or_by_the_called_workflows_event_is_read() -> None:
    dispatch = """\
name: dispatch
on:
  workflow_dispatch:
    inputs:
      run-slow:
        type: boolean
      branch:
        type: string
jobs:
  a:
    if: ${{ inputs['run-slow'] }}
    uses: ./.github/workflows/called.yml
"""
    called = "name: called\non:\n  workflow_call:\njobs:\n  b:\n    runs-on: x\n    steps:\n"
    called += "      - run: git checkout ${{ github.event.inputs.branch }}\n"
    files = {".github/workflows/dispatch.yml": dispatch, ".github/workflows/called.yml": called}
    assert got(audit(files), "NPU218") == []


def test_npu218_an_input_nothing_reads_is_a_notice_in_an_audit() -> None:
    from npu_review.checks.model import Severity

    wf = (
        "name: nightly\n"
        "on:\n"
        "  workflow_dispatch:\n"
        "    inputs:\n"
        "      vllm_ascend_branch:\n"
        "        type: string\n"
        "jobs:\n"
        "  test:\n"
        "    runs-on: linux-aarch64-a2-1\n"
        "    steps:\n"
        "      - run: pytest tests/e2e\n"
    )
    files = {".github/workflows/nightly.yml": wf}
    audited = [(f.rule, f.line, f.severity) for f in audit(files).findings]
    assert audited == [("NPU218", 5, Severity.NOTICE)]
    written = [(f.rule, f.line, f.severity) for f in change({}, files).findings]
    assert written == [("NPU218", 5, Severity.WARNING)]


def test_keys_of_an_input_indented_one_level_too_shallow_are_no_inputs() -> None:
    """modelscope/DiffSynth-Engine d58228dd wrote the `required:` and `default:` of its `branch` input one level too
    shallow: NPU218 called them two inputs nothing reads, and its advice (read them, or remove them) would have
    dropped what the author meant. An entry whose value is a scalar is no input; a null one (`token:`) is."""
    wf = (
        "name: publish\n"
        "on:\n"
        "  workflow_dispatch:\n"
        "    inputs:\n"
        "      branch:\n"
        "        description: the branch to build for Ascend NPU\n"
        "      required: true\n"
        "      default: 'main'\n"
        "      dry_run:\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: linux-aarch64-a2-1\n"
        "    steps:\n"
        "      - run: ./build.sh ${{ inputs.branch }}\n"
    )
    files = {".github/workflows/publish.yml": wf}
    assert [(f.rule, f.line) for f in change({}, files).findings if f.rule == "NPU218"] == [("NPU218", 9)]


# -- secrets a called workflow reads without declaring them: only `secrets: inherit` passes those ---------------------
_PUBLISH = """\
name: publish (reusable)
on:
  workflow_call:
    inputs:
      publish:
        type: boolean
        default: false
jobs:
  build:
    runs-on: linux-aarch64-a2-1
    steps:
      - run: ./build.sh
        env:
          HF_TOKEN: ${{ secrets.HF_TOKEN || '' }}
  push:
    if: ${{ inputs.publish && github.event_name == 'push' }}
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ secrets.QUAY_PASSWORD }}" | docker login quay.io -u bot --password-stdin
"""


def _publish_call(uses: str, with_: str) -> str:
    return f"name: caller\non: [push]\njobs:\n  a:\n    uses: {uses}\n{with_}"


def test_a_read_behind_an_input_the_call_turns_on_is_needed_and_an_empty_fallback_is_none() -> None:
    files = {
        ".github/workflows/publish.yml": _PUBLISH,
        ".github/workflows/caller.yml": _publish_call(
            "./.github/workflows/publish.yml", "    with:\n      publish: ${{ github.ref == 'refs/heads/main' }}\n"
        ),
        ".github/workflows/off.yml": _publish_call(
            "./.github/workflows/publish.yml", "    with:\n      publish: false\n"
        ),
    }
    found = got(audit(files), "NPU218")
    assert [(path, line, severity) for path, line, severity, _ in found] == [
        (".github/workflows/caller.yml", 5, "warning"),
        (".github/workflows/off.yml", 5, "warning"),
    ]
    assert "reads `secrets.HF_TOKEN`, `secrets.QUAY_PASSWORD` (line 14) without declaring them" in found[0][3]
    assert "reads `secrets.HF_TOKEN` (line 14) without declaring it" in found[1][3]  # the push job is off there


def test_a_call_of_this_repository_by_its_address_is_read_when_the_file_is_here() -> None:
    files = {
        ".github/workflows/publish.yml": _PUBLISH.replace("${{ secrets.HF_TOKEN || '' }}", "none"),
        ".github/workflows/caller.yml": _publish_call(
            "Acme/Serve/.github/workflows/publish.yml@main", "    with:\n      publish: true\n"
        ),
        ".github/workflows/elsewhere.yml": _publish_call(
            "acme/serve/.github/workflows/receive.yml@ci-test", "    with:\n      publish: true\n"
        ),
    }
    cs = ChangeSet(head=MemoryTree(dict(files)), audit=True, repository="acme/serve")
    assert [(f.path, f.line) for f in engine.run(cs).findings if f.rule == "NPU218"] == [
        (".github/workflows/caller.yml", 5)
    ]
    # the repository unknown (a bare mirror): a call by address is another repository's
    assert got(audit(files), "NPU218") == []


def test_a_dispatch_input_read_by_the_repository_s_own_action_is_read() -> None:
    """ModelCloud/GPTQModel 435616a (rs-r23, judged false): `upload_release` of `workflow_dispatch` is read by the
    composite action the release jobs use (`github.event.inputs.upload_release` in
    `.github/actions/release-source-common/action.yml`). An input nothing reads is still reported."""
    release = (
        "name: release\non:\n  workflow_dispatch:\n    inputs:\n      upload_release:\n        type: boolean\n"
        "      npu_build:\n        type: boolean\njobs:\n  build:\n    runs-on: linux-aarch64-a2-1\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - uses: ./.github/actions/release-source-common\n"
    )
    action = (
        "name: release source\nruns:\n  using: composite\n  steps:\n"
        "    - if: github.event.inputs.upload_release == 'true'\n      shell: bash\n      run: echo upload\n"
    )
    head = {".github/workflows/release.yml": release, ".github/actions/release-source-common/action.yml": action}
    found = [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU218"]
    assert found == [(".github/workflows/release.yml", 7)]


def test_a_required_input_nothing_reads_and_a_call_leaving_it_out_are_one_cause_led_by_the_error() -> None:
    """Ascend/Ascend-CI and cosdt/pytorch-integration-tests (rs-r26, rs-r27, the second judged noise): a new
    called workflow declares a required `device` it never reads, and its call leaves `device` out. Dropping the
    input fixes both: one comment, on the call that fails."""
    from npu_review.checks.causes import by_cause

    called = (
        "name: titan\non:\n  workflow_call:\n    inputs:\n      device:\n        type: string\n        required: true\n"
        "      image:\n        type: string\n        required: true\n"
        "jobs:\n  test:\n    runs-on: linux-aarch64-a2-1\n    container:\n      image: ${{ inputs.image }}\n"
        "    steps:\n      - run: python -c 'import torch_npu'\n"
    )
    caller = (
        "name: ascend\non: [pull_request]\njobs:\n  titan:\n    uses: ./.github/workflows/_titan.yml\n"
        "    with:\n      image: ascendai/cann:8.5.0\n"
    )
    report = change({}, {".github/workflows/_titan.yml": called, ".github/workflows/ascend.yml": caller})
    assert got(report, "NPU218") == [
        (
            ".github/workflows/_titan.yml",
            5,
            "warning",
            "Input `device` of `workflow_call` is declared but nothing reads it (no `inputs.device` in the workflow): "
            "the value callers pass is silently ignored.",
        ),
        (
            ".github/workflows/ascend.yml",
            5,
            "error",
            "This call of `.github/workflows/_titan.yml` does not pass the required input `device`: the run fails "
            "before the called workflow starts.",
        ),
    ]
    [comment] = by_cause(f for f in report.findings if f.rule == "NPU218")
    assert (comment.lead.path, comment.lead.line) == (".github/workflows/ascend.yml", 5)
    assert [(f.path, f.line) for f in comment.also] == [(".github/workflows/_titan.yml", 5)]


def test_a_read_behind_a_negated_input_the_call_sets_true_never_runs() -> None:
    """Oneflow-Inc/oneflow's release workflow reads `secrets.READTHEDOCS_TOKEN` only in a step `if: ... &&
    !inputs.is_priv`, and its private and community releases call it with `is_priv: true` (rs-r72, judged false
    twice). A call that leaves `is_priv` false runs the step and needs the secret."""
    reusable = (
        _PUBLISH.replace(
            "      publish:\n        type: boolean\n        default: false\n",
            "      is_priv:\n        type: boolean\n        default: false\n",
        )
        .replace(
            "    if: ${{ inputs.publish && github.event_name == 'push' }}",
            "    if: github.ref == 'refs/heads/master' && !inputs.is_priv",
        )
        .replace("${{ secrets.HF_TOKEN || '' }}", "none")
    )
    files = {
        ".github/workflows/publish.yml": reusable,
        ".github/workflows/priv.yml": _publish_call(
            "./.github/workflows/publish.yml", "    with:\n      is_priv: true\n"
        ),
        ".github/workflows/public.yml": _publish_call(
            "./.github/workflows/publish.yml", "    with:\n      is_priv: false\n"
        ),
    }
    assert [(path, line) for path, line, _severity, _ in got(audit(files), "NPU218")] == [
        (".github/workflows/public.yml", 5)
    ]
