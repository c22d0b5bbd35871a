"""NPU117: its fixture cases (tests/fixtures/NPU117/)."""

from __future__ import annotations

from tests.rules.support import change, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU117")


from tests.rules.support import case_findings  # noqa: E402


def test_the_unknown_option_names_what_the_parser_knows() -> None:
    found = [f for f in case_findings("NPU117/bad_unknown_option") if f.rule == "NPU117"]
    assert len(found) == 1
    assert found[0].message.startswith(
        "`scripts/npu_ci_install_dependency.sh` does not handle `--torch-version`: its option parser (line 5) knows "
        "`--cann-version`, `-h`, `--help`"
    )
    assert [(r.path, r.line) for r in found[0].related] == [("scripts/npu_ci_install_dependency.sh", 5)]


def test_an_option_named_to_be_rejected_is_a_test_of_the_error_path() -> None:
    """shaowenchen/xpu-benchmark 5cf4bf9e (rs-r30, judged false): a test script runs `./run.sh --invalid || echo
    "Expected error"` to see the NPU script reject it. Another unknown option is still reported."""
    run = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nwhile [ $# -gt 0 ]; do\n  case $1 in\n"
        '    --model) MODEL=$2; shift 2;;\n    -h|--help) echo usage; exit 0;;\n    *) echo "unknown $1"; exit 1;;\n'
        "  esac\ndone\nnpu-smi info\n"
    )
    test = (
        "#!/bin/bash\nset -e\n./run.sh --model /data/m --help\n"
        './run.sh --invalid || echo "Expected error for invalid option"\n'
    )
    head = {"npu/inference/run.sh": run, "npu/inference/test_params.sh": test}
    assert [f for f in change({}, head).findings if f.rule == "NPU117"] == []
    typo = dict(head, **{"npu/inference/test_params.sh": test.replace("--invalid", "--modle")})
    assert [(f.path, f.line) for f in change({}, typo).findings if f.rule == "NPU117"] == [
        ("npu/inference/test_params.sh", 4)
    ]


def test_a_quoted_word_with_a_blank_is_an_argparse_value_not_an_option() -> None:
    """omni-ai-npu/omni-infer 8d9b11f3 (rs-r31, judged false): `--extra-args "--enforce-eager "` hands the string
    to `--extra-args`; argparse never takes a word with a blank for an option. The same word without the blank is
    an unknown option."""
    parser = _argparse_script("--model", "--extra-args")
    script = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        'python tools/start_servers.py --model m --extra-args "--enforce-eager "\n'
    )
    head = {"tools/start_servers.py": parser, "tools/run_npu.sh": script}
    assert [f for f in change({}, head).findings if f.rule == "NPU117"] == []
    bare = dict(head, **{"tools/run_npu.sh": script.replace('--extra-args "--enforce-eager "', "--enforce-eager")})
    assert [(f.path, f.line) for f in change({}, bare).findings if f.rule == "NPU117"] == [("tools/run_npu.sh", 3)]


def test_one_option_spelled_wrong_for_two_scripts_is_one_cause() -> None:
    """mindspore-lab/models (rs-r32, the second judged noise): a new inference README passes `--image-path` to
    `infer.py` and to `lite_infer.py`, both reading `--image_path`: one comment."""
    parser = _argparse_script("--image_path", "--device_target")
    readme = (
        "# Inference on Ascend NPU\n\n```bash\npython infer.py --image-path a.jpg --device_target Ascend\n"
        "python lite_infer.py --image-path a.jpg\n```\n"
    )
    head = {"infer.py": parser, "lite_infer.py": parser, "README_INFERENCE.md": readme}
    found = [f for f in change({}, head).findings if f.rule == "NPU117"]
    assert [(f.path, f.line) for f in found] == [("README_INFERENCE.md", 4), ("README_INFERENCE.md", 5)]
    assert len({f.cause for f in found}) == 1


def test_a_script_that_reads_its_positions_by_the_count_has_no_fixed_slots() -> None:
    """Tele-AI/TeleChat2 6eeade06 (rs-r33, judged false): `msrun_launcher.sh` reads `MASTER_PORT` from `$3` when
    given five arguments and from `$5` when given nine; a nine-argument call passing the port fifth is right. A
    script with one layout still gets its slots checked."""
    launcher = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "if [ $# == 5 ]; then\n  WORKER_NUM=$2\n  MASTER_PORT=$3\n  JOIN=$5\nelif [ $# == 9 ]; then\n"
        "  WORKER_NUM=$2\n  MASTER_ADDR=$4\n  MASTER_PORT=$5\n  JOIN=$8\nfi\nmsrun --worker_num=$WORKER_NUM\n"
    )
    call = 'bash scripts/msrun_launcher.sh "python run.py" 16 8 127.0.0.1 $MASTER_PORT 0 output False 300\n'
    head = {"scripts/msrun_launcher.sh": launcher, "examples/pretrain_npu.sh": "#!/bin/bash\n" + call}
    assert [f for f in change({}, head).findings if f.rule == "NPU117"] == []
    fixed = launcher.replace("if [ $# == 5 ]; then\n", "").split("elif")[0] + "msrun\n"
    two = dict(head, **{"scripts/msrun_launcher.sh": fixed})
    assert [(f.path, f.line) for f in change({}, two).findings if f.rule == "NPU117"] == [
        ("examples/pretrain_npu.sh", 2)
    ]


def test_a_bare_script_name_may_be_the_project_root_s_script() -> None:
    """Tele-AI/TeleChat2 9ca947ef (rs-r33, judged false): a model guide in `research/qwenvl/` runs `python
    convert_weight.py --model qwenvl ...`, resolved there to the folder's own converter, which has no `--model`;
    the project root's `convert_weight.py` takes any option (`parse_known_args`), and the guide means it. Where no
    script of that name above the guide takes the options, the call is reported."""
    import dataclasses

    from npu_review.checks.analysis.references import ascend_command_refs
    from npu_review.checks.config import default_config
    from npu_review.checks.context import Context
    from npu_review.checks.kinds import KindMap
    from npu_review.checks.model import ChangeSet, MemoryTree
    from npu_review.checks.rules.npu117_script_argument_unknown import _python_options

    guide = "# QwenVL on Ascend NPU\n\n```bash\npython convert_weight.py --model qwenvl --input_path a\n```\n"
    own = "mf/research/qwenvl/convert_weight.py"
    files = {
        "mf/convert_weight.py": _argparse_script("--model", known=True),
        own: _argparse_script("--torch_ckpt_path"),
        "mf/research/qwenvl/qwenvl.md": guide,
    }

    def hits(tree: dict[str, str | None]) -> list[tuple[str, int]]:
        ctx = Context(
            ChangeSet(head=MemoryTree(tree)), default_config(), KindMap({}, default_config().facts.file_kinds)
        )
        src = ctx.source("mf/research/qwenvl/qwenvl.md")
        assert src is not None
        (ref,) = [r for r in ascend_command_refs(ctx, src) if r.how == "python"]
        ref = dataclasses.replace(ref, found=own, candidates=(own,))  # resolved as in TeleChat2: the folder's own
        return [(h.path, h.line) for h in _python_options(ctx, ref)]

    assert hits(files) == []
    assert hits({k: v for k, v in files.items() if k != "mf/convert_weight.py"}) == [
        ("mf/research/qwenvl/qwenvl.md", 4)
    ]


def _argparse_script(*options: str, known: bool = False) -> str:
    """A Python script whose argparse parser defines `options` (with `known`, it parses with `parse_known_args`)."""
    adds = "".join(f"parser.add_argument('{o}')\n" for o in options)
    parse = "parse_known_args" if known else "parse_args"
    return f"import argparse\n\nparser = argparse.ArgumentParser()\n{adds}print(parser.{parse}())\n"


def test_no_advice_to_pass_an_option_the_call_passes_already() -> None:
    """A MindSpore model zoo's guide runs `generate_anno.py --num_class 10 --num_per_class 5`; the parser has
    `--num_class` and `--percent`: `--num_class` is the close name, but the call gives it already, and giving it twice
    keeps the last value (rs-r41, judged false). The option stays reported, with the parser's options listed."""
    from tests.fixture_support import audit

    parser = (
        "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--data', type=str)\n"
        "parser.add_argument('--num_class', type=int)\nparser.add_argument('--percent', type=float)\n"
        "args = parser.parse_args()\nprint(args)\n"
    )
    guide = (
        "# SSC on Ascend NPU\n\n```bash\npython generate_anno.py --data ./data --num_class 10 --num_per_class 5\n```\n"
    )
    tree = {"models/ssc/generate_anno.py": parser, "models/ssc/README.md": guide}
    found = [f.message for f in audit(tree).findings if f.rule == "NPU117"]
    assert found == [
        "`models/ssc/generate_anno.py` has no option `--num_per_class`: its argparse parser (line 3) does not define "
        "it, so the script stops with `unrecognized arguments: --num_per_class` before doing its work. Pass one of its "
        "options (`--data`, `--num_class`, `--percent`), or add the option to the script."
    ]


def test_a_script_that_reads_one_position_into_two_variables_has_no_fixed_slots() -> None:
    """A MindSpore model zoo's launcher reads `PRE_TRAINED=$4` and `ANNOTATION=$5` when its 4th argument is a
    checkpoint, else `ANNOTATION=$4` and `PRE_TRAINED=$5`: a caller passing the annotation 4th is right (rs-r41, the
    slot check judged false twice). A script with fixed positions still gets its slots checked."""
    from tests.fixture_support import audit

    swapping = (
        "#!/bin/bash\nif [ $# -lt 3 ]; then\n  exit 1\nelif [ $# -eq 4 ] && [[ $4 = *.ckpt ]]; then\n"
        "  PRE_TRAINED=$4\n  ANNOTATION=$5\nelse\n  ANNOTATION=$4\n  PRE_TRAINED=$5\nfi\nDEVICE_NUM=$1\nEXP_DIR=$2\n"
        "export RANK_TABLE_FILE=$3\npython train.py --annotation=$ANNOTATION --pre_trained=$PRE_TRAINED\n"
    )
    caller = (
        "#!/bin/bash\nexport RANK_TABLE_FILE=/home/rank_table_4p.json\nANNOTATION=/data/anno.json\n"
        "PRE_TRAINED=/ckpt/resnet.ckpt\n"
        "bash scripts/run_distribute_train_model_ascend.sh 4 ./exp $RANK_TABLE_FILE $ANNOTATION $PRE_TRAINED\n"
    )
    tree = {
        "scripts/run_distribute_train_model_ascend.sh": swapping,
        "scripts/run_distribute_train_ascend_4p.sh": caller,
    }
    assert [f for f in audit(tree).findings if f.rule == "NPU117"] == []


def test_a_guide_naming_a_script_found_both_at_the_root_and_beside_it_is_not_judged() -> None:
    """A vendored torchair's `CONTRIBUTING.md` says `bash build.sh -i`; its own folder's build.sh takes `-i`, the
    repository root's does not (rs-r46, judged false three times): which one the reader runs is not known. With the
    guide's folder holding none, the root's is judged."""
    from tests.fixture_support import audit

    root = (
        "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n"
        '    -n|--op-name) OP=$2; shift 2 ;;\n    *) echo "unknown option $1"; exit 1 ;;\n  esac\ndone\n'
    )
    own = "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\nwhile getopts 'hiu' opt; do :; done\n"
    guide = "# Build for Ascend NPU\n\n```bash\nbash build.sh -i\n```\n"
    nested = {"build.sh": root, "external/torchair/build.sh": own, "external/torchair/CONTRIBUTING.md": guide}
    assert [f for f in audit(nested).findings if f.rule == "NPU117"] == []
    alone = {"build.sh": root, "external/torchair/CONTRIBUTING.md": guide}
    assert [(f.path, f.line) for f in audit(alone).findings if f.rule == "NPU117"] == [
        ("external/torchair/CONTRIBUTING.md", 4)
    ]


def test_a_relative_cd_inside_another_project_s_clone_stays_in_it() -> None:
    """JeffDing/MyAscendCode's Wide&Deep README clones MindSpore, `cd`s into its model's folder, then `mkdir -p
    data/origin_data && cd data/origin_data`, and later runs `python eval.py --data_path=...`: MindSpore's own
    `eval.py`, not the repository's copy beside the README, which has no `--data_path` (sweep-r23, judged false).
    Without the clone the copy beside the README is the one run, and the option is reported."""
    clone = (
        "```bash\ngit clone https://gitee.com/mindspore/mindspore.git\n"
        "cd mindspore/model_zoo/recommend/wide_and_deep\n```\n"
    )
    rest = (
        "Download:\n```bash\nmkdir -p data/origin_data && cd data/origin_data\nwget DATA_LINK\n```\n"
        "Evaluate:\n```bash\npython eval.py --data_path=./data/mindrecord\n```\n"
    )
    title = "# Wide&Deep on Ascend\n\nRuns on Ascend 910 with MindSpore.\n\n"
    evalpy = (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--checkpoint_path')\nargs = p.parse_args()\n"
    )
    cloned = {"wide_deep/README.md": title + clone + rest, "wide_deep/eval.py": evalpy}
    assert [f for f in change({}, cloned).findings if f.rule == "NPU117"] == []
    own = {
        "wide_deep/README.md": title + "Evaluate:\n```bash\npython eval.py --data_path=./data\n```\n",
        "wide_deep/eval.py": evalpy,
    }
    assert [(f.path, f.line) for f in change({}, own).findings if f.rule == "NPU117"] == [("wide_deep/README.md", 7)]


def test_a_cd_into_a_folder_of_this_repository_s_own_clone_enters_the_repository() -> None:
    """A guide clones this repository (from GitCode, under another owner than GitHub's) and `cd`s into one of its
    folders (`cd cann-recipes-x/models/demo`): the scripts run there are the repository's, and an option their
    parser lacks is reported (the fifth held-out draw's `--mutiview`, missed since the clone was taken for another
    project's). Another project's clone still is one."""
    from npu_review.checks import run
    from npu_review.checks.diffing import changes_between
    from npu_review.checks.model import ChangeSet, MemoryTree
    from tests.rules.support import DEFAULT_CONFIG

    demo = (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--multiview', action='store_true')\n"
        "args = p.parse_args()\n"
    )

    def review(clone_url: str, folder: str) -> list[tuple[str, int]]:
        readme = (
            "# Demo on Ascend NPU\n\nRuns on Ascend with torch_npu.\n\n```shell\n"
            "git clone https://github.com/upstream/Demo-2.git\n```\n\n```shell\n"
            f"git clone {clone_url}\n```\n\n```shell\n"
            f"cd {folder}/models/demo\npip3 install -r requirements.txt\n\ncd renderer\npython3 setup.py install\n"
            "```\n\n"
            "```bash\npython demo_npu.py --mutiview\n```\n"
        )
        head: dict[str, str | None] = {
            "models/demo/README.md": readme,
            "models/demo/demo_npu.py": demo,
            "models/demo/renderer/setup.py": "from setuptools import setup\nsetup(name='renderer')\n",
        }
        cs = ChangeSet(head=MemoryTree(head), changes=changes_between({}, head), repository="hicann/cann-recipes-x")
        return [(f.path, f.line) for f in run(cs, DEFAULT_CONFIG).findings if f.rule == "NPU117"]

    assert review("https://gitcode.com/cann/cann-recipes-x.git", "cann-recipes-x") == [("models/demo/README.md", 22)]
    assert review("https://github.com/other/demo-zoo.git", "demo-zoo") == []


def test_a_design_spec_s_command_passes_an_option_still_to_add() -> None:
    """yuqitao1024/DeepEP-Ascend's approved spec shows `python3 tests/elastic/test_ep.py --benchmark-profile parity`,
    an option its plan adds to the script (added 40 minutes later; rs-r58, judged false). The same line in a guide
    passes an option the script rejects."""
    script = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num-processes')\np.parse_args()\n"
    spec = (
        "# EP parity on Ascend\n\nStatus: Draft\n\nCompares HCCL on the NPU.\n\n"
        "```bash\npython3 tests/elastic/test_ep.py --benchmark-profile parity\n```\n"
    )
    files = {"tests/elastic/test_ep.py": script}
    assert [f for f in change(files, {**files, "docs/ep.md": spec}).findings if f.rule == "NPU117"] == []
    guide = spec.replace("Status: Draft\n\n", "")
    found = change(files, {**files, "docs/ep.md": guide}).findings
    assert [(f.path, f.line) for f in found if f.rule == "NPU117"] == [("docs/ep.md", 6)]
