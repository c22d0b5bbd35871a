"""NPU124: its fixture cases (tests/fixtures/NPU124/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU124")


from npu_review.checks.model import Severity  # noqa: E402
from tests.rules.support import file_findings, line_findings  # noqa: E402


def test_each_misspelling_comes_with_the_line_spelled_right() -> None:
    found = sorted(line_findings("NPU124/bad_soc_and_tool_names", "NPU124"))
    assert found == [
        (
            3,
            Severity.WARNING,
            "`npu-sim` is no Ascend command: `npu-smi` is, so running this line gives `npu-sim: command not found`.",
            "The driver and firmware are runtime dependencies. Run `npu-smi info` to check the NPUs.",
        ),
        (
            4,
            Severity.WARNING,
            "`ascedn910_93` is no Ascend SOC name: `ascend910_93` is (the letters are misspelled), so a build or a "
            "check that compares SOC names does not recognise it.",
            '    echo "    --soc supported values: ascend910b ascend910_93 ascend950, e.g. A3 (--soc=ascend910_93)"',
        ),
        (
            8,
            Severity.WARNING,
            "`Acsend910B1` is no Ascend SOC name: `Ascend910B1` is (the letters are misspelled), so a build or a "
            "check that compares SOC names does not recognise it.",
            "      - run: bash build.sh --soc=Ascend910B1",
        ),
    ]


def test_each_cann_install_path_comes_with_the_path_cann_installs() -> None:
    found = file_findings("NPU124/bad_cann_install_paths", "NPU124")
    assert found == {
        ("Dockerfile.npu", 3): (
            "warning",
            'RUN . /usr/local/Ascend/nnal/atb/set_env.sh && python3 -c "import torch_npu"',
            "CANN installs no `nnal/atb/setenv.sh`: the environment script there is `nnal/atb/set_env.sh`, so "
            "sourcing this fails and CANN's environment is not set.",
        ),
        ("run_npu.sh", 3): (
            "warning",
            "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
            "`ascend_toolkit` is no folder CANN installs: CANN installs that package under `ascend-toolkit`, so "
            "this path does not exist.",
        ),
        # One finding per name and file: the guide's second mention (line 9) is the same cause.
        ("infer_310p.md", 6): (
            "warning",
            "   source xxxx/ascend-toolkit/set_env.sh",
            "CANN installs no `ascend-toolkit/setenv.bash`: the environment script there is "
            "`ascend-toolkit/set_env.sh`, so sourcing this fails and CANN's environment is not set.",
        ),
    }


def test_another_accelerators_tool_is_no_misspelled_ascend_command() -> None:
    """flagos-ai/build-infra's Kunlunxin guide runs `xpu-smi` (Kunlunxin's and Intel's device tool), one letter from
    Ascend's `npu-smi`: a real command of another vendor (rs-r37, judged false three times). `npu-sim` still is."""
    from tests.fixture_support import audit

    guide = (
        "# Kunlunxin XPU and Ascend NPU runtimes\n\n```bash\nxpu-smi\nnpu-smi info\nnpu-sim info\n```\n\n"
        "| vendor | check |\n|---|---|\n| Kunlunxin | `xpu-smi` |\n| Ascend | `npu-smi info` |\n"
    )
    found = [(f.line, f.message) for f in audit({"docs/runtime.md": guide}).findings if f.rule == "NPU124"]
    assert found == [
        (6, "`npu-sim` is no Ascend command: `npu-smi` is, so running this line gives `npu-sim: command not found`.")
    ]
