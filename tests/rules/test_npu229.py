"""NPU229 device-variant-mismatch: its fixture cases (tests/fixtures/NPU229/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU229")


def test_npu229_reports_the_live_line_not_the_commented_one() -> None:
    got = file_findings("NPU229/bad_myst_tab", "NPU229")
    assert list(got) == [("multi-node_dsv3.2.md", 11)]
    assert "its tag's `a3` token" in got[("multi-node_dsv3.2.md", 11)][2]


def test_npu229_names_the_token_the_tag_has() -> None:
    got = file_findings("NPU229/bad_mkdocs_tab", "NPU229")
    assert "its tag's `910b` token" in got[("Qwen3.md", 6)][2]


def test_npu229_names_the_called_workflows_device_input() -> None:
    got = file_findings("NPU229/bad_reusable_call", "NPU229")
    assert "its `soc_version` input keeps its default in every entry" in got[("release_npu.yml", 11)][2]


def test_npu229_says_an_image_build_pushes_one_image_under_each_tag() -> None:
    got = file_findings("NPU229/bad_docker_build_push", "NPU229")
    assert "pushes it under a different device's tag" in got[("image_npu.yml", 19)][2]
    assert "with the script's default SOC" not in got[("image_npu.yml", 34)][2]


def test_npu229_reads_a_job_indented_under_another_as_a_job() -> None:
    got = file_findings("NPU229/bad_job_indented_under_another", "NPU229")
    assert list(got) == [("build_and_release.yml", 26)]


def test_an_image_labelled_for_its_own_device_in_a_guide_for_another_is_a_listed_choice() -> None:
    """xLLM-AI/xllm-docs' guides "with xLLM on Ascend A3 devices" list `# A2 x86`, `# A2 arm` and `# A3 arm` over
    the three images' pulls: the A2 ones are labelled for A2 (rs-r74, judged false four times). An A2 image without
    a label in the A3 guide is still the wrong image."""
    from tests.fixture_support import audit

    guide = (
        "# Inference with xLLM on Ascend A3 Devices\n\n## 1. Pull the Docker Image\n\n```bash\n"
        "# A2 x86\ndocker pull quay.io/jd_xllm/xllm-ai:xllm-dev-a2-x86-cann9-20260605\n"
        "# A3 arm\ndocker pull quay.io/jd_xllm/xllm-ai:xllm-dev-a3-arm-cann9-20260605\n```\n\n"
        "```bash\nsudo docker run -it -v /usr/local/Ascend/driver:/usr/local/Ascend/driver \\\n"
        " -v /usr/local/sbin/npu-smi:/usr/local/sbin/npu-smi \\\n"
        " quay.io/jd_xllm/xllm-ai:xllm-dev-a3-arm-cann9-20260605\n```\n"
    )
    assert [f for f in audit({"docs/deepseek_v4.md": guide}).findings if f.rule == "NPU229"] == []
    unlabelled = guide.replace("# A2 x86\n", "")
    found = [f.line for f in audit({"docs/deepseek_v4.md": unlabelled}).findings if f.rule == "NPU229"]
    assert found == [6]


def test_npu229_names_the_scripts_default_soc_and_where_it_is_set() -> None:
    got = file_findings("NPU229/bad_build_default_soc", "NPU229")
    assert list(got) == [("build_cache.yml", 26)]
    message = got[("build_cache.yml", 26)][2]
    assert "its runner `linux-aarch64-a2-8`" in message
    assert "`Ascend910_9392` (`SOC_VERSION`, build.sh:24), a SOC of A3" in message


def test_npu229_reports_a_pull_request_that_adds_the_call_not_one_that_leaves_it() -> None:
    from tests.rules.support import change, got

    script = 'SOC_VERSION="${1:-Ascend910_9392}"\ncmake -B build -DSOC_VERSION="$SOC_VERSION"\n'
    job = (
        "on: push\njobs:\n  a2:\n    runs-on: linux-aarch64-a2-8\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: bash build.sh{arg}\n"
    )
    wf = ".github/workflows/cache.yml"
    added = change({"build.sh": script}, {"build.sh": script, wf: job.format(arg="")})
    assert [(p, n) for p, n, _, _ in got(added, "NPU229")] == [(wf, 7)]
    fixed = change({"build.sh": script, wf: job.format(arg="")}, {"build.sh": script, wf: job.format(arg=" x")})
    assert got(fixed, "NPU229") == []


def test_a_run_without_arguments_skips_the_option_loops_and_takes_the_branches_it_can_decide() -> None:
    from npu_review.checks.analysis.scripts import no_argument_state

    text = (
        "set -euo pipefail\n"  # options only: the arguments stay none
        "MODE=full\n"
        "while [[ $# -gt 0 ]]; do case $1 in --soc) SOC=$2; shift ;; esac; shift; done\n"
        'for a in "$@"; do MODE=$a; done\n'
        'case "$MODE" in\n  full) SOC="${1:-Ascend910_9392}" ;;\n  *) SOC=Ascend910B1 ;;\nesac\n'
        "if [ -f /etc/a3 ]; then OTHER=x; fi\n"
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
    )
    state, in_functions = no_argument_state(text, lambda word: frozenset({"PATH"}) if "toolkit" in word else None)
    assert state is not None and in_functions == frozenset()
    assert state.vals["SOC"] == frozenset({"Ascend910_9392"}) and state.lines["SOC"] == 6
    assert state.vals["MODE"] == frozenset({"full"})
    assert state.vals["OTHER"] is None  # set on one branch of an undecided test: the caller's on the other
    assert state.vals["PATH"] is None


def test_a_run_without_arguments_that_always_exits_or_sources_a_project_file_is_unknown() -> None:
    from npu_review.checks.analysis.scripts import no_argument_state

    usage = 'if [ -z "$1" ]; then echo usage; exit 1; fi\nSOC=Ascend910B1\n'
    assert no_argument_state(usage, lambda word: None)[0] is None
    done = "SOC=Ascend910B1\nif [ -f /etc/a3 ]; then echo bad; exit 2; fi\nmake\nexit 0\n"
    state, _ = no_argument_state(done, lambda word: None)
    assert state is not None and state.vals["SOC"] == frozenset({"Ascend910B1"})
    sourced = "SOC=Ascend910B1\n. ./soc.sh\n"
    state, _ = no_argument_state(sourced, lambda word: None)
    assert state is not None and state.vals["SOC"] is None
    in_function = "SOC=Ascend910B1\npick() { SOC=$(cat /etc/soc); }\npick\n"
    assert no_argument_state(in_function, lambda word: None)[1] == frozenset({"SOC"})
    one_line_case = 'case "$M" in a) SOC=Ascend910_9392 ;; *) SOC=Ascend910B1 ;; esac\n'
    assert no_argument_state(one_line_case, lambda word: None)[0] is None
