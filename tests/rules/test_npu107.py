"""NPU107 default-change-without-npu-sweep: its fixture cases (tests/fixtures/NPU107/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.analysis.pyargs import PyInterface, passes_option
from npu_review.checks.model import Severity
from npu_review.checks.parsers.sh import Word
from tests.fixture_support import FIXTURES, load_case, run_case
from tests.rules.support import (
    case_findings_change,
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU107")


def test_npu107_lists_the_unpinned_npu_megatron_scripts() -> None:
    [(line, sev, message, sug)] = line_findings("NPU107/bad_vanilla_mbridge_flip", "NPU107")
    assert (line, sev, sug) == (10, Severity.NOTICE, None)
    assert "from True to False" in message
    assert "verl/trainer/config/ref/megatron_ref.yaml:3" in message  # the other place it changed
    assert "tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh:6" in message
    assert "run_qwen3_30b_grpo_mindspeed.sh" not in message  # pins the old value
    assert "run_qwen3_8b_fsdp2_npu.sh" not in message  # FSDP: not concerned
    assert "run_qwen2_7b_megatron.sh" not in message  # GPU only


def test_npu107_is_silent_on_audits() -> None:
    case = load_case(FIXTURES / "NPU107/bad_vanilla_mbridge_flip")
    case.base = None
    assert not [f for f in run_case(case).findings if f.rule == "NPU107"]


# -- a Python entry script's device option ---------------------------------------------------------------------


def test_npu107_device_option_lists_the_ascend_launchers_as_related_places() -> None:
    [f] = [f for f in case_findings_change("NPU107/bad_mindspore_device_target_flipped_to_gpu") if f.rule == "NPU107"]
    assert (f.path, f.line, f.severity) == ("research/cv/deepid/train.py", 10, Severity.WARNING)
    assert [(r.path, r.line, r.note) for r in f.related] == [
        ("research/cv/deepid/scripts/run_distribute_train.sh", 19, "runs train.py without --device_target"),
        ("research/cv/deepid/scripts/run_standalone_train_ascend.sh", 18, "runs train.py without --device_target"),
    ]
    assert "run_standalone_train_gpu.sh" not in f.message  # passes --device_target=GPU, and is no Ascend script
    assert "run_eval_ascend.sh" not in f.message  # runs eval.py
    # (the standalone script pins the option in its fine-tune branch, line 16, not in its other one)


def test_npu107_device_option_is_silent_on_audits() -> None:
    case = load_case(FIXTURES / "NPU107/bad_mindspore_device_target_flipped_to_gpu")
    case.base = None
    assert not [f for f in run_case(case).findings if f.rule == "NPU107"]


def test_npu107_device_option_keeps_its_own_severity_beside_the_hydra_notice() -> None:
    found = {(f.path, f.severity) for f in case_findings_change("NPU107/bad_torch_device_npu_to_cuda")}
    assert found == {("train.py", Severity.WARNING)}
    [(_, sev, _, _)] = line_findings("NPU107/bad_vanilla_mbridge_flip", "NPU107")
    assert sev == Severity.NOTICE


def _words(*raw: str) -> tuple[Word, ...]:
    return tuple(Word(w, 1) for w in raw)


def test_passes_option_reads_forms_abbreviations_and_unknown_words() -> None:
    iface = PyInterface("train.py", 1, frozenset({"--help", "--device_target", "--data_url"}), True)
    opts = ("-dt", "--device_target")
    assert passes_option(iface, opts, _words("--device_target=Ascend"))
    assert passes_option(iface, opts, _words("-dt", "Ascend"))
    assert passes_option(iface, opts, _words("--device", "Ascend"))  # argparse expands the prefix
    assert passes_option(iface, opts, _words("--data_url", "x", '"$@"'))  # what it hands on is unknown
    assert passes_option(iface, opts, _words("$EXTRA"))
    assert not passes_option(iface, opts, _words("--data_url", "$DATA"))  # the variable is --data_url's value
    assert not passes_option(iface, opts, _words("--data_url=x", ">", "log.txt"))
    assert not passes_option(iface, opts, _words("&&", "--device_target", "Ascend"))  # another command's
    no_abbrev = PyInterface("train.py", 1, iface.options, False)
    assert not passes_option(no_abbrev, opts, _words("--device", "Ascend"))
    own = PyInterface("train.py", 1, iface.options | {"--device"}, True)
    assert not passes_option(own, opts, _words("--device", "Ascend"))  # the parser's own `--device`
