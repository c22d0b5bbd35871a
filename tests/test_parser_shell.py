"""The shell/Hydra parser: logical lines, assignments, device arms, overrides, resolution, NPU context."""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_review.checks.facts import default_facts
from npu_review.checks.parsers.sh.lexer import SIMPLE_WORD as _SIMPLE_WORD
from npu_review.checks.parsers.sh.lexer import read_word as _read_word
from npu_review.checks.parsers.shell import (
    UNKNOWN,
    as_bool,
    as_int,
    hydra_str,
    is_npu_capable,
    logical_lines,
    npu_view,
    parse,
    split_override,
)

LAUNCHERS = default_facts().launchers  # verl's, the first profile

EAGER = "actor_rollout_ref.rollout.enforce_eager"
MODE = "actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode"
NAME = "actor_rollout_ref.rollout.name"


def sh(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- logical lines -------------------------------------------------------------------------------------------


def test_continuations_join_and_keep_the_first_line() -> None:
    lines = logical_lines(
        sh(
            """
            #!/usr/bin/env bash
            # a comment
            export A=1  # trailing comment
            python3 -m verl.trainer.main_ppo \\
                a.b=1 \\
                c.d="x # not a comment" \\
                e.f=2
            echo done
            """
        )
    )
    assert [(ll.line, ll.end_line) for ll in lines] == [(3, 3), (4, 7), (8, 8)]
    assert lines[0].text.rstrip() == "export A=1"
    joined = lines[1]
    assert 'c.d="x # not a comment"' in joined.text
    assert joined.line_at(joined.text.index("e.f=2")) == 7
    assert joined.line_at(joined.text.index("a.b=1")) == 5


def test_multiline_quotes_arrays_and_heredocs() -> None:
    text = sh(
        """
        ROLLOUT=(
            a.b=1    # comment inside the array
            # a full-line comment
            c.d='two
        lines'
        )
        cat <<'EOF' > x.py
        e.f=3
        EOF
        python3 -m verl.x "${ROLLOUT[@]}"
        """
    )
    script = parse(text)
    assert [(ll.line, ll.end_line) for ll in script.logical] == [(1, 6), (7, 7), (10, 10)]
    assert script.heredocs == [(8, 9)]
    inv = script.view(False, LAUNCHERS).invocations[0]
    assert [(o.key, o.value, o.line) for o in inv.overrides] == [("a.b", "1", 2), ("c.d", "two\nlines", 4)]


def test_commented_line_inside_a_continuation() -> None:
    script = parse(
        sh(
            """
            python3 -m verl.trainer.main_ppo \\
                a.b=1 \\
                # x.y=2 \\
                c.d=3
            """
        )
    )
    assert script.comment_breaks == [3]
    inv = script.view(False, LAUNCHERS).invocations[0]
    assert [(o.key, o.line) for o in inv.overrides] == [("a.b", 2), ("c.d", 4)]


# -- assignments and arms ------------------------------------------------------------------------------------


def test_assignments_with_kinds_lines_and_arms() -> None:
    script = parse(
        sh(
            """
            DEVICE=${DEVICE:-gpu}
            export TASK_QUEUE_ENABLE=2
            : "${NNODES:=1}"
            case "${DEVICE}" in
                gpu)
                    TP=2
                    ;;
                NPU|npu)
                    export HCCL_CONNECT_TIMEOUT=1500
                    TP=4
                    ;;
            esac
            for seed in 1 2; do
                read -r line
            done
            """
        )
    )
    got = [(a.name, a.kind, a.line, a.exported, a.device) for a in script.assignments]
    assert got == [
        ("DEVICE", "assign", 1, False, None),
        ("TASK_QUEUE_ENABLE", "export", 2, True, None),
        ("NNODES", "default", 3, False, None),
        ("TP", "assign", 6, False, "other"),
        ("HCCL_CONNECT_TIMEOUT", "export", 9, True, "npu"),
        ("TP", "assign", 10, False, "npu"),
        ("seed", "for", 13, False, None),
        ("line", "read", 14, False, None),
    ]
    assert [a.line for a in script.npu_arms] == [8]


def test_if_device_tests_and_and_lists() -> None:
    script = parse(
        sh(
            """
            if [ "${DEVICE}" = "npu" ]; then
                export A=1
            elif [ "$DEVICE" == gpu ]; then
                export A=2
            else
                export A=3
            fi
            if [ -n "$device_name" ] && [ "$device_name" == "npu" ]; then
                export B=1
            fi
            [ "${DEVICE:-gpu}" = gpu ] && export C=1
            [ "$DEVICE" = npu ] && [ "$BACKEND" = sglang ] && export D=1
            """
        )
    )
    by_line = {a.line: a.device for a in script.assignments}
    # the else arm runs when DEVICE is not npu: never on NPU
    assert by_line == {2: "npu", 4: "other", 6: "other", 9: "npu", 11: "other", 12: "npu"}
    view = script.view(True, LAUNCHERS)
    assert view.env("A") is not None and view.env("A").value == "1"  # type: ignore[union-attr]
    assert view.env("B").value == "1"  # type: ignore[union-attr]
    assert view.env("C") is None  # GPU only
    d = view.env("D")
    # NPU and SGLang only: maybe set, maybe exported
    assert d is not None and d.value is UNKNOWN and d.exported is None


def test_else_of_a_gpu_test_is_the_npu_arm() -> None:
    script = parse('if [ "$DEVICE" = gpu ]; then\n  X=1\nelse\n  X=2\nfi\n')
    assert [(a.line, a.device) for a in script.assignments] == [(2, "other"), (4, "npu")]


# -- overrides and resolution --------------------------------------------------------------------------------


def test_overrides_in_commands_and_arrays_in_hydra_order() -> None:
    script = parse(
        sh(
            """
            INFER_BACKEND=${INFER_BACKEND:-vllm}
            ROLLOUT=(
                actor_rollout_ref.rollout.name=${INFER_BACKEND}
                actor_rollout_ref.rollout.enforce_eager=True
            )
            EXTRA=()
            EXTRA+=("+ray_kwargs.ray_init.num_gpus=${NGPUS:-8}")
            LAUNCH=(python3)
            "${LAUNCH[@]}" -m verl.trainer.main_ppo \\
                "${ROLLOUT[@]}" \\
                ~actor_rollout_ref.rollout.free_cache_engine \\
                ++actor_rollout_ref.rollout.enforce_eager=False \\
                "${EXTRA[@]}" \\
                "$@" 2>&1 | tee log.txt
            """
        )
    )
    view = script.view(False, LAUNCHERS)
    [inv] = view.invocations
    assert (inv.launcher, inv.module, inv.passes_args, inv.line) == ("python3", "verl.trainer.main_ppo", True, 9)
    got = [(o.prefix, o.key, o.raw, o.value, o.line, o.array) for o in inv.overrides]
    assert got == [
        ("", NAME, "${INFER_BACKEND}", "vllm", 3, "ROLLOUT"),
        ("", EAGER, "True", "True", 4, "ROLLOUT"),
        ("~", "actor_rollout_ref.rollout.free_cache_engine", None, None, 11, None),
        ("++", EAGER, "False", "False", 12, None),
        ("+", "ray_kwargs.ray_init.num_gpus", "${NGPUS:-8}", "8", 7, "EXTRA"),
    ]
    eager = inv.effective(EAGER)
    assert (eager.value, eager.present, eager.override.line if eager.override else None) == ("False", True, 12)
    assert [o.line for o in eager.overrides] == [4, 12]
    assert inv.effective("rollout.name", suffix=True).value == "vllm"
    assert inv.effective(NAME).override is not None and inv.effective(NAME).override.sources == (1,)
    free = inv.effective("actor_rollout_ref.rollout.free_cache_engine")
    assert (free.value, free.present) == (None, False)  # deleted with ~


def test_resolution_last_assignment_defaults_unknown_and_quotes() -> None:
    script = parse(
        sh(
            """
            A=1
            A=2
            B="${UNSET_VAR:-fallback}"
            C=$HOME/data
            D='${A}'
            python3 -m verl.trainer.main_ppo \\
                x.a=$A x.b=${B} x.c=${C} x.d="${D}" x.e='"quoted"' x.f=${NOPE} x.g=$(date) x.h=${1:-pos}
            """
        )
    )
    [inv] = script.view(False, LAUNCHERS).invocations
    values = {o.key: o.value for o in inv.overrides}
    assert values == {
        "x.a": "2",
        "x.b": "fallback",
        "x.c": UNKNOWN,
        "x.d": "${A}",
        "x.e": '"quoted"',
        "x.f": UNKNOWN,
        "x.g": UNKNOWN,
        "x.h": "pos",
    }
    assert hydra_str(values["x.e"]) == "quoted"


def test_conditional_assignments_and_overrides_become_unknown() -> None:
    script = parse(
        sh(
            """
            MODE=eager
            EAGER=True
            if [ "${FAST:-0}" = 1 ]; then
                EAGER=False
            fi
            SAME=1
            if [ -n "$X" ]; then SAME=1; fi
            EXTRA=()
            if [ "${DEBUG:-0}" = 1 ]; then
                EXTRA+=(actor_rollout_ref.rollout.enforce_eager=True)
            fi
            python3 -m verl.trainer.main_ppo a.eager=${EAGER} a.same=${SAME} a.mode=${MODE} "${EXTRA[@]}"
            """
        )
    )
    [inv] = script.view(False, LAUNCHERS).invocations
    assert inv.value("a.eager") is UNKNOWN
    assert inv.value("a.same") == "1"
    assert inv.value("a.mode") == "eager"
    eff = inv.effective(EAGER)
    assert (eff.value, eff.present) == (UNKNOWN, None)


def test_string_of_overrides_word_splits_with_lines() -> None:
    script = parse(
        sh(
            """
            tp=4
            ROLLOUT_CONFIG="
                actor_rollout_ref.rollout.name=vllm \\
                actor_rollout_ref.rollout.tensor_model_parallel_size=${tp} \\
                trainer.logger='["console"]'"
            python3 -m verl.trainer.main_ppo $ROLLOUT_CONFIG trainer.nnodes=1
            """
        )
    )
    [inv] = script.view(False, LAUNCHERS).invocations
    got = [(o.key, o.value, o.line) for o in inv.overrides]
    assert got == [
        (NAME, "vllm", 3),
        ("actor_rollout_ref.rollout.tensor_model_parallel_size", "4", 4),
        ("trainer.logger", "'[console]'", 5),
        ("trainer.nnodes", "1", 6),
    ]


def test_dict_valued_ancestor_override() -> None:
    script = parse(
        "python3 -m verl.trainer.main_ppo "
        "+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config='{cudagraph_mode: PIECEWISE}'\n"
    )
    [inv] = script.view(False, LAUNCHERS).invocations
    assert inv.value(MODE) == "PIECEWISE"
    assert inv.value(MODE.replace("cudagraph_mode", "cudagraph_capture_sizes")) is None


def test_not_overrides_and_not_launchers() -> None:
    assert split_override("pip.pkg==1.0") is None
    assert split_override("--config-name=ppo") is None
    assert split_override('"+a.b=${X}"') == ("+", "a.b", "${X}")
    assert split_override("~a.b") == ("~", "a.b", None)
    script = parse("echo a.b=1\npip install zope.interface==5.0\nexport A=1\n")
    assert script.view(False, LAUNCHERS).invocations == []


def test_env_exported_prefix_and_plain() -> None:
    script = parse(
        sh(
            """
            TASK_QUEUE_ENABLE=2
            PLAIN=1
            export TASK_QUEUE_ENABLE
            VLLM_ASCEND_TASK_QUEUE_ENABLE=1 python3 -m verl.trainer.main_ppo a.b=1
            """
        )
    )
    view = script.view(True, LAUNCHERS)
    [inv] = view.invocations
    tq = view.env("TASK_QUEUE_ENABLE", inv)
    assert tq is not None and (tq.value, tq.line, tq.exported) == ("2", 1, True)
    assert view.env("PLAIN", inv) is None
    assert view.variable("PLAIN", inv) is not None
    prefix = view.env("VLLM_ASCEND_TASK_QUEUE_ENABLE", inv)
    assert prefix is not None and (prefix.value, prefix.line) == ("1", 4)


# -- NPU context ---------------------------------------------------------------------------------------------

DUAL = sh(
    """
    DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}
    TP=${TP:-2}
    case "${DEVICE}" in
        gpu)
            export TASK_QUEUE_ENABLE=2
            TP=1
            ;;
        npu)
            export TASK_QUEUE_ENABLE=1
            ;;
    esac
    LAUNCH=(python3)
    if [ "${DEVICE:-gpu}" = gpu ]; then
        LAUNCH=(uv run python3)
    fi
    "${LAUNCH[@]}" -m verl.trainer.main_ppo a.tp=${TP} actor_rollout_ref.rollout.enforce_eager=False
    """
)


def test_dual_device_script_npu_view_skips_the_gpu_arm() -> None:
    script = parse(DUAL)
    assert is_npu_capable(script, "trainer.device", LAUNCHERS)
    view = npu_view(script, {"shell"}, "trainer.device", LAUNCHERS)
    assert view is not None
    [inv] = view.invocations
    assert inv.launcher == "python3"
    assert inv.value("a.tp") == "2"
    tq = view.env("TASK_QUEUE_ENABLE", inv)
    assert tq is not None and (tq.value, tq.line) == ("1", 9)
    any_device = script.view(False, LAUNCHERS)
    assert any_device.invocations[0].value("a.tp") is UNKNOWN
    assert any_device.env("TASK_QUEUE_ENABLE") is not None
    assert any_device.env("TASK_QUEUE_ENABLE").value is UNKNOWN  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "kinds", "npu"),
    [
        ("python3 -m verl.trainer.main_ppo a.b=1\n", {"shell"}, False),
        ("python3 -m verl.trainer.main_ppo a.b=1\n", {"shell", "npu_script"}, True),
        ("DEVICE=${DEVICE:-npu}\npython3 -m verl.trainer.main_ppo a.b=1\n", {"shell"}, True),
        ("python3 -m verl.trainer.main_ppo trainer.device=npu\n", {"shell"}, True),
        ('case "$DEVICE" in\n  gpu | npu) ;;\nesac\npython3 -m verl.x a.b=1\n', {"shell"}, True),
        ('if [ "$device_name" == "cuda" ]; then\n  python3 -m verl.x a.b=1\nfi\n', {"shell"}, False),
    ],
)
def test_npu_context(text: str, kinds: set[str], npu: bool) -> None:
    assert (npu_view(parse(text), kinds, "trainer.device", LAUNCHERS) is not None) is npu


def test_values_helpers() -> None:
    assert as_bool("True") is True and as_bool("'false'") is False
    assert as_bool(UNKNOWN) is None and as_bool(None) is None and as_bool("yes") is None
    assert as_int('"2"') == 2 and as_int("x") is None and as_int(UNKNOWN) is None
    with pytest.raises(TypeError):
        bool(UNKNOWN)


# -- robustness ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'echo "unterminated\npython3 -m verl.x a.b=1\n',
        "cat <<EOF\nno end marker\n",
        "A=(\n a.b=1\n",
        "case $x in\n npu) ;;\n",
        "if then fi esac done } ) ;; ( {\n",
        "x=${A:-${B:-${C\n",
        "python3 -m verl.x " + "a.b=1 " * 20000 + "\n",
        "\\\n" * 100,
        "\x00\x01 $(( ${ `",
    ],
)
def test_never_raises_on_odd_input(text: str) -> None:
    script = parse(text)
    npu_view(script, {"npu_script"}, "trainer.device", LAUNCHERS)
    script.view(False, LAUNCHERS)


_PIECES = [*"ab.=$\"'`(){}[]|&;<>#\\ \n-+~:", "npu)", "case ", " in ", "if ", "then ", "fi", "esac", ";;", "<<EOF"]
_PIECES += ["a.b.c=", "${X:-", "ARR=(", '"${ARR[@]}"', "export ", "python3 -m verl ", "DEVICE", "npu", "\\\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_never_raises_fuzz(pieces: list[str]) -> None:
    text = "".join(pieces)
    script = parse(text)
    view = npu_view(script, {"npu_script"}, "trainer.device", LAUNCHERS)
    if view is not None:
        for inv in view.invocations:
            inv.effective(EAGER)
        view.env("TASK_QUEUE_ENABLE")


def test_an_exit_reached_on_npu_ends_the_npu_view() -> None:
    script = parse(
        sh(
            """
            if [ "${DEVICE}" = npu ]; then
                echo "NPU is not supported by this example" >&2
                exit 1
            fi
            export TASK_QUEUE_ENABLE=2
            python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm
            """
        )
    )
    view = npu_view(script, {"shell"}, "trainer.device", LAUNCHERS)
    assert view is not None and view.invocations == [] and view.env("TASK_QUEUE_ENABLE") is None
    assert len(script.view(False, LAUNCHERS).invocations) == 1


# -- fast paths agree with the general code ------------------------------------------------------------------

_WORD_CHARS = st.sampled_from([*"ab=.$'\"`\\(){}[]; \t\n|&<>#-:", "${A}", "${A:-x}", "$A", "$((", '"${A}"'])


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORD_CHARS, min_size=1, max_size=30).map("".join))
def test_simple_word_pattern_ends_where_read_word_does(text: str) -> None:
    # The tokenizer reads most words with _SIMPLE_WORD and falls back to _read_word for the rest.
    simple = re.compile(_SIMPLE_WORD)
    for i in range(len(text)):
        m = simple.match(text, i)
        if m is not None:
            assert m.end() == _read_word(text, i), (text, i)


def test_a_line_reads_by_its_quoting_context() -> None:
    # Physical lines are scanned once per quoting context: the same line inside and outside a string.
    inside = logical_lines('X="\nfoo # kept\n"\n')
    outside = logical_lines("foo # dropped\n")
    assert [ll.text for ll in inside] == ['X="\nfoo # kept\n"']
    assert [ll.text for ll in outside] == ["foo "]
    assert [ll.text for ll in logical_lines('X="\nfoo # kept\n"\n')] == [ll.text for ll in inside]


def test_expansion_shortcuts_give_the_general_values() -> None:
    script = parse(
        sh(
            """
            A=1
            B="${A}x"
            python3 -m verl.x \\
                p.a=plain p.b=${A} p.c="${A}" p.d=${A:-2} p.e=${Z} p.f=${Z:-"${A}/z"} p.g="a
            b" p.h=${B}
            """
        )
    )
    [inv] = script.view(False, LAUNCHERS).invocations
    assert [(o.key, o.value, o.line, o.sources) for o in inv.overrides] == [
        ("p.a", "plain", 4, ()),
        ("p.b", "1", 4, (1,)),
        ("p.c", "1", 4, (1,)),
        ("p.d", "1", 4, (1,)),
        ("p.e", UNKNOWN, 4, ()),
        ("p.f", "1/z", 4, (1,)),
        ("p.g", "a\nb", 4, ()),
        ("p.h", "1x", 5, (2, 1)),
    ]


def test_a_here_string_is_not_a_here_document() -> None:
    from npu_review.checks.parsers.shell import logical_lines

    text = 'X=1\ncat <<< "$X"\ntr a b <<<abc\npython3 -m verl.trainer.main_ppo a.b=$X\n'
    assert [(ll.line, ll.text) for ll in logical_lines(text)] == [
        (1, "X=1"),
        (2, 'cat <<< "$X"'),
        (3, "tr a b <<<abc"),
        (4, "python3 -m verl.trainer.main_ppo a.b=$X"),
    ]


# -- launchers as data -----------------------------------------------------------------------------------------


def test_verl_launchers_recognise_its_modules_and_any_command_with_overrides() -> None:
    script = parse(
        sh(
            """
            python3 -m verl.trainer.main_ppo
            torchrun --nproc_per_node 8 train.py trainer.n_gpus_per_node=8
            echo trainer.n_gpus_per_node=8
            python3 tools/convert.py --out x
            """
        )
    )
    view = script.view(False, LAUNCHERS)
    assert [(i.line, i.launcher, i.module, [o.key for o in i.overrides]) for i in view.invocations] == [
        (1, "python3", "verl.trainer.main_ppo", []),
        (2, "torchrun", None, ["trainer.n_gpus_per_node"]),
    ]


def test_another_projects_launchers_are_a_data_change() -> None:
    from npu_review.checks.parsers.sh.launchers import EntryPoint, Launchers

    mine = Launchers(
        entry_points=(
            EntryPoint("hydra", modules=("mypkg.",)),
            EntryPoint("argparse", commands=("vllm",), subcommands=("serve",)),
        ),
        hydra_any_command=False,
        not_launchers=("echo",),
    )
    text = sh(
        """
        python -m mypkg.train a.b=1
        torchrun other.py a.b=2
        vllm serve /models/q --tensor-parallel-size 2 --enforce-eager \\
            --max-model-len=4096 -O3
        vllm bench --tensor-parallel-size 4
        """
    )
    view = parse(text).view(True, mine)
    assert [(i.line, i.module, [(o.key, o.value) for o in i.overrides]) for i in view.invocations] == [
        (1, "mypkg.train", [("a.b", "1")])
    ]
    [launch] = view.argparse_launches
    assert (launch.program, launch.line) == ("vllm", 3)
    assert launch.options == (
        ("--tensor-parallel-size", "2", 3),
        ("--enforce-eager", None, 3),
        ("--max-model-len", "4096", 4),
        ("-O3", None, 4),
    )
    assert launch.option("--max-model-len") == "4096" and launch.option("--enforce-eager") is None
    # verl's declarations read the same text their way: both commands pass overrides, vllm is no Hydra launch
    assert [i.line for i in parse(text).view(True, LAUNCHERS).invocations] == [1, 2]


def test_a_launcher_declaration_with_a_wrong_style_stops_the_run() -> None:
    from npu_review.checks.facts import FactsError, load

    with pytest.raises(FactsError) as err:
        load({"launchers": {"entry_points": [{"style": "hidra", "modules": ["x"]}]}})
    assert (
        str(err.value)
        == "knowledge.launchers.entry_points[0].style: expected one of 'hydra', 'argparse', got the string 'hidra'"
    )


def test_vllm_ascend_profile_declares_vllm_serve_as_an_argparse_launcher() -> None:
    from npu_review.checks.facts import load

    launchers = load(profile="vllm-ascend").launchers
    view = parse("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --enforce-eager\n").view(True, launchers)
    assert [(a.program, a.line, a.options) for a in view.argparse_launches] == [
        ("vllm", 1, (("--tensor-parallel-size", "2", 1), ("--enforce-eager", None, 1)))
    ]
    assert view.invocations == []
