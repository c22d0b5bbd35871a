"""NPU111 shell-continuation-broken: its fixture cases (tests/fixtures/NPU111/)."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU111")


def test_a_crlf_file_read_from_git_or_github_is_still_crlf() -> None:  # and every parser gets a plain str
    """The CLI and the App give rules LF text (decode_blob), a CrlfText for a CRLF file: NPU111 leaves those alone
    (their carriage returns are a problem of another kind; blind judging called the findings there noise twice),
    and reports the same text written with LF ends."""
    from npu_review.checks import run
    from npu_review.checks.model import ChangeSet, MemoryTree
    from npu_review.checks.textio import CrlfText, decode_blob

    doc = (
        "# Graph mode\n\n```bash\n"
        "python3 -m verl.trainer.main_ppo trainer.device=npu \\ \n"
        "    actor_rollout_ref.rollout.enforce_eager=False \\\n"
        "    trainer.n_gpus_per_node=8\n```\n"
    )
    from_git = decode_blob(doc.replace("\n", "\r\n").encode())
    assert isinstance(from_git, CrlfText) and from_git == doc

    def npu111(text: str) -> list[tuple[str, int]]:
        report = run(ChangeSet(head=MemoryTree({"docs/graph_mode.md": text}), audit=True))
        return [(f.path, f.line) for f in report.findings if f.rule == "NPU111"]

    assert npu111(from_git) == []
    assert npu111(doc) == [("docs/graph_mode.md", 4)]


def test_a_crlf_workflow_is_parsed_like_any_other() -> None:
    """libyaml's C parser takes an exact str only: a CRLF workflow (a CrlfText from decode_blob) is parsed, and its
    findings are those of the same file with LF ends (verl's CRLF workflows lost their NPU202 findings once)."""
    from npu_review.checks import run
    from npu_review.checks.model import ChangeSet, MemoryTree
    from npu_review.checks.textio import decode_blob

    workflow = (
        "name: e2e\non: [push]\njobs:\n  t:\n    runs-on: linux-aarch64-a2-8\n"
        "    container:\n      image: quay.io/ascend/verl:verl-nightly-a2\n    steps:\n"
        "      - run: bash tests/run_npu.sh\n"
    )
    crlf_text = decode_blob(workflow.replace("\n", "\r\n").encode())

    def findings(text: str) -> list[tuple[str, str, int]]:
        report = run(ChangeSet(head=MemoryTree({".github/workflows/e2e_ascend.yml": text}), audit=True))
        assert report.errors == []
        return [(f.rule, f.path, f.line) for f in report.findings]

    assert findings(crlf_text) == findings(workflow)


def test_a_missing_backslash_on_a_line_with_a_note_asks_to_drop_the_note() -> None:
    """QwenLM/Qwen3-VL 50068df2: each option line of the example ends with a note (`# 512x28x28`) and no `\\`.
    "End this line with ` \\`" would put the `\\` inside the note, and the command would still be cut: the advice
    is to drop the note, since a continued command can hold none. No suggestion."""
    from npu_review.checks import run
    from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree

    doc = (
        "# RealWorldQA on Ascend NPU\n\n```bash\npython run_realworldqa.py infer \\\n"
        "    --min-pixels 393216      # 512x28x28\n    --max-pixels 1003520     # 1280x28x28\n```\n"
    )
    changes = {"docs/rwqa.md": FileChange("docs/rwqa.md", ChangeStatus.ADDED, added_lines=frozenset(range(1, 8)))}
    report = run(ChangeSet(head=MemoryTree({"docs/rwqa.md": doc}), base=MemoryTree({}), changes=changes))
    assert [(f.rule, f.line, f.message, f.suggestion) for f in report.findings] == [
        (
            "NPU111",
            5,
            "This line ends without `\\`, so the command ends here: line 6 (`--max-pixels 1003520     # 1280x28x28`) "
            "runs as a command of its own (`--max-pixels: command not found`) and the options from there on are "
            "lost. Drop the comment and end the line with ` \\` (a `\\` after `#` is part of the comment, and a "
            "continued command can hold no comment).",
            None,
        )
    ]


def test_a_block_headed_as_the_parameters_explanation_is_no_command() -> None:
    """mindspore-ai/docs 7232756e and 2a1b2139 (rs-r29, judged false): a serving guide's block headed
    `# 启动配置参数说明` lists one `--option [meaning]` per line with no `\\` (the runnable command follows in the
    next block). The same lines without that heading are a command cut after its first line."""
    from tests.rules.support import change

    block = (
        "vllm-mindspore serve\n --model=[模型Config/权重路径]\n --trust_remote_code # 使用本地下载的model文件\n"
        " --tensor-parallel-size [TP 并行数]\n"
    )
    doc = "# DeepSeek on Ascend NPU\n\n```bash\n# 启动配置参数说明\n" + block + "```\n"
    assert [f for f in change({}, {"docs/serve.md": doc}).findings if f.rule == "NPU111"] == []
    plain = "# DeepSeek on Ascend NPU\n\n```bash\n" + block + "```\n"
    assert [(f.path, f.line) for f in change({}, {"docs/serve.md": plain}).findings if f.rule == "NPU111"] == [
        ("docs/serve.md", 4)
    ]


def test_an_assignment_whose_value_has_blanks_is_no_command_with_options() -> None:
    """verl-project/verl-omni 491dc75c (rs-r30, judged false: the `\\` it asked for would make the assignment a
    prefix of the next line): a block of config fragments sets `ROLLOUT_NUM_WORKERS=$((TOTAL_GPUS / ROLLOUT_TP))`
    and then shows the override that uses it. A program's line before an override is still cut."""
    from tests.rules.support import change

    frag = (
        "# Scale on Ascend NPU\n\n```bash\nROLLOUT_NUM_WORKERS=$((TOTAL_GPUS / ROLLOUT_TP))\n"
        "actor_rollout_ref.rollout.agent.num_workers=$ROLLOUT_NUM_WORKERS\n```\n"
    )
    assert [f for f in change({}, {"docs/scale.md": frag}).findings if f.rule == "NPU111"] == []
    cmd = frag.replace("ROLLOUT_NUM_WORKERS=$((TOTAL_GPUS / ROLLOUT_TP))", "python3 -m verl.trainer.main_ppo")
    assert [(f.path, f.line) for f in change({}, {"docs/scale.md": cmd}).findings if f.rule == "NPU111"] == [
        ("docs/scale.md", 4)
    ]


def test_a_line_of_assignments_that_does_not_match_is_read_in_linear_time() -> None:
    """flagos-ai/Megatron-LM-FL's `X=${X% }` (a value with a blank inside its braces): the pattern of assignment-only
    lines split such a word in exponentially many ways before failing, seconds per line and a replay that ran 22
    minutes (rs-r37). Run in a child with a deadline the old pattern needs hours to meet on a 68-letter name."""
    import json
    import subprocess
    import sys
    import textwrap

    name = "TRAINING_PARAMS_FROM_CONFIG_" + "A" * 40
    script = (
        f"#!/bin/bash\nexport HCCL_CONNECT_TIMEOUT=1200\n{name}=${{{name}% }} \\\n# the parallel layout\n  --tp 2\n"
    )
    code = textwrap.dedent(
        f"""
        import json
        from npu_review.checks import run
        from npu_review.checks.model import ChangeSet, MemoryTree
        report = run(ChangeSet(head=MemoryTree({{"scripts/run_npu.sh": {script!r}}}), audit=True))
        print(json.dumps([(f.rule, f.line) for f in report.findings]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["NPU111", 4]]


def test_a_backslash_alone_on_its_line_before_a_comment_ends_nothing() -> None:
    """flagos-ai/Megatron-LM-FL's modelopt README separates its commands by a line holding only `\\`, then a comment:
    the `\\` continues an empty command, the comment ends it, and the command below runs whole (rs-r37, judged
    false). A comment inside a command that has words still cuts it."""
    from tests.fixture_support import audit

    readme = (
        "# Ascend NPU\n\n```sh\n"
        "    MLM_MODEL_SAVE=/tmp/ckpt \\\n    ./convert.sh meta-llama/Llama-3.2-1B-Instruct\n\n\\\n"
        "    # Dump base model feature to disk\n"
        "    MLM_MODEL_CKPT=/tmp/ckpt \\\n    ./offline_feature_extract.sh meta-llama/Llama-3.2-1B-Instruct\n\n"
        "torchrun train.py \\\n    # the parallel layout\n    --tp 2\n```\n"
    )
    assert [(f.rule, f.line) for f in audit({"README.md": readme}).findings if f.rule == "NPU111"] == [("NPU111", 13)]


def test_a_semicolon_before_the_backslash_ends_the_command_before_done() -> None:
    """huawei-noah/noah-research's fairseq README: a loop's last command ends `...; \\` and the next line is `done`:
    the `;` ends the command, and `done` closes the loop (rs-r41, judged false). Without the `;`, `done` becomes an
    argument of the command."""
    from tests.fixture_support import audit

    loop = (
        'for SHARD in $(seq -f "%02g" 0 24); do \\\n    fairseq-preprocess \\\n'
        "        --destdir data-bin/shard${SHARD} \\\n"
        "        --workers 20; \\\n    cp dict.en.txt data-bin/shard${SHARD}/{end} \\\ndone\n"
    )
    good = "# Back-translation on Ascend NPU\n\n```bash\n" + loop.replace("{end}", ";") + "```\n"
    bad = "# Back-translation on Ascend NPU\n\n```bash\n" + loop.replace("{end}", "") + "```\n"
    assert [(f.rule, f.line) for f in audit({"README.md": good}).findings if f.rule == "NPU111"] == []
    assert [(f.rule, f.line) for f in audit({"README.md": bad}).findings if f.rule == "NPU111"] == [("NPU111", 8)]


def test_options_described_with_a_colon_are_no_command() -> None:
    """A MindSpore model zoo README lists `train.py 中的主要参数如下:` then `--batch_size: 批次大小`, one option a
    line: a description, and the rule asked for a `\\` after the heading (rs-r41, judged false). Options passed
    on lines of their own after a command that lacks its `\\` are still cut."""
    from tests.fixture_support import audit

    listing = (
        "# BRDNet 在昇腾上训练\n\n```shell\ntrain.py 中的主要参数如下:\n"
        + "--batch_size: 批次大小\n--sigma：噪声\n```\n"
    )
    command = "# BRDNet on Ascend NPU\n\n```shell\npython train.py\n--batch_size 32 \\\n--sigma 15\n```\n"
    assert [f.line for f in audit({"README_CN.md": listing}).findings if f.rule == "NPU111"] == []
    assert [f.line for f in audit({"README.md": command}).findings if f.rule == "NPU111"] == [4]


def test_a_backslash_ending_a_windows_folder_path_continues_nothing() -> None:
    """kunpengcompute/skills' README shows `copy x.skill %USERPROFILE%\\.claude\\skills\\  # Windows` above its
    macOS/Linux twin `cp x.skill ~/.claude/skills/`: the last `\\` separates Windows folders (sweep-r24, judged
    false; removing the comment would join the `cp` line to it). A bash line's `\\` before a comment still cuts."""
    from tests.fixture_support import audit

    block = (
        "# Skills for Ascend NPU reviews\n\n```bash\n"
        "copy review.skill %USERPROFILE%\\.claude\\skills\\  # Windows\n"
        "cp review.skill ~/.claude/skills/  # macOS/Linux\n```\n"
    )
    assert [(f.rule, f.line) for f in audit({"README.md": block}).findings if f.rule == "NPU111"] == []
    bash = block.replace("%USERPROFILE%\\.claude\\skills\\", "~/.claude/skills/ \\")
    assert [(f.rule, f.line) for f in audit({"README.md": bash}).findings if f.rule == "NPU111"] == [("NPU111", 4)]


def test_an_option_line_after_a_container_s_image_goes_before_the_image() -> None:
    """TobyIcetea/LearningNotes' notes run `ctr run ... docker.io/library/busybox:latest busybox2 sh` and put
    `--mount ...` on the next line without a `\\`: a `\\` would hand the option to `sh`, not to `ctr` (rs-r64, judged
    false when the advice was to add one). The line still runs as a command of its own; the advice moves it."""
    from tests.fixture_support import audit

    doc = (
        "# Mounting a folder on Atlas (Ascend NPU)\n\n```bash\n"
        "ctr run --rm -t --env ASCEND_VISIBLE_DEVICES=0 docker.io/library/busybox:latest busybox2 sh\n"
        "--mount type=bind,src=/tmp,dst=/hostdir,options=rbind:rw\n```\n"
    )
    found = [(f.line, f.message, f.suggestion) for f in audit({"README.md": doc}).findings if f.rule == "NPU111"]
    assert found == [
        (
            4,
            "This line ends without `\\`, so the command ends here: line 5 (`--mount "
            "type=bind,src=/tmp,dst=/hostdir…`) runs as a command of its own (`--mount: command not found`) "
            "and the options from there on are lost. The options of `ctr run` go before the image "
            "(`docker.io/library/busybox:latest`): after it they are the container command's arguments, so a `\\` "
            "here would not bring them back. Move the line before the image.",
            None,
        )
    ]


def test_a_placeholder_assignment_and_its_hint_are_a_fill_in() -> None:
    """Megatron-LM's msdp scripts (copied into Gen-Verse/OpenClaw-RL) write `MODEL_GEN_PATH=<PATH_OF_THE_KNOWLEDGE_
    GENERATION> \\ ` over `(e.g., /testseen_knowledge_generations.txt)`: a value for the reader to fill in and its
    hint; taking the blank out would join them into a syntax error (rs-r71, judged false). A real value still cuts."""
    from tests.fixture_support import audit

    script = (
        "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\n"
        "MODEL_GEN_PATH=<PATH_OF_THE_KNOWLEDGE_GENERATION> \\ \n        (e.g., /testseen_knowledge_generations.txt)\n"
        "torchrun main.py --model-gen-path ${MODEL_GEN_PATH}\n"
    )
    assert [f for f in audit({"scripts/eval_npu.sh": script}).findings if f.rule == "NPU111"] == []
    real = script.replace("<PATH_OF_THE_KNOWLEDGE_GENERATION>", "/data/gen.txt")
    assert [f.line for f in audit({"scripts/eval_npu.sh": real}).findings if f.rule == "NPU111"] == [3]
