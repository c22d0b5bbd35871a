"""NPU115: its fixture cases (tests/fixtures/NPU115/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU115")


from tests.rules.support import file_findings, tree_findings  # noqa: E402


def test_the_spaced_assignment_gets_a_joined_suggestion_and_says_why() -> None:
    found = file_findings("NPU115/bad_build_script", "NPU115")
    severity, suggestion, message = found[("build.sh", 3)]
    assert severity == "error"
    assert suggestion == 'SOC_VERSION="${1:-Ascend910_9382}"'
    assert message.startswith(
        '`SOC_VERSION ="${1:-Ascend910_9382}"`: with a blank before `=` this is not an assignment'
    )
    assert "`set -e` stops the script here" in message
    assert found[("build.sh", 13)][1] == "cd .."


def test_a_block_of_spaced_exports_is_one_finding_with_one_suggestion() -> None:
    found = file_findings("NPU115/bad_install_guide", "NPU115")
    _severity, suggestion, message = found[("installation.md", 18)]
    assert suggestion == "export HCCL_DETERMINISTIC=1\nexport LCCL_DETERMINISTIC=1"
    assert message.endswith("The same on line 19.")
    assert found[("installation.md", 20)][1] == (
        "export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD"
    )


def test_the_glued_then_names_the_if_and_where_the_shell_fails() -> None:
    found = file_findings("NPU115/bad_build_script", "NPU115")
    message = found[("build.sh", 5)][2]
    assert "`then` is glued to the next word" in message
    assert "the `if` opened on line 5 never gets its `then`: the script stops with a syntax error at line 7" in message


def test_a_gpu_only_script_is_not_read() -> None:
    files = {"examples/run_gpu.sh": "#!/bin/bash\nexport NCCL_DEBUG=INFO\nSOC_VERSION =x\n"}
    assert [f for f in tree_findings(files) if f.rule == "NPU115"] == []


def test_event_text_in_a_run_names_the_quoting_and_the_env_variable_to_use() -> None:
    """The message says which quoting the value ends and gives the `env:` line that carries it instead."""
    found = file_findings("NPU115/bad_event_text_in_ascend_job", "NPU115")
    severity, suggestion, message = found[("pr_command.yaml", 15)]
    assert severity == "warning" and suggestion is None
    assert "inside double quotes" in message
    assert message.endswith('(`BODY: ${{ github.event.comment.body }}`) and use `"$BODY"` in the script.')
    assert "unquoted" in found[("pr_command.yaml", 16)][2]


def test_two_glued_options_get_their_blank_back_in_each_layout() -> None:
    found = file_findings("NPU115/bad_glued_options", "NPU115")
    assert {k: v[1] for k, v in found.items()} == {
        ("distributed.md", 6): "msrun --bind_core=True --worker_num=2 --local_worker_num=2 python train.py --config "
        "configs/yolov8n.yaml --is_parallel True",
        ("npu.yml", 12): "          python3 infer.py --batch_size=32 --device_id=0",
        ("run_npu_8p.sh", 3): "torchrun --nnodes=1 --nproc_per_node=8 --master_port=29500 train.py --device npu",
    }
    assert found[("run_npu_8p.sh", 3)][2] == (
        "`--nproc_per_node=8--master_port=29500` is one word: `torchrun` gets `--nproc_per_node` with the value "
        "`8--master_port=29500`, and `--master_port` is never given (a blank is missing before `--master_port`)."
    )
    assert {v[0] for v in found.values()} == {"error"}


def test_assignments_written_with_a_blank_beside_the_equals_sign_are_one_cause_across_blocks_and_files() -> None:
    """Ascend/MindIE-LLM's guides wrote `export ATB_LOG_LEVEL = INFO` in block after block of several READMEs:
    one habit, one comment (the other places listed in it), not one comment per variable."""
    from tests.rules.support import change

    env = "source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
    guide = (
        f"# Ascend NPU inference logs\n\n```shell\n{env}export ASDOPS_LOG_LEVEL = INFO\nexport ASDOPS_LOG_TO_FILE = 1\n"
        "```\n\nThen:\n\n```shell\nexport ATB_LOG_LEVEL = INFO\n```\n"
    )
    test_guide = f"# Ascend NPU model test\n\n```shell\n{env}export MINDIE_LOG_PATH= /tmp/log\n```\n"
    report = change({}, {"docs/npu_logs.md": guide, "tests/README_npu.md": test_guide})
    found = [(f.path, f.line, f.end_line) for f in report.findings if f.rule == "NPU115"]
    assert found == [("docs/npu_logs.md", 5, 6), ("docs/npu_logs.md", 12, 12), ("tests/README_npu.md", 5, 5)]
    assert len({f.cause for f in report.findings if f.rule == "NPU115"}) == 1


def test_an_apostrophe_ends_a_single_quoted_program() -> None:
    """502022240018/MomentSeek's model script ran `docker exec ... python3 -c '` over thirty lines, one a comment
    saying `ModelScope's cache layout`: the apostrophe ends the quoted program and the shell reads the Python after
    it as commands. The rule reported those lines (`source = Path(path)`, an `if` with no `then`: rs-r53, judged
    false); it now says the apostrophe, once. A program without one is not judged. vllm-ascend's MiniMax-M3 guide
    sends `-d '{... "What's the weather ..."}'` with curl: the same cut."""
    from tests.rules.support import change

    program = (
        "import shutil\nfrom pathlib import Path\n"
        "# Normalize ModelScope{q}s cache layout\nsource = Path('/m')\nif not source.exists():\n"
        "    shutil.copytree('/a', '/b')\n"
    )
    script = "#!/bin/bash\nset -e\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\npython3 -c '\n{p}'\necho done\n"
    broken = script.replace("{p}", program.replace("{q}", "'"))
    found = [(f.line, f.message) for f in change({}, {"scripts/prepare_npu.sh": broken}).findings if f.rule == "NPU115"]
    assert found == [
        (
            7,
            "The `'` in `ModelScope's` ends the single-quoted text opened on line 4 (the program of `python3 -c`): "
            "the shell reads what follows as words and commands, up to the next `'`, and the quoted text is cut "
            "here. Write the apostrophe another way (`'\\''` closes, adds one and reopens), or pass the text in a "
            "heredoc.",
        )
    ]
    fine = script.replace("{p}", program.replace("{q}", ""))
    assert [f for f in change({}, {"scripts/prepare_npu.sh": fine}).findings if f.rule == "NPU115"] == []
    guide = (
        "# MiniMax on Ascend NPU\n\nServe it with vLLM-Ascend and `torch_npu`.\n\n```bash\n"
        "curl http://localhost:8000/v1/chat/completions \\\n"
        "  -H 'Content-Type: application/json' \\\n  -d '{\n"
        '    "messages": [{"role": "user", "content": "What\'s the weather?"}],\n'
        '    "max_tokens": 300\n  }\'\n```\n'
    )
    found = [
        (f.line, f.message.split(":", 1)[0])
        for f in change({}, {"docs/minimax_npu.md": guide}).findings
        if f.rule == "NPU115"
    ]
    assert found == [(9, "The `'` in `\"What's` ends the single-quoted text opened on line 8 (an argument of `curl`)")]
