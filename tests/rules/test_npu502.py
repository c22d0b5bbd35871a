"""NPU502 broken-repo-link: its fixture cases (tests/fixtures/NPU502/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree, Severity
from tests.rules.support import (
    change,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU502")


def _guesses(files: dict[str, str], guide: str) -> dict[int, str]:
    """What NPU502 says after "does not exist in this tree." on each line of `guide`, added as `docs.md` beside
    `files`: its "did you mean", or its general advice."""
    head = {**files, "docs.md": guide}
    changes = {"docs.md": FileChange("docs.md", ChangeStatus.ADDED, added_lines=frozenset(range(1, 9)))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(files), changes=changes))
    return {f.line: f.message.split("tree. ", 1)[1].split("?")[0] for f in report.findings if f.rule == "NPU502"}


def test_npu502_stale_references_in_workflows_and_docs_are_listed_on_the_rename() -> None:
    old, new = "docker/ascend/Dockerfile.ascend_9.0.0_a2", "docker/ascend/Dockerfile.ascend_9.1.0_a2"
    workflow = (
        "on:\n  pull_request:\n    paths:\n"
        f"      - '{old}'\n      - '!{old}'\n      - 'docker/ascend/**'\n"
        "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: docker build -f {old}_v0.8.0 .\n"
    )
    readme = f"| 910b | [Dockerfile](https://github.com/verl-project/verl/blob/main/{old}) |\n"
    base = {old: "FROM cann:9.0.0-910b\n", ".github/workflows/docs.yml": workflow, "docs/README.md": readme}
    head = {new: "FROM cann:9.1.0-910b\n", ".github/workflows/docs.yml": workflow, "docs/README.md": readme}
    change = FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes={new: change}))
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert (f.path, f.line) == (new, 1)
    assert ".github/workflows/docs.yml:4" in f.message and "docs/README.md:1" in f.message
    assert "docs.yml:5" not in f.message and "docs.yml:11" not in f.message


def test_a_copied_workflow_naming_its_original_gets_no_suggestion_of_the_rename() -> None:
    """A change renames e2e_megatron.yml to e2e_megatron_vllm.yml and adds e2e_megatron_sglang.yml, copied from
    it, whose `paths:` still names the original: the copy's own trigger, which should name the copy. Rewriting
    it to the renamed file (as for any other stale reference) would trigger the sglang job on the vllm workflow
    (verl ebb21b7f, fixed in cb3dcc6 to the copy's own name)."""
    workflow = (
        "name: e2e_megatron\n"
        "on:\n"
        "  pull_request:\n"
        "    paths:\n"
        '      - "verl/**"\n'
        '      - ".github/workflows/e2e_megatron.yml"\n'
        "jobs:\n"
        "  e2e:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: bash tests/e2e/run_megatron.sh\n"
    )
    report = change(
        {".github/workflows/e2e_megatron.yml": workflow},
        {
            ".github/workflows/e2e_megatron_vllm.yml": workflow.replace(
                ".github/workflows/e2e_megatron.yml", ".github/workflows/e2e_megatron_vllm.yml"
            ),
            ".github/workflows/e2e_megatron_sglang.yml": workflow.replace("e2e_megatron\n", "e2e_megatron_sglang\n")
            .replace("e2e:", "e2e_sglang:")
            .replace("run_megatron.sh", "run_megatron_sglang.sh"),
        },
    )
    found = [(f.path, f.line, f.severity.label, f.message, f.suggestion) for f in report.findings if f.rule == "NPU502"]
    assert found == [
        (
            ".github/workflows/e2e_megatron_sglang.yml",
            6,
            "warning",
            "This line still names `.github/workflows/e2e_megatron.yml`, but the change renames "
            "`.github/workflows/e2e_megatron.yml` to `.github/workflows/e2e_megatron_vllm.yml`. If it is this "
            "workflow's own trigger (the file was copied from `.github/workflows/e2e_megatron.yml`), name "
            "`.github/workflows/e2e_megatron_sglang.yml`; else `.github/workflows/e2e_megatron_vllm.yml`.",
            None,
        )
    ]


def test_a_line_that_names_where_the_file_went_is_not_stale() -> None:
    # Ascend/DrivingSDK ee5ffce7: LICENSE moved to docs/zh/LICENSE, and the change updated the README's link, whose
    # text still says LICENSE. Another guide's line that names only the old path is stale.
    old, new = "LICENSE", "docs/zh/LICENSE"
    readme = "# DrivingSDK (Ascend NPU)\n\n## License\nBSD: see [LICENSE](./docs/zh/LICENSE).\n"
    guide = "# Install on Ascend NPU\n\nThe license is in [LICENSE](LICENSE).\n"
    text = "BSD 3-Clause License\n"
    base = {old: text, "README.md": readme.replace("./docs/zh/LICENSE", "LICENSE"), "docs/install.md": guide}
    head = {new: text, "README.md": readme, "docs/install.md": guide}
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1})),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({4})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.severity.label) for f in report.findings if f.rule == "NPU502"] == [(new, 1, "warning")]
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert f.message == (
        "This change renames `LICENSE` to `docs/zh/LICENSE`, but 1 reference still points at the old path: "
        "docs/install.md:3. Update it to `docs/zh/LICENSE`."
    )


def test_a_link_into_a_folder_moved_beside_its_doc_is_judged_from_the_doc_s_folder() -> None:
    """volcengine/veScale 53a113dd moved the old code and docs into `legacy/` with a copy of the old README,
    whose `./docs/...` links now resolve, from `legacy/`, into the moved folders. Read as paths from the root
    they named the renamed files, and rewriting them to `./legacy/docs/...` would break them; the new root
    README's link to the old path is stale."""
    guide, quick = "docs/texts/introduction.md", "docs/texts/quick-start.md"
    old_readme = "# veScale on Ascend NPU\n\n**[Introduction](./docs/texts/introduction.md)**\n"
    base = {"README.md": old_readme, guide: "# Introduction\n", quick: "# Quick start\n"}
    head = {
        "README.md": "# veScale\n\n- **[Introduction](./docs/texts/introduction.md)**\n",
        "legacy/README.md": old_readme,
        "legacy/" + guide: "# Introduction\n",
        quick: "# Quick start\n",
    }
    changes = {
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({1, 3})),
        "legacy/README.md": FileChange("legacy/README.md", ChangeStatus.ADDED, added_lines=frozenset({1, 2, 3})),
        "legacy/" + guide: FileChange("legacy/" + guide, ChangeStatus.RENAMED, old_path=guide),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.message, f.suggestion) for f in report.findings if f.rule == "NPU502"]
    assert found == [
        (
            "README.md",
            3,
            "This line still names `docs/texts/introduction.md`, but the change renames `docs/texts/introduction.md` "
            "to `legacy/docs/texts/introduction.md`.",
            "- **[Introduction](./legacy/docs/texts/introduction.md)**",
        )
    ]


def test_a_name_in_a_directory_sketch_is_not_a_reference() -> None:
    """Ascend/ascend-deployer 12133572 deleted README.md while its guide's directory sketch (`|- README.md`)
    still listed it: a picture of the tree, not a path a reader follows. A command naming it is stale."""
    guide = (
        "# Deploy CANN on Ascend NPU\n\n::\n\n   ascend-deployer\n   |- install.sh\n   |- README.md\n"
        "   └── README.md\n\nRun `cat README.md` first.\n"
    )
    base = {"README.md": "# Deployer\n", "install.sh": "echo\n", "docs/deploy.rst": ""}
    head = {"install.sh": "echo\n", "docs/deploy.rst": guide}
    changes = {
        "README.md": FileChange("README.md", ChangeStatus.DELETED),
        "docs/deploy.rst": FileChange("docs/deploy.rst", ChangeStatus.MODIFIED, added_lines=frozenset(range(1, 11))),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"]
    assert found == [("docs/deploy.rst", 10, "This line still names `README.md`, but the change deletes `README.md`.")]


def test_lines_a_change_leaves_naming_the_scripts_it_moves_are_one_cause() -> None:
    """alibaba/ChatLearn f8a5d3ad moved its training scripts into sub-folders and its README and tutorial kept the
    old paths: one decision left undone, one comment (the other lines its places), each line its own suggestion."""
    a, b = "scripts/train_qwen3_8b_grpo.sh", "scripts/train_qwen3_30b_gspo.sh"
    readme = f"# ChatLearn on Ascend NPU\n\nRun [8B]({a}) or [30B]({b}).\n"
    guide = f"# Multi-node on Ascend NPU\n\n```bash\nbash {a}\n```\n"
    base = {a: "echo 8b\n", b: "echo 30b\n", "README.md": "# ChatLearn\n", "docs/multinode.md": "# Multi-node\n"}
    head = {
        "scripts/fsdp/" + a[8:]: "echo 8b\n",
        "scripts/mcore/" + b[8:]: "echo 30b\n",
        "README.md": readme,
        "docs/multinode.md": guide,
    }
    changes = {
        "scripts/fsdp/" + a[8:]: FileChange("scripts/fsdp/" + a[8:], ChangeStatus.RENAMED, old_path=a),
        "scripts/mcore/" + b[8:]: FileChange("scripts/mcore/" + b[8:], ChangeStatus.RENAMED, old_path=b),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({1, 3})),
        "docs/multinode.md": FileChange("docs/multinode.md", ChangeStatus.MODIFIED, added_lines=frozenset({1, 4})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [f for f in report.findings if f.rule == "NPU502"]
    assert [(f.path, f.line, f.suggestion) for f in found] == [
        ("README.md", 3, "Run [8B](scripts/train_qwen3_8b_grpo.sh) or [30B](scripts/mcore/train_qwen3_30b_gspo.sh)."),
        ("README.md", 3, "Run [8B](scripts/fsdp/train_qwen3_8b_grpo.sh) or [30B](scripts/train_qwen3_30b_gspo.sh)."),
        ("docs/multinode.md", 4, "bash scripts/fsdp/train_qwen3_8b_grpo.sh"),
    ]
    assert len({f.cause for f in found}) == 1


def test_npu502_without_a_profile_one_wrong_link_copied_into_twin_docs_is_one_cause() -> None:
    from npu_review.checks.diffing import changes_between

    intro = "# 在昇腾 NPU 上运行\n\n"
    line = "环境准备见[安装准备](../../environment/README.md)。\n"
    base: dict[str, str | None] = {"samples/a/crop/README.md": intro, "samples/a/paste/README.md": intro}
    head: dict[str, str | None] = {p: intro + line for p in base}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)))
    found = [(f.path, f.line, f.severity.label) for f in report.findings if f.rule == "NPU502"]
    assert found == [("samples/a/crop/README.md", 3, "warning"), ("samples/a/paste/README.md", 3, "warning")]
    assert len({f.cause for f in report.findings if f.rule == "NPU502"}) == 1


def test_npu502_without_a_profile_links_into_one_folder_are_one_cause_however_written() -> None:
    """`./docs/x.md` and `docs/x.md#anchor`, both written from a doc under docs/ (so both into docs/docs/): one
    folder, one cause, one comment."""
    from npu_review.checks.diffing import changes_between

    base: dict[str, str | None] = {"docs/quickstart.md": "# Ascend NPU 快速开始\n", "docs/build.md": "# Build\n"}
    head = dict(base)
    head["docs/quickstart.md"] = (
        "# Ascend NPU 快速开始\n\n见[编译](./docs/build.md)。\n\n另见[说明](docs/build.md#x)。\n"
    )
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)))
    found = [(f.path, f.line, f.severity.label) for f in report.findings if f.rule == "NPU502"]
    assert found == [("docs/quickstart.md", 3, "warning"), ("docs/quickstart.md", 5, "warning")]
    assert len({f.cause for f in report.findings if f.rule == "NPU502"}) == 1


def test_a_bare_name_the_move_keeps_is_a_name_in_prose_and_a_path_in_a_command() -> None:
    """alibaba/Pai-Megatron-Patch 8686b9c6 moved its `Megatron-LM-250328` checkout into `backends/megatron/`; its
    patch guides say in prose which Megatron the patch fits (`Megatron-LM-250328`, still its name after the move):
    not a path. The guides' `cd Megatron-LM-250328` from the root is one, and is stale."""
    old, new = "Megatron-LM-250328", "backends/megatron/Megatron-LM-250328"
    guide = (
        "# Optimizer offloading fix\n\nThe patch fits `Megatron-LM-250328` only (Ascend NPU and GPU).\n\n"
        f"```bash\ncd {old}\ngit apply fix.patch\n```\n"
    )
    base = {old: "6ba97dd\n", "fixes/README.md": guide}
    head = {new: "6ba97dd\n", "fixes/README.md": guide}
    changes = {new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"]
    assert found == [
        (
            new,
            1,
            f"This change renames `{old}` to `{new}`, but 1 reference still points at the old path: "
            f"fixes/README.md:6. Update it to `{new}`.",
        )
    ]


def test_a_did_you_mean_keeps_the_language_and_the_words_of_the_missing_name() -> None:
    """PaddlePaddle/PaddleX's guides: a missing `support_dcu_model_list.md` is not `support_xpu_model_list.md`
    misspelled (another device's list), a missing `x_en.md` is not the Chinese `x.md`; a dropped letter
    (`lassification`), a version bump, another extension and a language marker the name gained (verl's
    `precision_alignment.md` -> `precision_alignment_zh.md`) are what a guess is for."""
    guide = (
        "# Ascend NPU support\n\n"
        "[DCU models](models/support_dcu_model_list.md)\n"
        "[Forecasting](models/forecasting_en.md)\n"
        "[Classification](models/image_lassification_en.md)\n"
        "[Image](docker/Dockerfile.ascend_9.0.1_a3)\n"
        "[Profiling](models/profiling.md)\n"
        "[Debugger](models/ascend_debugger_zh.md)\n"
    )
    files = {
        "models/support_xpu_model_list.md": "# XPU\n",
        "models/forecasting.md": "# 预测\n",
        "models/image_classification_en.md": "# Classification\n",
        "docker/Dockerfile.ascend_9.1.0_a3": "FROM cann:9.1.0\n",
        "models/profiling_zh.md": "# 性能\n",
        "models/ascend_debugger_zh.rst": "调试\n",
    }
    assert _guesses(files, guide) == {
        3: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
        4: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
        5: "Did you mean `models/image_classification_en.md`",
        6: "Did you mean `docker/Dockerfile.ascend_9.1.0_a3`",
        7: "Did you mean `models/profiling_zh.md`",
        8: "Did you mean `models/ascend_debugger_zh.rst`",
    }


def test_the_text_of_a_link_that_works_is_a_label_not_a_reference() -> None:
    """PaddlePaddle/ERNIE fd360a7f renamed `.metas/ERNIE_milestone.png` to `ERNIE_milestone_zh.png`; the English
    README shows `![./.metas/ERNIE_milestone.png](./.metas/ERNIE_milestone_en.png)`, an image that is there whose
    alt text keeps the old name: nothing to update (the suggestion put the Chinese image's name in the English
    README). The Chinese README's image link to the old path is stale."""
    old, new = ".metas/ERNIE_milestone.png", ".metas/ERNIE_milestone_zh.png"
    en = "# ERNIE on Ascend NPU\n\n![./.metas/ERNIE_milestone.png](./.metas/ERNIE_milestone_en.png)\n"
    zh = "# ERNIE（昇腾 NPU）\n\n![ERNIE](./.metas/ERNIE_milestone.png)\n"
    images = {".metas/ERNIE_milestone_en.png": "png\n"}
    base = {**images, old: "png\n", "README.en.md": en, "README.md": zh}
    head = {**images, new: "png\n", "README.en.md": en, "README.md": zh}
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, old_path=old),
        "README.en.md": FileChange("README.en.md", ChangeStatus.MODIFIED, added_lines=frozenset({3})),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({3})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.suggestion) for f in report.findings if f.rule == "NPU502"]
    assert found == [("README.md", 3, "![ERNIE](./.metas/ERNIE_milestone_zh.png)")]


def test_a_translation_is_no_rename_and_a_file_moved_beside_a_doc_is_named_from_there() -> None:
    """THUDM/CogVLM2 45e3eb7d deleted `basic_demo/README_en.md` and added `basic_demo/README_zh.md` (the English text
    went into README.md): no rename, so the README's link to the deleted guide gets no suggestion of the Chinese one.
    f6e1d147 moved `requirements.txt` into `basic_demo/`, whose README runs `pip install -r requirements.txt` from
    there: not stale. A guide elsewhere that runs it from the root is."""
    demos = (
        "```bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\npython cli_demo.py\npython web_demo.py\n"
        "python openai_api_demo.py\n```\n"
    )
    en = "# CogVLM2 basic demo (Ascend NPU)\n\n" + demos
    zh = "# CogVLM2 基础示例（昇腾 NPU）\n\n" + demos
    readme = "# CogVLM2\n\n+ [basic_demo](basic_demo/README_en.md) - CLI and WebUI on Ascend NPU\n"
    base = {"basic_demo/README_en.md": en, "README.md": readme}
    head = {"basic_demo/README_zh.md": zh, "README.md": readme + "\nAscend NPU support.\n"}
    changes = {
        "basic_demo/README_en.md": FileChange("basic_demo/README_en.md", ChangeStatus.DELETED),
        "basic_demo/README_zh.md": FileChange(
            "basic_demo/README_zh.md", ChangeStatus.ADDED, added_lines=frozenset(range(1, 10))
        ),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({3})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.message, f.suggestion) for f in report.findings if f.rule == "NPU502"]
    assert found == [
        (
            "README.md",
            3,
            "The link `basic_demo/README_en.md` points to `basic_demo/README_en.md` (relative to this file), which "
            "does not exist in this tree. Point it at the current path, or at a release tag for a file that only "
            "exists in an old release.",
            None,
        )
    ]

    demo = "# Basic demo on Ascend NPU\n\n```bash\npip install -r requirements.txt\npython cli_demo.py\n```\n"
    guide = "# Install on Ascend NPU\n\n```bash\npip install -r requirements.txt\n```\n"
    base = {"requirements.txt": "torch_npu\n", "basic_demo/README.md": demo, "docs/install.md": guide}
    new = "basic_demo/requirements.txt"
    head = {new: "torch_npu\n", "basic_demo/README.md": demo, "docs/install.md": guide}
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, old_path="requirements.txt"),
        "basic_demo/README.md": FileChange("basic_demo/README.md", ChangeStatus.MODIFIED, added_lines=frozenset({4})),
        "docs/install.md": FileChange("docs/install.md", ChangeStatus.MODIFIED, added_lines=frozenset({4})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.suggestion) for f in report.findings if f.rule == "NPU502"]
    assert found == [("docs/install.md", 4, "pip install -r basic_demo/requirements.txt")]


def test_a_changelog_s_lines_are_history_not_references() -> None:
    """kubeflow/trainer d1615374 split CHANGELOG.md into CHANGELOG/CHANGELOG-1.x.md, whose old entries carry pull
    request titles such as "chore: update CHANGELOG.md": what was, not a reference to update. A guide that tells
    the reader to read CHANGELOG.md is stale."""
    entries = "# Changelog (Ascend NPU support)\n\n- chore: update CHANGELOG.md (#1432)\n"
    guide = "# Releases on Ascend NPU\n\nSee CHANGELOG.md for what changed.\n"
    base = {"CHANGELOG.md": entries, "docs/releases.md": guide}
    head = {"CHANGELOG/CHANGELOG-1.x.md": entries, "docs/releases.md": guide}
    changes = {
        "CHANGELOG.md": FileChange("CHANGELOG.md", ChangeStatus.DELETED),
        "CHANGELOG/CHANGELOG-1.x.md": FileChange(
            "CHANGELOG/CHANGELOG-1.x.md", ChangeStatus.ADDED, added_lines=frozenset({1, 2, 3})
        ),
        "docs/releases.md": FileChange("docs/releases.md", ChangeStatus.MODIFIED, added_lines=frozenset({3})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line) for f in report.findings if f.rule == "NPU502"]
    assert found == [("docs/releases.md", 3)]


def test_a_line_about_the_deletion_and_a_docusaurus_static_image_are_not_broken() -> None:
    """vllm-project/semantic-router: a change that deletes a workflow and writes its plan ("Delete
    `.github/workflows/skill-review.yml`") describes the deletion; a line it writes telling the reader to run the
    deleted file is stale. The blog's `/img/x.png` is Docusaurus' `website/static/img/x.png`: not broken."""
    gone = ".github/workflows/skill-review.yml"
    plan = f"# CI plan (Ascend NPU jobs)\n\n- Delete `{gone}`.\n- Then run `{gone}` by hand.\n"
    base = {gone: "on: [push]\n", "docs/plan.md": "# CI plan\n"}
    head = {"docs/plan.md": plan}
    changes = {
        gone: FileChange(gone, ChangeStatus.DELETED),
        "docs/plan.md": FileChange("docs/plan.md", ChangeStatus.MODIFIED, added_lines=frozenset({1, 2, 3, 4})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU502"] == [("docs/plan.md", 4)]

    post = "# A new chapter on Ascend NPU\n\n![models](/img/blog/models.png)\n![gone](/img/blog/gone.png)\n"
    files = {
        "website/docusaurus.config.ts": "export default {};\n",
        "website/static/img/blog/models.png": "png\n",
        "website/blog/2026-07-21-post.md": post,
    }
    path = "website/blog/2026-07-21-post.md"
    changes = {path: FileChange(path, ChangeStatus.ADDED, added_lines=frozenset({1, 2, 3, 4}))}
    report = run(ChangeSet(head=MemoryTree(files), base=MemoryTree({}), changes=changes))
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU502"] == [(path, 4)]


def test_a_renamed_file_naming_itself_and_a_command_after_a_cd_are_not_stale() -> None:
    """Ascend/MindIE-Motor 28a7e9f6 renamed `LICENSE` to `LICENSE.md`, whose licence text tells the reader to
    "create a file named LICENSE": the document's own words, not a reference (rs-r19, judged false). A guide that
    still sends the reader to LICENSE is stale."""
    licence = "# Mulan PSL v2 (Ascend NPU)\n\n2. Create a file named LICENSE at the top level of your package.\n"
    readme = "# Motor on Ascend NPU\n\nThe terms are in LICENSE.\n"
    base = {"LICENSE": licence, "README.md": readme}
    head = {"LICENSE.md": licence, "README.md": readme + "\nNPU support.\n"}
    changes = {
        "LICENSE.md": FileChange("LICENSE.md", ChangeStatus.RENAMED, old_path="LICENSE", added_lines=frozenset({1})),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({5})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert (f.path, f.line) == ("LICENSE.md", 1)
    assert f.message == (
        "This change renames `LICENSE` to `LICENSE.md`, but 1 reference still points at the old path: README.md:3. "
        "Update it to `LICENSE.md`."
    )


def test_a_bare_name_in_a_command_run_after_a_cd_is_that_folder_s() -> None:
    """Ascend/MindIE-Motor dcfcc2cd moved `setup.py` into `mindie_motor/python/`; its security guide clones
    PyTorch, `cd pytorch`, and a later block runs `python3 setup.py bdist_wheel`: PyTorch's setup.py (rs-r19,
    judged false). A guide that runs it from the root, or from a clone of this repository, is stale."""
    new = "mindie_motor/python/setup.py"
    security = (
        "# Build PyTorch with TLS for Ascend NPU\n\n```shell\ngit clone https://github.com/pytorch/pytorch.git\n"
        "cd pytorch\n```\n\nThen build the wheel:\n\n```shell\npython3 setup.py bdist_wheel\n```\n"
    )
    build = "# Build on Ascend NPU\n\n```bash\npython3 setup.py bdist_wheel\n```\n"
    clone = (
        "# Install on Ascend NPU\n\n```bash\ngit clone https://github.com/Ascend/MindIE-Motor.git\n"
        "cd MindIE-Motor\npython3 setup.py bdist_wheel\n```\n"
    )
    docs = {"docs/security.md": security, "docs/build.md": build, "docs/clone.md": clone}
    base = {"setup.py": "import setuptools\n", **docs}
    head = {new: "import setuptools\n", **docs}
    changes = {new: FileChange(new, ChangeStatus.RENAMED, old_path="setup.py", added_lines=frozenset({1}))}
    changeset = ChangeSet(
        head=MemoryTree(head), base=MemoryTree(base), changes=changes, repository="Ascend/MindIE-Motor"
    )
    (f,) = [f for f in run(changeset).findings if f.rule == "NPU502"]
    assert f.message == (
        "This change renames `setup.py` to `mindie_motor/python/setup.py`, but 2 references still point at the old "
        "path: docs/build.md:4, docs/clone.md:6. Update them to `mindie_motor/python/setup.py`."
    )


def test_an_agent_skill_s_links_resolve_from_the_repository_root() -> None:
    """RLinf/RLinf 0c919fc3 (rs-r20, judged false): a Claude Code skill's SKILL.md links
    `.claude/skills/test-install/driver.py`, which the agent reading it at the repository root finds there. The same
    link in a guide under docs/ is broken, and so is a skill's link that resolves from nowhere."""
    skill = (
        "---\nname: test-install\n---\n\nOn Ascend NPU runners, run\n"
        "[.claude/skills/test-install/driver.py](.claude/skills/test-install/driver.py) and\n"
        "[the checker](.claude/skills/test-install/check.py).\n"
    )
    guide = "# Install on Ascend NPU\n\nRun [the driver](.claude/skills/test-install/driver.py).\n"
    head = {
        ".claude/skills/test-install/SKILL.md": skill,
        ".claude/skills/test-install/driver.py": "print('ok')\n",
        "docs/install.md": guide,
    }
    report = change({".claude/skills/test-install/driver.py": "print('ok')\n"}, head)
    found = [(f.path, f.line) for f in report.findings if f.rule == "NPU502"]
    assert found == [(".claude/skills/test-install/SKILL.md", 7), ("docs/install.md", 3)]


def test_a_missing_admonition_icon_is_a_notice() -> None:
    """Docs converted by Huawei's documentation tool put `public_sys-resources/icon-note.gif` beside each note;
    Ascend/MindIE-Motor, Ascend/MindIE-SD and Ascend/msmodeling left the icons out (rs-r19, rs-r22: judged noise,
    the page reads the same). A missing figure is still a warning."""
    guide = (
        "# Deploy on Ascend NPU\n\n![](public_sys-resources/icon-note.gif) **Note:** set the NPU count first.\n\n"
        "![architecture](figures/arch.png)\n"
    )
    report = change({}, {"docs/zh/deploy.md": guide})
    found = [(f.line, f.severity.label) for f in report.findings if f.rule == "NPU502"]
    assert found == [(3, "notice"), (5, "warning")]


def test_a_vendored_project_s_links_out_of_its_folder_are_not_judged() -> None:
    """ascend-ai-coding/awesome-ascend-skills ecdcd5b (rs-r23, judged false): a skill synced into
    `external/cannbot/` links `../../../../models/x.py`, a file of the pypto repository it is installed into. A link
    within the vendored folder that is broken is still reported, as a notice naming the project to fix it in (a
    synced skill set's own broken links, rs-r82, judged noise twice)."""
    skill = (
        "# Tune pypto ops on Ascend NPU\n\nSee [the MLA prolog](../../../../models/deepseek/mla_prolog.py) and\n"
        "[the template](templates/API_REPORT.md).\n"
    )
    report = change({}, {"external/cannbot/ops/pypto-op-perf-tune/tune-incore/SKILL.md": skill})
    found = [(f.path, f.line, f.severity.label) for f in report.findings if f.rule == "NPU502"]
    assert found == [("external/cannbot/ops/pypto-op-perf-tune/tune-incore/SKILL.md", 4, "notice")]
    assert report.findings[0].message.endswith(
        "This doc is a copy of another project's (`external/cannbot/`): fix it there."
    )


def test_links_written_from_another_folder_are_one_cause() -> None:
    """ascend-ai-coding/awesome-ascend-skills 58058b4 (rs-r23, judged noise after the first): each "Related Skills"
    link of a skill lacks the `../` its text shows, so every one points into the skill's own folder; one mistake,
    one comment, with where the links do resolve."""
    skill = (
        "# npu-smi cert manage (Ascend NPU)\n\n## Related Skills\n\n- [../query/SKILL.md](query/SKILL.md)\n"
        "- [../monitor/SKILL.md](monitor/SKILL.md)\n- [missing](nowhere/SKILL.md)\n"
    )
    base = "skills/npu-smi-cert"
    head = {
        f"{base}/manage/SKILL.md": skill,
        f"{base}/query/SKILL.md": "# query\n",
        f"{base}/monitor/SKILL.md": "# monitor\n",
    }
    found = [f for f in change({}, head).findings if f.rule == "NPU502"]
    assert [f.line for f in found] == [5, 6, 7]
    # One doc's broken links are one cause (the third, a link to nowhere, joins it: one comment names them all).
    assert found[0].cause == found[1].cause == found[2].cause
    assert "From the folder above this doc's, the same link reaches `skills/npu-smi-cert/query/SKILL.md`" in (
        found[0].message
    )


def test_a_docs_broken_links_are_one_cause_and_its_twin_joins() -> None:
    """DeepLink-org/DLSlime (rs-r24, judged noise after the first): a new docs index links ten docs never
    committed, in several folders: one comment for the doc, not one per folder. Its translation, linking the same
    docs, is the same cause; another doc's own broken link is not."""
    index = (
        "# DLSlime docs (Ascend NPU)\n\n- [Reactor](design/reactor-design.md)\n"
        "- [Summary](implementation/summary.md)\n- [State](project/current-state.md)\n"
    )
    zh = "# DLSlime 文档 (Ascend NPU)\n\n- [Reactor](design/reactor-design.md)\n- [总结](implementation/summary.md)\n"
    other = "# Ascend NPU setup\n\nSee [the FAQ](faq/npu.md).\n"
    report = change({}, {"docs/README.md": index, "docs/README_zh.md": zh, "docs/setup.md": other})
    found = {(f.path, f.line): f for f in report.findings if f.rule == "NPU502"}
    assert sorted(found) == [
        ("docs/README.md", 3),
        ("docs/README.md", 4),
        ("docs/README.md", 5),
        ("docs/README_zh.md", 3),
        ("docs/README_zh.md", 4),
        ("docs/setup.md", 3),
    ]
    assert {f.severity for f in found.values()} == {Severity.WARNING}
    lead = found[("docs/README.md", 3)].cause
    assert {f.cause for (p, _), f in found.items() if p != "docs/setup.md"} == {lead}
    assert found[("docs/setup.md", 3)].cause != lead


def test_a_link_into_what_the_repository_ignores_names_no_missing_file() -> None:
    """hicann/skills a71f1643 (rs-r28, judged false): a README links `doc/01_quickstart.md`, which its folder's
    `.gitignore` ignores (a script unpacks it from a committed archive); hicann/cann-bench 597a915e (rs-r28, noise):
    a guide links a spec under `docs/superpowers/`, which the root `.gitignore` ignores. A file git ignores is never
    committed. A link beside them that no `.gitignore` covers is still reported."""
    readme = (
        "# easyasc on Ascend NPU\n\nRun `agent/scripts/init.sh` first, then read "
        "[the quick start](doc/01_quickstart.md) and [the API](api/reference.md).\n"
    )
    guide = "# Self-hosted CANN runner (Ascend NPU)\n\nDesign: [spec](../superpowers/specs/runner.md)\n"
    head = {
        ".gitignore": "*.log\ndocs/superpowers/\n",
        "ops-lab/easyasc/.gitignore": "legacy\ndoc\ndoc_cn\n",
        "ops-lab/easyasc/README.md": readme,
        "docs/guide/runner.md": guide,
    }
    report = change({}, head)
    found = [(f.path, f.line, f.message.split(" points")[0]) for f in report.findings if f.rule == "NPU502"]
    assert found == [("ops-lab/easyasc/README.md", 3, "The link `api/reference.md`")]


def test_a_template_s_links_are_written_for_where_it_is_filled_in() -> None:
    """hicann/skills 9efb8fd5 (rs-r28, judged false twice): a doc-generating skill's
    `references/operator-readme-template.md` links `./zh/invocation/quick_op_invocation.md`, which resolves in the
    operator repository the README is written into. A guide beside it with the same link is still judged."""
    template = "# {op} (Ascend NPU)\n\nSee [quick invocation](./zh/invocation/quick_op_invocation.md).\n"
    head = {
        "skills/docs-gen/references/operator-readme-template.md": template,
        "skills/docs-gen/templates/api.md": template,
        # (a guide, titled as one: a title with a placeholder makes a template of any doc)
        "skills/docs-gen/references/guide.md": template.replace("# {op}", "# Operators"),
    }
    found = [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU502"]
    assert found == [("skills/docs-gen/references/guide.md", 3)]


def test_a_link_whose_line_says_the_page_is_to_come_is_on_purpose() -> None:
    """hicann/cann-bench 57de6af8 (rs-r28, judged noise): a docs index row links `spec/api_spec.md` and says it is
    still to be written (`（待补充）`); the row above, with no such word, still gets its missing link reported."""
    index = (
        "# CANN bench docs (Ascend NPU)\n\n| doc | about |\n|---|---|\n"
        "| [benchmark_spec.md](spec/benchmark_spec.md) | the benchmark's rules |\n"
        "| [api_spec.md](spec/api_spec.md) | the operator API schema（待补充） |\n"
        "| [faq.md](faq.md) | FAQ (TBD) |\n"
    )
    found = [(f.path, f.line) for f in change({}, {"docs/README.md": index}).findings if f.rule == "NPU502"]
    assert found == [("docs/README.md", 5)]


def test_a_licence_s_text_names_no_file() -> None:
    """Ascend/msprof-analyze fd04dd02 (rs-r29, judged false): a change replacing `LICENSE` by `LICENSE.md` leaves
    the Mulan licence's own "create a file named LICENSE": legal boilerplate, not a reference."""
    mulan = "Mulan Permissive Software License v2\n\nTo apply it, create a file named LICENSE in the root.\n"
    apache = "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n"
    base = {"LICENSE": apache, "README.md": "# msprof (Ascend NPU)\n"}
    head = {"LICENSE.md": mulan, "README.md": "# msprof (Ascend NPU)\n"}
    assert [f for f in change(base, head).findings if f.rule == "NPU502"] == []


def test_a_bare_name_without_extension_in_prose_is_a_word() -> None:
    """Ascend/mspti 7d955fa2 (rs-r29, judged false): renaming `License` to `LICENSE` leaves the README's prose
    ("the License of each model") and its heading "## License"; a command naming the old file is still stale."""
    readme = (
        "# mspti (Ascend NPU)\n\nMind the License of each model.\n\n## License\n\n[LICENSE]({})\n\n"
        "```bash\ncat License\n```\n"
    )
    base = {"License": "MIT\n", "README.md": readme.format("./License")}
    head = {"LICENSE": "MIT\n", "README.md": readme.format("./LICENSE")}
    changes = {
        "LICENSE": FileChange("LICENSE", ChangeStatus.RENAMED, old_path="License"),
        "README.md": FileChange("README.md", ChangeStatus.MODIFIED, added_lines=frozenset({7})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert (f.path, f.line) == ("README.md", 7)
    assert "README.md:10" in f.message
    assert "README.md:3" not in f.message and "README.md:5" not in f.message


def test_an_admonition_icon_kept_in_figures_is_decorative_too() -> None:
    """Ascend/mspti f5c24930 (rs-r29, judged noise): the converter's note icon in the doc's `figures/` folder."""
    doc = "# mspti on Ascend NPU\n\n![](./figures/icon-note.gif) **Note:** set the NPU count first.\n"
    (f,) = [f for f in change({}, {"docs/en/README.md": doc}).findings if f.rule == "NPU502"]
    assert (f.line, f.severity) == (3, Severity.NOTICE)


def test_a_line_saying_the_deleted_file_was_replaced_describes_the_deletion() -> None:
    """shaowenchen/xpu-benchmark 268d96bc (rs-r30, judged false): the change deletes `gpu/inference/config.yaml` and
    its README's update notes say "`gpu/inference/config.yaml` (now replaced with direct vLLM command)". A line
    it writes telling the reader to edit the file is stale."""
    readme = (
        "# xpu-benchmark (Ascend NPU and GPU)\n\n"
        "- `gpu/inference/config.yaml` (now replaced with direct vLLM command)\n"
        "- edit `gpu/inference/config.yaml` to set the model\n"
    )
    base = {"gpu/inference/config.yaml": "benchmarks: {}\n", "README.md": "# xpu-benchmark (Ascend NPU and GPU)\n"}
    head = {"README.md": readme}
    found = [f for f in change(base, head).findings if f.rule == "NPU502"]
    assert [(f.path, f.line) for f in found] == [("README.md", 4)]


def test_an_attribute_browsers_ignore_is_no_link() -> None:
    """Ascend/msprof 87f9422e (rs-r30, judged false): rendered HTML pasted into a README keeps GitHub's
    `data-canonical-src` beside the badge's `src`; only `src` and `href` are links."""
    readme = (
        '# msprof (Ascend NPU)\n\n<a href="https://gitcode.com/Ascend/msinsight"><img src="https://camo.example/x"'
        ' data-canonical-src="./docs/zh/figures/helper.png"></a>\n<img src="./docs/zh/figures/missing.png">\n'
    )
    found = [(f.path, f.line) for f in change({}, {"README.md": readme}).findings if f.rule == "NPU502"]
    assert found == [("README.md", 4)]


def test_an_archive_and_a_dated_plan_record_what_was() -> None:
    """vllm-ascend/vllm_ascend_dashboard 4334f10d and 0ef1c24c (rs-r30, judged noise six times): a rename leaves
    its old path in `docs/archive/` reports and dated plans (`2026-06-26-log-center.md`), which record what was;
    a current guide naming it is stale."""
    base = {
        "backend/app/main.py": "app = 1\n",
        "docs/archive/review.md": "# Review (Ascend NPU dashboard)\n\nEntry point: `backend/app/main.py`.\n",
        "docs/plans/2026-06-26-log-center.md": "# Plan (Ascend NPU)\n\nEdit `backend/app/main.py`.\n",
        "docs/guide.md": "# Run on Ascend NPU\n\nStart `backend/app/main.py`.\n",
    }
    head = {k: v for k, v in base.items() if k != "backend/app/main.py"}
    head["backend/api/main.py"] = "app = 1\n"
    moved = FileChange("backend/api/main.py", ChangeStatus.RENAMED, "backend/app/main.py", frozenset({1}))
    changes = {"backend/api/main.py": moved}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert "docs/guide.md:3" in f.message
    assert "archive" not in f.message and "2026-06-26" not in f.message


def test_a_shared_licence_header_makes_no_rename_and_comments_and_gitignore_notes_name_nothing() -> None:
    """rs-r31, judged false: hicann/ops-sparse dba9004a deletes `cann_ops_sparse_common.h` and adds an unrelated
    `cann_ops_sparseLt.h` that opens with the same licence header (no rename: the reference to the deleted file
    gets no "update it to" advice); PTO-ISA/SuperNPUBench e5f0cbf6's README says ".DS_Store are gitignored" of the
    file the change deletes; hicann/opbase 03a1185d keeps `<img>` tags inside an HTML comment."""
    licence = "/**\n * Copyright (c) 2026 Huawei.\n * CANN Open Software License 2.0.\n */\n\n"
    old = licence + "#ifndef COMMON_H_\n#define COMMON_H_\n#include <stdint.h>\ntypedef int32_t status_t;\n#endif\n"
    new = licence + '#ifndef SPARSELT_H_\n#define SPARSELT_H_\n#include "sparse.h"\nint lt_init(void);\n#endif\n'
    skill = "# New sparse op on Ascend NPU\n\nInclude `include/cann_ops_sparse_common.h` first.\n"
    base = {"include/cann_ops_sparse_common.h": old, "agent/SKILL.md": skill, ".DS_Store": None}
    head = {
        "include/cann_ops_sparseLt.h": new,
        "agent/SKILL.md": skill,
        "README.md": "# Bench (Ascend NPU)\n\n`.DS_Store` are gitignored now.\n\n<!-- ![cloud](figures/ide.png) -->\n",
    }
    found = [f for f in change(base, head).findings if f.rule == "NPU502"]
    assert [(f.path, f.line) for f in found if f.path == "README.md"] == []
    assert all("cann_ops_sparseLt.h" not in f.message for f in found)


def test_a_folder_the_docs_build_copies_in_is_there_on_the_site() -> None:
    """Tele-AI/TeleChat2 9ca947ef (rs-r33, judged false: repointing the link would break the site): the Read the
    Docs source folder's `conf.py` copies `../../model_cards` in with `shutil.copytree`, so a page's
    `../model_cards/gpt2.md` works on the built site. A link to a folder the build does not copy is reported."""
    conf = "import shutil\n\ncopy_path = ['../../model_cards', '../../feature_cards']\nfor p in copy_path:\n"
    conf += "    shutil.copytree(p, p.split('/')[-1])\n"
    page = "# Using the API on Ascend NPU\n\nSee [gpt2](../model_cards/gpt2.md) and [faq](../faq/npu.md).\n"
    head = {
        "mf/docs/rtd/source_zh_cn/conf.py": conf,
        "mf/docs/rtd/source_zh_cn/docs/practice/Using_Api.md": page,
        "mf/docs/model_cards/gpt2.md": "# GPT-2\n",
    }
    found = [f.message.split(" points")[0] for f in change({}, head).findings if f.rule == "NPU502"]
    assert found == ["The link `../faq/npu.md`"]


def test_a_tree_split_into_self_contained_copies_names_each_copy_s_own_file() -> None:
    """mindspore-ai/graphengine ce3b1fee split its tree into `910/` and `910b/`, two self-contained copies: each
    copy's `scripts/readme.md` says the image is built from "scripts/env/Dockerfile", its own copy's file, which is
    there; git paired the old Dockerfile with the `910/` copy as a rename, and the rule sent the `910b` readme to
    `910/scripts/env/Dockerfile` (rs-r35, judged false). A README at the root still naming the old path is stale."""
    guide = "# GE on Ascend\n\n- `-b`: build the CANN image from scripts/env/Dockerfile\n"
    df = "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.0.0-910b\n"
    readme = "# GE\n\nThe Ascend image is built from scripts/env/Dockerfile.\n"
    base = {"scripts/env/Dockerfile": df, "scripts/readme.md": guide, "README.md": readme}
    head = {
        "910/scripts/env/Dockerfile": df,
        "910/scripts/readme.md": guide,
        "910b/scripts/env/Dockerfile": df,
        "910b/scripts/readme.md": guide,
        "README.md": readme,
    }
    added = frozenset({1, 2, 3})
    changes = {
        "910/scripts/env/Dockerfile": FileChange(
            "910/scripts/env/Dockerfile", ChangeStatus.RENAMED, old_path="scripts/env/Dockerfile"
        ),
        "910/scripts/readme.md": FileChange(
            "910/scripts/readme.md", ChangeStatus.RENAMED, old_path="scripts/readme.md"
        ),
        "910b/scripts/env/Dockerfile": FileChange("910b/scripts/env/Dockerfile", ChangeStatus.ADDED, added_lines={1}),
        "910b/scripts/readme.md": FileChange("910b/scripts/readme.md", ChangeStatus.ADDED, added_lines=added),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.rule, f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        (
            "NPU502",
            "910b/scripts/readme.md",  # (the rename adds no line: the change's first added line carries it)
            3,
            "This change renames `scripts/env/Dockerfile` to `910/scripts/env/Dockerfile`, but 1 reference still "
            "points at the old path: README.md:3. Update it to `910/scripts/env/Dockerfile`.",
        )
    ]


def test_a_note_of_where_a_moved_text_came_from_is_no_reference() -> None:
    """Sunye1213106/AscendC-Pilot 0cda9bb moved its skills' reference docs into per-action METHOD.md files, each
    opening with "Domain content migrated from skills-src/.../x.md" (and so did its generated copies): a record of
    the move, and the rule listed every one as stale (rs-r36, judged false). A guide still sending the reader to
    the old path is stale."""
    old, new = "skills-src/tg-init/references/audit.md", "skills-src/actions/tg-init/audit/METHOD.md"
    text = "# Audit on Ascend\n\nRun the CANN checks.\n"
    method = "# audit (migrated)\n\n> Domain content migrated from skills-src/tg-init/references/audit.md.\n\n" + text
    guide = "# tg-init on Ascend NPU\n\nThe checklist is in skills-src/tg-init/references/audit.md.\n"
    base = {old: text, "docs/guide.md": guide}
    head = {new: method, "generated/codex/METHOD.md": method, "docs/guide.md": guide}
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1, 2, 3})),
        "generated/codex/METHOD.md": FileChange(
            "generated/codex/METHOD.md", ChangeStatus.ADDED, added_lines=frozenset(range(1, 8))
        ),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.rule, f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        (
            "NPU502",
            new,
            1,
            f"This change renames `{old}` to `{new}`, but 1 reference still points at the old path: "
            f"docs/guide.md:3. Update it to `{new}`.",
        )
    ]


def test_a_sentence_saying_a_file_was_deleted_may_start_on_the_line_above() -> None:
    """flagos-ai/PyTorch-Plugin-FL's NPU plan: "The prototype source ... have been deleted (...);" then, on the next
    line, "to review them, see `docs/prototype.cc` ... in git history": the note of the deletion, not a stale
    reference (rs-r37, judged false). A guide still running the file is stale."""
    old = "docs/ascend_prototype.cc"
    plan = (
        "# Ascend NPU plan\n\n- The prototype source has been deleted (no longer needed);\n"
        f"  to review it, see `{old}` in git history.\n"
    )
    guide = f"# Build on Ascend NPU\n\n```bash\ng++ {old} -o proto\n```\n"
    base = {old: "int main() {}\n", "docs/guide.md": "# Build on Ascend NPU\n", "docs/plan.md": "# Ascend NPU plan\n"}
    head = {"docs/guide.md": guide, "docs/plan.md": plan}
    changes = {
        old: FileChange(old, ChangeStatus.DELETED),
        "docs/plan.md": FileChange("docs/plan.md", ChangeStatus.MODIFIED, added_lines=frozenset({2, 3, 4})),
        "docs/guide.md": FileChange("docs/guide.md", ChangeStatus.MODIFIED, added_lines=frozenset({2, 3, 4, 5})),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        ("docs/guide.md", 4, f"This line still names `{old}`, but the change deletes `{old}`.")
    ]


def test_a_doc_titled_with_a_placeholder_is_a_template() -> None:
    """hicann/ops-sparse's `docs/zh/develop/readme_develop_guide.md` opens with `# {算子名称}算子` and is copied to
    `src/<op>/README.md`, where its `../../docs/zh/develop/x.md` links resolve (rs-r31, judged false). A doc with a
    plain title and the same link is broken."""
    link = "[编译运行](../../docs/zh/develop/compile_and_run_example.md)"
    template = f"# {{算子名称}}算子\n\n在昇腾 NPU 上运行：{link}\n"
    plain = f"# 开发指南\n\n在昇腾 NPU 上运行：{link}\n"
    tree = {"docs/zh/develop/readme_develop_guide.md": template, "docs/zh/develop/guide.md": plain}
    assert [(f.path, f.line) for f in change({}, tree).findings if f.rule == "NPU502"] == [
        ("docs/zh/develop/guide.md", 3)
    ]


def test_a_renamed_file_the_repository_now_ignores_is_the_readers_own() -> None:
    """cosdt/PyTorchInsight e5c0892b renamed `opencode.json` to `opencode.json.example` and ignores `opencode.json`;
    its README says to copy the example and edit `opencode.json` (rs-r41, judged false: the advice to edit the
    example would break the setup). A renamed file nobody ignores is still stale where named."""
    readme = (
        "# Insight on Ascend NPU\n\n```bash\ncp opencode.json.example opencode.json\n```\n\n"
        "编辑 `opencode.json`，填入路径。\n\n运行 `tools/old_check.sh`。\n"
    )
    base = {"opencode.json": "{}\n", "tools/old_check.sh": "echo\n", "README.md": "# Insight on Ascend NPU\n"}
    head = {
        "opencode.json.example": "{}\n",
        ".gitignore": "opencode.json\n",
        "tools/check.sh": "echo\n",
        "README.md": readme,
    }
    found = [(f.path, f.line) for f in change(base, head).findings if f.rule == "NPU502"]
    assert found == [("README.md", 9)]


def test_the_close_name_of_a_broken_link_is_never_the_doc_itself() -> None:
    """yueliang13/cann-ops-adv-vllm's `IncreFlashAttentionV4.md` links `IncreFlashAttentionV3.md`, a page not in the
    tree: "did you mean" named V4, the page itself (rs-r46, judged false). A close name beside it is still offered."""
    v4 = "# IncreFlashAttentionV4 on Ascend NPU\n\nCompatible with [V3](IncreFlashAttentionV3.md).\n"
    guide = "# Ascend NPU operators\n\nSee [the V4 page](IncreFlashAttentionV5.md).\n"
    head = {"ops/ifa/IncreFlashAttentionV4.md": v4, "ops/ifa/README.md": guide}
    found = {f.path: f.message for f in change({}, head).findings if f.rule == "NPU502"}
    assert "Did you mean" not in found["ops/ifa/IncreFlashAttentionV4.md"]
    assert "Did you mean `ops/ifa/IncreFlashAttentionV4.md`?" in found["ops/ifa/README.md"]


def test_a_docsify_site_reads_its_links_from_the_site_root() -> None:
    """jianzhnie/llmtech publishes `docs/` with docsify (its `index.html` loads docsify, `relativePath` left false):
    `docs/ascend/README.md` linking `ascend/install.md` reaches `docs/ascend/install.md` on the site (rs-r45, eleven
    judged false). With `relativePath: true` links resolve from the doc's folder, and a link to nothing is broken."""
    page = (
        '<html><body><div id="app"></div><script>window.$docsify = {{ name: "llmtech"{rel} }}</script></body></html>\n'
    )
    readme = "# Ascend NPU\n\n- [Install](ascend/install.md)\n- [Gone](ascend/gone.md)\n"
    tree = {
        "docs/index.html": page.format(rel=""),
        "docs/ascend/README.md": readme,
        "docs/ascend/install.md": "# Install torch_npu\n",
    }
    found = [(f.path, f.line) for f in change({}, tree).findings if f.rule == "NPU502"]
    assert found == [("docs/ascend/README.md", 4)]
    tree["docs/index.html"] = page.format(rel=", relativePath: true")
    found = [(f.path, f.line) for f in change({}, tree).findings if f.rule == "NPU502"]
    assert found == [("docs/ascend/README.md", 3), ("docs/ascend/README.md", 4)]


def test_a_docsify_site_reads_its_images_from_the_page() -> None:
    """docsify reads an image's path from the page's own folder (the judges of rs-r45 found llmtech's missing
    images so): an image that exists only from the site's root is still missing."""
    page = '<html><script>window.$docsify = { name: "llmtech" }</script></html>\n'
    readme = "# Ascend NPU\n\n![arch](ascend/arch.png)\n"
    tree = {"docs/index.html": page, "docs/ascend/README.md": readme, "docs/ascend/arch.png": "png"}
    assert [(f.path, f.line) for f in change({}, tree).findings if f.rule == "NPU502"] == [("docs/ascend/README.md", 3)]


def test_a_submodule_replaced_by_a_folder_of_the_same_path_is_not_deleted() -> None:
    """Tr1gg3r-11/WebUi b8fbdf1 dropped its `MindSpeed-LLM` submodule and committed the same path as a folder of
    files: the path is still there, and a doc naming it names it (rs-r48, judged false)."""
    note = (
        "# Security note (Ascend NPU)\n\nMindSpeed-LLM 暂时未发布wheel包，入口脚本为"
        "[pretrain_gpt.py](https://gitcode.com/ascend/MindSpeed-LLM/blob/master/pretrain_gpt.py)。\n"
    )
    base: dict[str, str | None] = {"MindSpeed-LLM": "Subproject commit 0123456789abcdef0123456789abcdef01234567\n"}
    head: dict[str, str | None] = {
        "MindSpeed-LLM/README.md": "# MindSpeed-LLM\n",
        "MindSpeed-LLM/SECURITYNOTE.md": note,
    }
    assert [f for f in change(base, head).findings if f.rule == "NPU502"] == []


def test_a_line_that_writes_its_paths_from_the_folder_a_file_moved_into_names_it() -> None:
    """Jedidiah-Zhang/Ascend 33a3940 moved `tests/` into `backend/`; its terminal doc names the console as
    `tests/interactive/console.py` beside `ascend/terminal/executor.py`, which was only ever `backend/...`: the line
    writes its paths from `backend/`, where the old name is the moved file (rs-r48, judged false). A line that
    names root paths still names the old path."""
    old, new = "tests/interactive/console.py", "backend/tests/interactive/console.py"
    doc = (
        "# Ascend NPU terminal\n\n"
        "The console (`tests/interactive/console.py`) runs `ascend/terminal/executor.py` on the NPU.\n\n"
        "Start it with `python tests/interactive/console.py` (see `docs/npu.md`).\n"
    )
    code = "print('npu')\n"
    base = {old: code, "backend/ascend/terminal/executor.py": code, "docs/npu.md": doc}
    head = {new: code, "backend/ascend/terminal/executor.py": code, "docs/npu.md": doc}
    changes = {new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        (
            new,
            1,
            f"This change renames `{old}` to `{new}`, but 1 reference still points at the old path: docs/npu.md:5. "
            f"Update it to `{new}`.",
        )
    ]


def test_no_guess_of_another_item_of_a_numbered_or_lettered_series() -> None:
    """CenZhihan/LLM4AscendC links `asc_copy_l12l0a.md` (not in the tree) and the guess was `asc_copy_l12l0c.md`,
    another API; duoduoyi6/ascendC_debug_agent links figure `api_07_1213_img_001.png` and the guess was
    `api_07_0251_img_001.png`, another page's figure (rs-r49, judged false); nor the close name of a page that
    became a folder of its name (`asc_copy_l12l0a/`), nor a name with a word added (`TINSERT_FP_zh.md` for
    `TINSERT_zh.md`, rs-r55). A version bumped and a typo are still guessed."""
    guide = (
        "# Ascend C APIs on NPU\n\n"
        "[L1 to L0B](api/asc_copy_l12l0b.md)\n"
        "[L1 to L0A](api/asc_copy_l12l0a.md)\n"
        "![DumpTensor](images/api_07_1213_img_001.png)\n"
        "[Image](docker/Dockerfile.ascend_2024_a3)\n"
        "[Fixpipe](api/asc_fixpipe_l0c2ou.md)\n"
        "[TINSERT](api/TINSERT_zh.md)\n"
    )
    files = {
        "api/asc_copy_l12l0c.md": "# L1 to L0C\n",
        "api/asc_copy_l12l0a_mx.md": "# L1 to L0A, MX\n",
        "api/asc_copy_l12l0a/asc_copy_l12l0a_v2.md": "# L1 to L0A\n",
        "images/api_07_0251_img_001.png": "png\n",
        "images/api_07_10018_img_001.png": "png\n",
        "docker/Dockerfile.ascend_2025_a3": "FROM cann:9.1.0\n",
        "api/asc_fixpipe_l0c2out.md": "# Fixpipe\n",
        "api/TINSERT_FP_zh.md": "# TINSERT_FP\n",
    }
    assert _guesses(files, guide) == {
        3: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
        4: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
        5: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
        6: "Did you mean `docker/Dockerfile.ascend_2025_a3`",
        7: "Did you mean `api/asc_fixpipe_l0c2out.md`",
        8: "Point it at the current path, or at a release tag for a file that only exists in an old release.",
    }


def test_a_list_under_a_heading_that_says_removed_records_the_deletion() -> None:
    """BobbyWeng/cannbot-ascendc-vs-pypto 3b3f102 deleted old reports and wrote, in historical_reports/README.md,
    "### Removed (not moved — permanently deleted)" above a list of them: a record of the deletion, not a stale
    reference (rs-r49, judged false). A guide's list under another heading still names a deleted file."""
    old = "reports/device_side_plan.md"
    record = (
        "# Historical reports\n\n## Ascend NPU audits\n\n### Removed (not moved — permanently deleted)\n\n"
        f"- `{old}` — superseded by the current source\n"
    )
    guide = f"# Ascend NPU device side\n\n## Plan\n\n- `{old}` — the plan to follow\n"
    base = {old: "# Plan\n", "docs/guide.md": "# Ascend NPU device side\n", "historical_reports/README.md": "# H\n"}
    head = {"docs/guide.md": guide, "historical_reports/README.md": record}
    changes = {
        old: FileChange(old, ChangeStatus.DELETED),
        "historical_reports/README.md": FileChange(
            "historical_reports/README.md", ChangeStatus.MODIFIED, added_lines=frozenset(range(1, 8))
        ),
        "docs/guide.md": FileChange("docs/guide.md", ChangeStatus.MODIFIED, added_lines=frozenset(range(1, 6))),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        ("docs/guide.md", 5, f"This line still names `{old}`, but the change deletes `{old}`.")
    ]


def test_a_hugo_shortcode_s_source_and_what_an_mdx_comment_holds_are_no_links() -> None:
    """volcano-sh/website writes its blog's figures as `{{<figure library="1" src="x.png">}}`, which its theme reads
    from `static/img/`, and comments one out as `{/* … */}` (rs-r50: seven judged false). A plain image link to a
    file that is not there is still broken."""
    post = (
        "# Volcano on Ascend NPU\n\n"
        '{{<figure library="1" src="volcano_logo.png">}}\n\n'
        '{/* {{<figure src="old_logo.png">}} <img src="old.png"> */}\n\n'
        "{/*\n![multi-line](gone.png)\n*/}\n\n"
        "![arch](kthena/arch.svg)\n"
    )
    head = {"content/en/blog/npu.md": post, "static/img/volcano_logo.png": "png\n"}
    assert [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU502"] == [
        ("content/en/blog/npu.md", 11)
    ]


def test_a_directory_sketch_row_names_files_in_its_folders() -> None:
    """502022240018/MomentSeek e3b7ab9 moved `compose.ascend.yml` into `compose/`; its architecture doc's sketch row
    `├─ compose/   compose.yml / compose.ascend.yml` names the file in that folder (rs-r53, judged false). A command
    run from the root still names the old path."""
    old, new = "compose.ascend.yml", "compose/compose.ascend.yml"
    doc = (
        "# Deploying on Ascend NPU\n\n```text\n├─ compose/                 compose.yml / compose.ascend.yml\n"
        "├─ docker/                  Dockerfile.ascend\n```\n\n```bash\ndocker compose -f compose.ascend.yml up\n```\n"
    )
    base = {old: "services: {}\n", "docs/ARCHITECTURE.md": doc}
    head = {new: "services: {}\n", "docs/ARCHITECTURE.md": doc}
    changes = {new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        (
            new,
            1,
            f"This change renames `{old}` to `{new}`, but 1 reference still points at the old path: "
            f"docs/ARCHITECTURE.md:9. Update it to `{new}`.",
        )
    ]


def test_a_vitepress_route_may_name_a_page_of_a_language_folder() -> None:
    """SwanHubX/SwanLab-Docs is a VitePress site whose config rewrites `zh/` to the site's root: its docs link
    `/guide_cloud/general/quick-start.md`, which is `zh/guide_cloud/general/quick-start.md` (rs-r54, six judged
    false). A route to no page of the site, and the same link in a repository with no VitePress site, are broken."""
    doc = (
        "# Self-hosting on Ascend NPU\n\n"
        "See [quick start](/guide_cloud/general/quick-start.md) and [deploy](/self_host/docker/deploy).\n"
        "See [the missing page](/guide_cloud/general/missing.md).\n"
    )
    pages = {
        "zh/guide_cloud/general/quick-start.md": "# 快速开始\n",
        "zh/self_host/docker/deploy.md": "# 部署\n",
        "zh/self_host/npu.md": doc,
    }
    site = {**pages, ".vitepress/config.mts": "export default { rewrites(id) { return id.slice(3) } }\n"}
    found = [(f.path, f.line) for f in change({}, site).findings if f.rule == "NPU502"]
    assert found == [("zh/self_host/npu.md", 4)]
    plain = [(f.path, f.line) for f in change({}, pages).findings if f.rule == "NPU502"]
    assert plain == [("zh/self_host/npu.md", 3), ("zh/self_host/npu.md", 4)]


def test_a_link_in_a_template_section_is_written_for_another_project() -> None:
    """yangboxin/ascend-agent's `.opencode/agents/gsd-doc-writer.md` gives, between `<template_contributing>` and
    `</template_contributing>`, the text an agent writes into a project's CONTRIBUTING.md, with a link to its
    `CODE_OF_CONDUCT.md` (rs-r58, judged false). The same link outside the section is this doc's own."""
    section = (
        "<template_contributing>\n## CONTRIBUTING.md\n\n"
        'If present: "Please read our [Code of Conduct](CODE_OF_CONDUCT.md) before contributing."\n'
        "</template_contributing>\n"
    )
    doc = "# Doc writer for Ascend projects\n\nWrites the docs of an NPU project.\n\n" + section
    path = ".opencode/agents/doc-writer.md"
    assert [f for f in change({}, {path: doc}).findings if f.rule == "NPU502"] == []
    plain = doc.replace("<template_contributing>\n", "").replace("</template_contributing>\n", "")
    assert [(f.path, f.line) for f in change({}, {path: plain}).findings if f.rule == "NPU502"] == [(path, 7)]


def test_a_deleted_bare_name_is_a_path_only_where_it_is_used_as_one() -> None:
    """huaweicloudDocs/cce 68dd8b0 deletes its `cce` submodule; its guides' `kubernetes.io/ingress.class: cce` and IAM
    actions `cce:*:get` name the service, not the folder (rs-r61, judged false). `cd cce` still names the folder."""
    guide = (
        "# Ingress on CCE (Ascend nodes)\n\n```yaml\nannotations:\n  kubernetes.io/ingress.class: cce\n```\n\n"
        '```json\n{"Action": ["cce:*:get"]}\n```\n'
    )
    # The change (a bulk export) writes the guide anew and deletes the submodule.
    written = frozenset(range(1, 20))
    base = {"cce": "submodule stand-in\n"}
    changes = {
        "cce": FileChange("cce", ChangeStatus.DELETED),
        "docs/ingress.md": FileChange("docs/ingress.md", ChangeStatus.ADDED, added_lines=written),
    }
    report = run(ChangeSet(head=MemoryTree({"docs/ingress.md": guide}), base=MemoryTree(base), changes=changes))
    assert [f for f in report.findings if f.rule == "NPU502"] == []
    used = guide + "\n```bash\ncd cce && git pull\n```\n"
    report = run(ChangeSet(head=MemoryTree({"docs/ingress.md": used}), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU502"] == [("docs/ingress.md", 13)]


def test_a_rename_that_drops_the_extension_s_dot_points_at_the_name_it_meant() -> None:
    """huaweicloudDocs/cce c1eda90 renames `CCE权限管理概述.md` to `CCE权限说明md` (renamed `CCE权限说明.md` a minute
    later): the advice to point the index's link at `CCE权限说明md` would break it (rs-r61, judged false)."""
    old, new = "guide/CCE权限管理概述.md", "guide/CCE权限说明md"
    index = "# CCE on Ascend\n\n- [权限](CCE权限管理概述.md)\n"
    base = {old: "# 权限\n", "guide/index.md": index}
    head = {new: "# 权限\n", "guide/index.md": index}
    changes = {new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"] == [
        (
            new,
            1,
            f"This change renames `{old}` to `{new}`, a name without the `.` before `md` (`guide/CCE权限说明.md`, most "
            "likely), but 1 reference still points at the old path: guide/index.md:3. Update it to "
            "`guide/CCE权限说明.md`.",
        )
    ]


def test_a_file_moved_into_another_folder_and_edited_is_a_move() -> None:
    """huawei-noah/bolt 1e5a5816 deletes `bolt.cmake` and adds `common/cmakes/bolt.cmake`, edited on the way (42%
    alike, no rename in the diff); its FAQ, which the change rewrites, asks about "configuring bolt.cmake" and links
    the new path: the file moved, it was not deleted (rs-r67, judged false). A file of another text is a deletion."""
    old_text = "".join(f"set(BOLT_OPTION_{i} ON)\n" for i in range(10))
    new_text = old_text.replace("ON)", "OFF)", 6) + "".join(f"set(EXTRA_{i} 1)\n" for i in range(4))
    faq = (
        "# FAQ (Ascend NPU builds)\n\n1. Why does configuring bolt.cmake not take effect?\n\n"
        "   See [bolt.cmake](../common/cmakes/bolt.cmake).\n"
    )
    changes = {
        "bolt.cmake": FileChange("bolt.cmake", ChangeStatus.DELETED),
        "common/cmakes/bolt.cmake": FileChange(
            "common/cmakes/bolt.cmake", ChangeStatus.ADDED, added_lines=frozenset(range(1, 15))
        ),
        "docs/FAQ.md": FileChange("docs/FAQ.md", ChangeStatus.ADDED, added_lines=frozenset(range(1, 6))),
    }
    base = {"bolt.cmake": old_text}
    head = {"common/cmakes/bolt.cmake": new_text, "docs/FAQ.md": faq}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [f for f in report.findings if f.rule == "NPU502" and "bolt.cmake`" in f.message] == []
    other = {"common/cmakes/bolt.cmake": "".join(f"project(p{i})\n" for i in range(14)), "docs/FAQ.md": faq}
    report = run(ChangeSet(head=MemoryTree(other), base=MemoryTree(base), changes=changes))
    assert [
        (f.path, f.line) for f in report.findings if f.rule == "NPU502" and "deletes `bolt.cmake`" in f.message
    ] == [("docs/FAQ.md", 3)]


def test_a_bare_name_a_file_beside_the_doc_has_names_that_file() -> None:
    """modelscope/ms-agent 6c863ce5 deletes the root `conf.yaml` and adds `projects/deep_research/conf.yaml`, beside
    the README whose new lines say "the default is `conf.yaml` in the current directory" (rs-r72, judged false). A
    doc elsewhere naming `conf.yaml` still names the deleted root file."""
    lines = "# Deep research on Ascend NPU\n\nThe default is `conf.yaml` in the current directory.\n"
    base: dict[str, str | None] = {"conf.yaml": "search: exa\nkey: x\n"}
    head: dict[str, str | None] = {
        "projects/deep_research/conf.yaml": "engine: arxiv\n",
        "projects/deep_research/README.md": lines,
    }
    assert [f for f in change(base, head).findings if f.rule == "NPU502"] == []
    elsewhere: dict[str, str | None] = {
        "projects/other/README.md": lines,
        "projects/deep_research/conf.yaml": "engine: arxiv\n",
    }
    report = change(base, elsewhere)
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU502"] == [("projects/other/README.md", 3)]


def test_did_you_mean_prefers_the_same_name_in_another_case() -> None:
    """Atlas200dk/sample-handposeRCcar's README links `figures/runstopped.png`; the folder has `runstopped.PNG` and
    `runstop.png` (another figure): the guess was the other figure (rs-r71, judged false)."""
    from tests.fixture_support import audit

    head = {
        "README.md": "# Hand pose RC car on Atlas 200 DK (Ascend 310)\n\n![stopped](figures/runstopped.png)\n",
        "figures/runstopped.PNG": None,
        "figures/runstop.png": None,
    }
    found = [f.message for f in audit(head).findings if f.rule == "NPU502"]
    assert found == [
        "The link `figures/runstopped.png` points to `figures/runstopped.png` (relative to this file), which does "
        "not exist in this tree. Did you mean `figures/runstopped.PNG`? The names differ in case only, which GitHub "
        "and Linux do not ignore. Point it at the current path, or at a release tag for a file that only exists in an "
        "old release."
    ]


def _bulk_move(pages: int) -> list[tuple[str, str, int, str]]:
    """`pages` pages of one folder deleted and the same texts added under new names, with no rename detection (as
    a diff past git's rename limit shows them), and an index that links the first page."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    index = "# Ascend NPU guide\n\nSee [the page](html/page-0001.html) for torch_npu.\n"
    base: dict[str, str | None] = {"docs/index.md": index}
    head: dict[str, str | None] = {"docs/index.md": index, "docs/other.md": "x\n"}
    for i in range(1, pages + 1):
        body = "".join(f"<p>torch_npu operator {i} line {k}</p>\n" for k in range(8))
        base[f"docs/html/page-{i:04d}.html"] = body
        head[f"docs/html/pages-{i:04d}.html"] = body
    case = Case("bulk", Path("."), base, head, set(), [], "", None)
    report = run_case(case, case_config(case))
    assert report.errors == []
    return [(f.rule, f.path, f.line, f.message[:80]) for f in report.findings]


def test_npu502_pairs_deletions_with_additions_below_the_pairing_limit_only() -> None:
    """Deleted and added files paired by their texts cost their product (PTO-ISA/pto-spec a7f9aab, 1,143 deleted and
    1,151 added pages: 430 s, 1.27 GB): past _PAIRING_LIMIT pairs the deletions stay deletions, as git leaves them
    past its rename limit."""
    from npu_review.checks.rules.npu502_broken_repo_link import _PAIRING_LIMIT

    assert _bulk_move(3) == [
        (
            "NPU502",
            "docs/html/pages-0001.html",
            1,
            "This change renames `docs/html/page-0001.html` to `docs/html/pages-0001.html`, b",
        )
    ]
    over = int(_PAIRING_LIMIT**0.5) + 1
    assert _bulk_move(over) == []


def test_a_script_moved_to_another_folder_may_have_to_run_from_there() -> None:
    """drago1234/omni-npu 5ff304a (rs-r81, judged false): the change moves `run_tests.sh` into `tests/`, and the
    summary said to name it there; but the script runs `pytest unit/`, which only resolves from `tests/`, so
    `tests/run_tests.sh` from the top folder fails. A script that finds its own folder needs no such caveat."""
    script = "#!/bin/bash\n# Ascend NPU unit tests (torch_npu)\npytest unit/ -q\n"
    located = '#!/bin/bash\ncd "$(dirname "$0")"\n# Ascend NPU unit tests (torch_npu)\npytest unit/ -q\n'
    doc = "# Tests on Ascend NPU\n\n```bash\nbash run_tests.sh\n```\n"

    def moved(text: str) -> list[tuple[str, int, str]]:
        base = {"run_tests.sh": text, "TEST_SUMMARY.md": doc}
        head = {"tests/run_tests.sh": text + "echo done\n", "TEST_SUMMARY.md": doc}
        n = len(text.splitlines()) + 1
        changes = {
            "tests/run_tests.sh": FileChange(
                "tests/run_tests.sh", ChangeStatus.RENAMED, old_path="run_tests.sh", added_lines=frozenset({n})
            )
        }
        report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
        return [(f.path, f.line, f.message) for f in report.findings if f.rule == "NPU502"]

    summary = (
        "This change renames `run_tests.sh` to `tests/run_tests.sh`, but 1 reference still points at the old path: "
        "TEST_SUMMARY.md:4. Update it to `tests/run_tests.sh`."
    )
    assert moved(script) == [
        (
            "tests/run_tests.sh",
            4,
            summary + " The script moved from the top folder to `tests` and does not find its own folder: if it "
            "names files relative to where it runs, its callers must run it from there (`cd tests && bash "
            "run_tests.sh`).",
        )
    ]
    assert moved(located) == [("tests/run_tests.sh", 5, summary)]
