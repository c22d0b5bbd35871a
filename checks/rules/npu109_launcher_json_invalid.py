"""NPU109: a vLLM JSON option (`--compilation-config`, `--additional-config`, `--speculative-config`, ...) whose
value is not JSON once the shell has removed its quotes."""

from __future__ import annotations

import re
from collections.abc import Iterable

from npu_review.checks.analysis.vllm_launches import ascend_text, doc_command_blocks, vllm_launches
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.codeblocks import shell_blocks
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.vllm_cli import JsonProblem, fragments, json_problems, normalise
from npu_review.checks.rule import Hit, Rule

# Code blocks whose strings have an escaping of their own: a vLLM option inside them is a string's content.
_DATA_LANGUAGES = frozenset({"toml", "yaml", "yml", "json", "jsonc", "json5", "python", "py", "ini", "cfg"})


class LauncherJsonInvalid(Rule):
    """A vLLM server option that takes JSON is given something that is not JSON.

    Why: vLLM parses `--compilation-config` (`-cc`), `--additional-config`, `--speculative-config` (`-sc`) and
    `--kv-transfer-config` with a strict JSON parser (json.loads, pydantic's validate_json). A Python literal
    (`True`, `'single quotes'`), a missing or stray double quote, a doubled or trailing comma: the server exits
    with an argument error before it loads the model, and a docs reader who copies the command gets the same.
    vllm-ascend's history has eight of them, in tutorials and in CI test configs (for example
    `{"enable": True}`, `[8,,32]`, `"[3, 6, 9]"}`).

    Bad:
        vllm serve Qwen/Qwen3-8B \\
            --additional-config '{"torchair_graph_config": {"enabled": True}}' \\
            --compilation-config '{"cudagraph_capture_sizes": [8,,32]}'

    Good:
        vllm serve Qwen/Qwen3-8B \\
            --additional-config '{"torchair_graph_config": {"enabled": true}}' \\
            --compilation-config '{"cudagraph_capture_sizes": [8, 16, 32]}'

    Fix: write the value as JSON (double quotes, true/false/null), inside single quotes for the shell.

    Where: vLLM launches (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`) in shell scripts, in
    `bash`/`sh`/`shell`/`zsh` code blocks and the `$ ` lines of `console` blocks of Markdown and reST docs, and in
    YAML test configs (`server_cmd:` as a string, split as shlex does, or as a list of arguments); in Ascend docs
    also an option written on its own in prose (`--additional-config '{...}'` with single quotes, on one line); in
    Python, a list of command-line strings that holds such an option (`["--compilation-config", '{...}']`). The
    value is judged after shell quote removal, so `'{"a": 1}'` and `"{\\"a\\": 1}"` are the same JSON; a value
    spread over several lines inside quotes is one value. Not reported: values that go through a variable (`$X`,
    `${X}`: the caller or the test harness substitutes it), values with a placeholder (`<path>`, `...`, `{{ x }}`),
    `-O3` levels, values the parser cannot read (unbalanced quotes), bare numbers with a k/m/g/t suffix (vLLM
    expands them). A bare upper-case word (`N`) or a `{name}` outside strings stands for a number to fill in: the
    rest of the value is still judged.
    """

    id = "NPU109"
    name = "launcher-json-invalid"
    severity = Severity.ERROR
    title = "A vLLM JSON option's value is not valid JSON"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, PYTHON})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        facts = ctx.facts.vllm_cli
        reported: set[int] = set()
        problems: list[tuple[JsonProblem, str]] = []
        for launch in vllm_launches(ctx, src):
            if launch.where != "python":  # keywords are Python values, not JSON text
                problems.extend((p, launch.where) for p in json_problems(launch.args, facts))
        flavor = flavor_of(src.path)
        if flavor is not None and DOCS in src.kinds and "'{" in src.text and ascend_text(ctx, src.text):
            in_blocks = {n for b in doc_command_blocks(ctx, src) for n, _t in b.lines}
            # Blocks of a language with strings of its own (a TOML `value = "--compilation-config '{\"a\": 1}'"`)
            # are no prose, and a value whose quotes are escaped (`\"`) is written for such a string, wherever it
            # is quoted (a table cell copying the TOML line): TOML or JSON turn `\"` into `"` before vLLM sees it.
            in_blocks |= {n for b in shell_blocks(src.text, flavor, _DATA_LANGUAGES) for n, _t in b.lines}
            rest = [(n, t) for n, t in enumerate(src.lines, start=1) if n not in in_blocks and '\\"' not in t]
            problems.extend((p, "docs") for p in json_problems(fragments(rest, facts), facts))
        for problem, where in sorted(problems, key=lambda pw: pw[0].line):
            if problem.line in reported:
                continue
            reported.add(problem.line)
            option = normalise(problem.arg.flag)[0]
            hint = f" {problem.hint}" if problem.hint else ""
            yield Hit(
                src.path,
                problem.line,
                f"The value of `{problem.arg.flag}` is not valid JSON ({problem.reason}): vLLM refuses it and the "
                f"server does not start.{hint} Give `{option}` valid JSON, "
                + ("or build it with json.dumps." if where == "python-args" else "inside single quotes for the shell."),
                # One cause: the same mistake in the same option (a trailing comma copied into the prefill and the
                # decode command of one guide), wherever the parser stops.
                cause=f"{option}: {problem.hint or re.sub(r'(?:line|column|char) [0-9]+', '', problem.reason)}",
            )
