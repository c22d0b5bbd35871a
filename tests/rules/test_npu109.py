"""NPU109 launcher-json-invalid: its fixture cases (tests/fixtures/NPU109/), and the vLLM launch parser it shares
with NPU101/102/108 (checks/parsers/vllm_cli.py): what a fixture cannot say (the options as read, the lines inside
YAML and multi-line values, the Python API)."""

from __future__ import annotations

import ast
import textwrap

from npu_review.checks.facts import load
from npu_review.checks.parsers import yamlmarks
from npu_review.checks.parsers.sh.launchers import Arg
from npu_review.checks.parsers.shell import parse
from npu_review.checks.parsers.vllm_cli import json_problems, python_calls, resolve, yaml_commands
from tests.fixture_support import audit
from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU109")

FACTS = load()
CLI = FACTS.vllm_cli


def _launch_args(script: str) -> tuple[Arg, ...]:
    [launch] = parse(textwrap.dedent(script)).view(True, FACTS.launchers).argparse_launches
    return launch.args


def test_single_and_double_quoted_json_read_the_same() -> None:
    args = _launch_args(
        """\
        vllm serve m --compilation-config '{"cudagraph_mode": "FULL"}' \\
            --additional-config "{\\"torchair_graph_config\\": {\\"enabled\\": true}}"
        """
    )
    assert [(a.flag, a.value, a.line) for a in args] == [
        ("--compilation-config", '{"cudagraph_mode": "FULL"}', 1),
        ("--additional-config", '{"torchair_graph_config": {"enabled": true}}', 2),
    ]
    assert list(json_problems(args, CLI)) == []
    config = resolve(args, CLI)
    assert config.setting("compilation", "cudagraph_mode") is not None
    assert config.setting("additional", "torchair_graph_config").value == {"enabled": True}  # type: ignore[union-attr]


def test_a_problem_in_a_multi_line_value_is_placed_on_its_line() -> None:
    args = _launch_args(
        """\
        vllm serve m --kv-transfer-config '{
            "kv_role": "kv_producer",
            "kv_port": "20001",
        }'
        """
    )
    [problem] = json_problems(args, CLI)
    assert (problem.line, problem.reason) == (
        4,
        "Expecting property name enclosed in double quotes at line 4 column 1",
    )
    assert problem.hint == "JSON allows no trailing comma."


def test_options_as_vllm_reads_them() -> None:
    args = _launch_args("vllm serve m --enforce_eager -cc.cudagraph_mode=PIECEWISE -O0 -dcp 2\n")
    config = resolve(args, CLI)
    assert config.eager is True and config.eager_line == 1
    assert config.setting("compilation", "cudagraph_mode").value == "PIECEWISE"  # type: ignore[union-attr]
    assert config.no_graph == "-O0" and config.context_parallel == [("-dcp", 2, 1)]
    assert resolve(_launch_args("vllm serve m --enforce-eager --no-enforce-eager\n"), CLI).eager is False


def test_the_drafters_enforce_eager_is_not_the_models() -> None:
    args = _launch_args("""vllm serve m --speculative-config '{"method": "eagle3", "enforce_eager": true}'\n""")
    config = resolve(args, CLI)
    assert config.eager is False
    assert config.setting("speculative", "enforce_eager").value is True  # type: ignore[union-attr]


def test_options_from_an_array_filled_in_one_arm_are_conditional() -> None:
    args = _launch_args(
        """\
        if [ "$MODE" = eager ]; then
          EXTRA=(--enforce-eager)
        fi
        vllm serve m "${EXTRA[@]}"
        """
    )
    assert [(a.flag, a.line, a.conditional) for a in args] == [("--enforce-eager", 2, True)]
    assert resolve(args, CLI).eager is None


def test_unknown_argument_lists_make_eager_unknown() -> None:
    assert resolve(_launch_args("vllm serve m $EXTRA_ARGS\n"), CLI).eager is None
    assert resolve(_launch_args('vllm serve "$MODEL" --port 8000\n'), CLI).eager is False


def test_yaml_server_cmd_lines_and_env() -> None:
    doc = yamlmarks.parse(
        textwrap.dedent(
            """\
            env_common:
              TASK_QUEUE_ENABLE: "2"
            deployment:
              - envs:
                  TASK_QUEUE_ENABLE: "1"
                server_cmd: >
                  vllm serve m
                    --port $SERVER_PORT
                    --compilation-config '{"cudagraph_mode": "FULL"}'
              - server_cmd:
                  - --enforce-eager
                  - --compilation-config
                  - '{"cudagraph_capture_sizes": [1, 2]}'
            """
        )
    )
    first, second = yaml_commands(doc, CLI)
    assert (first.line, first.env["TASK_QUEUE_ENABLE"]) == (6, ("1", 5))
    assert [(a.flag, a.value, a.value_line, a.via_variable) for a in first.args] == [
        ("--port", "$SERVER_PORT", 8, True),
        ("--compilation-config", '{"cudagraph_mode": "FULL"}', 9, False),
    ]
    assert second.env["TASK_QUEUE_ENABLE"] == ("2", 2)
    assert [(a.flag, a.value_line) for a in second.args] == [("--enforce-eager", 11), ("--compilation-config", 13)]


def test_python_keywords_read_as_options() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """\
            from vllm import LLM
            from vllm.config import CompilationConfig, CUDAGraphMode
            LLM(model="m", enforce_eager=True, compilation_config={"cudagraph_capture_sizes": [1, 2]})
            vllm.LLM(model="m", enforce_eager=flag, compilation_config=CompilationConfig(
                cudagraph_mode=CUDAGraphMode.FULL_DECODE_ONLY))
            """
        )
    )
    (l1, a1), (l2, a2) = python_calls(tree, CLI)
    assert (l1, resolve(a1, CLI).eager) == (3, True)
    assert resolve(a1, CLI).setting("compilation", "cudagraph_capture_sizes").value == [1, 2]  # type: ignore[union-attr]
    config = resolve(a2, CLI)
    assert (l2, config.eager) == (4, None)
    assert config.setting("compilation", "cudagraph_mode").value == "FULL_DECODE_ONLY"  # type: ignore[union-attr]


def test_the_finding_names_the_option_and_the_cause() -> None:
    report = audit(
        {
            "serve/run_npu.sh": "export HCCL_BUFFSIZE=512\n"
            "vllm serve m --compilation-config '{\"cudagraph_capture_sizes\": [8,,32]}'\n",
        }
    )
    assert [(f.rule, f.path, f.line, f.severity.label, f.message) for f in report.findings] == [
        (
            "NPU109",
            "serve/run_npu.sh",
            2,
            "error",
            "The value of `--compilation-config` is not valid JSON (Expecting value at column 32): vLLM refuses it "
            "and the server does not start. Two commas in a row leave an empty element. Give `--compilation-config` "
            "valid JSON, inside single quotes for the shell.",
        )
    ]


def test_a_backslash_inside_single_quotes_is_kept_and_named() -> None:
    args = _launch_args(
        """\
        vllm serve m --speculative-config '{"method": "eagle3", \\
            "num_speculative_tokens": 3}'
        """
    )
    [problem] = json_problems(args, CLI)
    assert problem.line == 1
    assert problem.hint.startswith("Inside single quotes a `\\` at the end of a line is kept as it is")
    # in double quotes the shell joins the lines: valid JSON
    args = _launch_args('vllm serve m --speculative-config "{\\"method\\": \\"eagle3\\", \\\n  \\"k\\": 3}"\n')
    assert list(json_problems(args, CLI)) == []


def test_another_programs_server_cmd_is_not_read() -> None:
    doc = yamlmarks.parse(
        'server_cmd: python3 -m sglang.launch_server --enforce-eager\nother:\n  server_cmd: ["sglang", "serve"]\n'
    )
    assert yaml_commands(doc, CLI) == []


def test_placeholders_stand_for_a_value_and_the_rest_is_judged() -> None:
    def problems(text: str) -> list[tuple[int, str]]:
        return [(p.line, p.hint) for p in json_problems([Arg("--additional-config", text, 7, 7)], CLI)]

    assert problems('{"max_cudagraph_capture_size": N}') == []
    assert problems('{"num_redundant_experts": {ep_size}}') == []
    assert problems('{"a": "<path>", "b": <sizes>}') == []  # `<...>` outside a string: not judged at all
    trailing = '{"eplb": true,\n  "num_redundant_experts": {ep_size},\n}'
    assert problems(trailing) == [(9, "JSON allows no trailing comma.")]
