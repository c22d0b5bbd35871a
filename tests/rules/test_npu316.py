"""NPU316 cann-package-file-unknown: its fixture cases (tests/fixtures/NPU316/), suggestions and what is unknown."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU316")


def _found(files: dict[str, str]) -> list[tuple[str, int, str, str, str | None]]:
    return [
        (f.path, f.line, f.severity.label, f.message, f.suggestion) for f in audit(files).findings if f.rule == "NPU316"
    ]


def test_npu316_kernels_renamed_ops_from_8_5_with_the_exact_fix() -> None:
    line = "RUN wget https://x.invalid/Ascend-cann-kernels-910b_8.5.1_linux-aarch64.run"
    assert _found({"Dockerfile": f"FROM ubuntu:22.04\n{line}\n"}) == [
        (
            "Dockerfile",
            2,
            "error",
            "CANN 8.5.1 ships no `Ascend-cann-kernels-910b_8.5.1_linux-aarch64.run`: its operator package for 910b "
            "is `Ascend-cann-910b-ops`. Use `Ascend-cann-910b-ops_8.5.1_linux-aarch64.run`.",
            "RUN wget https://x.invalid/Ascend-cann-910b-ops_8.5.1_linux-aarch64.run",
        )
    ]


def test_npu316_a_naming_the_version_does_not_use_names_the_ones_it_does() -> None:
    script = "#!/bin/bash\nbash ./Ascend-cann-910-ops_8.2.RC1_linux-x86_64.run --install\n"
    [(_, line, sev, message, suggestion)] = _found({"install.sh": script})
    assert (line, sev, suggestion) == (2, "error", "bash ./Ascend-cann-kernels-910_8.2.RC1_linux-x86_64.run --install")
    assert message == (
        "CANN 8.2.RC1 ships no `Ascend-cann-910-ops_8.2.RC1_linux-x86_64.run`: its operator package for 910 is "
        "`Ascend-cann-kernels-910`. Use `Ascend-cann-kernels-910_8.2.RC1_linux-x86_64.run`."
    )
    # 310b has no operator package in 8.1.RC1's data, and 8.1.RC1 names none of them <device>-ops.
    [(_, _, _, message, _)] = _found({"install.sh": "wget x/Ascend-cann-310b-ops_8.1.RC1_linux-aarch64.run\n"})
    assert message == (
        "CANN 8.1.RC1 ships no `Ascend-cann-310b-ops_8.1.RC1_linux-aarch64.run`: its operator packages are named "
        "like `Ascend-cann-kernels-310p`, `Ascend-cann-kernels-910b`, `Atlas-A3-cann-kernels` (that naming is "
        "from CANN 8.5.0)."
    )


def test_npu316_a_version_set_in_the_file_is_read_and_reported_where_the_name_is() -> None:
    got = file_findings("NPU316/bad_renamed_and_misspelled_files", "NPU316")
    sev, suggestion, message = got[("Dockerfile.ascend_8.5.1_a2", 6)]
    assert (sev, suggestion) == ("error", None)  # the line names the file through ${CANN_VERSION}: no exact fix
    assert message.startswith("CANN 8.5.1 ships no `Ascend-cann-kernels-910b_8.5.1_linux-aarch64.run`")
    assert got[("install.md", 5)][0] == "warning"  # docs


def test_npu316_an_atb_package_s_abi_suffix_is_no_architecture() -> None:
    """hpcaitech/Oh-My-Dockerfile's CANN 7.0.0 README lists `Ascend-cann-atb_7.0.0_linux-aarch64_abi0.run`: CANN
    7.0.0 ships its ATB package per C++ ABI (`_abi0`, `_abi1` after the architecture), and the rule read
    `aarch64_abi0` as an architecture CANN builds nothing for (held-out round 8, a clean commit, judged false). An
    architecture misspelled before the suffix is still one."""
    readme = (
        "# CANN 7.0.0 for Ascend NPU\n\n"
        "Download `Ascend-cann-atb_7.0.0_linux-aarch64_abi0.run` and `Ascend-cann-atb_7.0.0_linux-x86_64_abi1.run`.\n"
        "Or `Ascend-cann-atb_7.0.0_linux-86_64_abi0.run`.\n"
    )
    assert _found({"ascend-toolkit/7.0.0/README.md": readme}) == [
        (
            "ascend-toolkit/7.0.0/README.md",
            4,
            "warning",
            "CANN ships no `Ascend-cann-atb_7.0.0_linux-86_64_abi0.run`: its files are built for `aarch64` and "
            "`x86_64` only, not `86_64`. Use `Ascend-cann-atb_7.0.0_linux-x86_64_abi0.run`.",
            "Or `Ascend-cann-atb_7.0.0_linux-x86_64_abi0.run`.",
        )
    ]


def test_operator_package_devices_from_the_facts() -> None:
    """What NPU229 asks of the CANN package facts: the devices an operator package name can be for (its own,
    or every device of its naming when a variable stands for the device), and a device's packages."""
    from npu_review.checks.facts import load
    from npu_review.checks.facts.cann_files import cann_files

    cf = cann_files(load())
    assert cf.operators_devices("Ascend-cann-kernels-310b") == {"310b"}
    assert cf.operators_devices("Atlas-A3-cann-kernels") == {"a3"}
    assert cf.operators_devices("Ascend-cann-910b-ops") == {"a2"}
    assert cf.operators_devices("Ascend-cann-kernels-${chip_type}") == {"a2", "910", "310p"}
    assert cf.operators_devices("Ascend-cann-toolkit") is None
    assert cf.operators_for("a3") == ["Atlas-A3-cann-kernels", "Ascend-cann-A3-ops"]
    assert cf.operators_for("310b") == ["Ascend-cann-310b-ops"]
