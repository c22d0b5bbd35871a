"""NPU317: its fixture cases (tests/fixtures/NPU317/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU317")


from tests.rules.support import file_findings  # noqa: E402


def test_a_python_caller_is_a_warning_a_workflow_an_error() -> None:
    python = file_findings("NPU317/bad_run_with_sh_by_setup", "NPU317")[("generate_code.sh", 4)]
    assert python[0] == "warning"
    assert "setup.py:6 runs this script with `subprocess` with `sh`" in python[2]
    workflow = file_findings("NPU317/bad_workflow_runs_sh", "NPU317")[("run_npu_ut.sh", 3)]
    assert workflow[0] == "error"


def test_a_sh_script_a_config_runs_with_bash() -> None:
    """CenZhihan/LLM4AscendC's `scripts/oat_check.sh` says `#!/bin/sh` and uses `${PIPESTATUS[0]}`, and its only
    caller, `.pre-commit-config.yaml`, runs `bash scripts/oat_check.sh` (sweep-r23, judged false; rs-r49 called the
    same finding noise). Without that config the `#!/bin/sh` line is what runs it."""
    from tests.rules.support import change

    script = (
        "#!/bin/sh\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        'mvn -q verify | tee oat.log\nexit "${PIPESTATUS[0]}"\n'
    )
    hook = "repos:\n  - repo: local\n    hooks:\n      - id: oat\n        entry: bash scripts/oat_check.sh\n"
    alone = [(f.path, f.line) for f in change({}, {"scripts/oat_check.sh": script}).findings if f.rule == "NPU317"]
    assert alone == [("scripts/oat_check.sh", 2)]
    head = {"scripts/oat_check.sh": script, ".pre-commit-config.yaml": hook}
    assert [f for f in change({}, head).findings if f.rule == "NPU317"] == []


def test_bash_syntax_in_a_branch_only_a_bash_sh_system_takes() -> None:
    """A copy of Huawei's NPU driver installer (apulis/Apulis-AI-Platform, `#!/bin/sh`) tests `[[ ... =~ Enterprise
    ]]` only in its `SUSE*)` arm, and `source` only where `/etc/os-release` says EulerOS: /bin/sh is bash on both, and
    dash never runs those lines (sweep-r25, judged false). The same test in the Ubuntu arm meets dash."""
    from tests.rules.support import change

    script = (
        "#!/bin/sh\n. /usr/local/Ascend/driver/ascend_install.info\n"
        "case ${DISTRIB_ID} in\n"
        "    SUSE*)\n        if [[ $(lsb_release -d -s) =~ Enterprise ]]; then\n            echo sles\n        fi\n"
        "        ;;\n"
        "    Ubuntu)\n        echo ubuntu\n        ;;\nesac\n"
        "if grep -qi euleros /etc/os-release; then\n    source /etc/profile\nfi\n"
    )
    path = "driver/script/run_driver_dkms_install.sh"
    assert [f for f in change({}, {path: script}).findings if f.rule == "NPU317"] == []
    ubuntu = script.replace("echo ubuntu", "[[ -f /etc/lsb-release ]] && echo ubuntu")
    assert [(f.path, f.line) for f in change({}, {path: ubuntu}).findings if f.rule == "NPU317"] == [(path, 10)]
