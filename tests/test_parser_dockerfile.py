"""The Dockerfile parser: instructions and their physical lines, RUN commands, ENV/ARG, FROM, degraded input."""

from __future__ import annotations

import random

from npu_review.checks.parsers.dockerfile import (
    BLANK,
    COMMENT,
    CONTENT,
    HEREDOC,
    Dockerfile,
    Instruction,
    expand,
    parse,
)
from npu_review.checks.parsers.sh import Source, commands


def _one(df: Dockerfile, keyword: str) -> Instruction:
    found = list(df.of(keyword))
    assert len(found) == 1, found
    return found[0]


def _cmds(instr: Instruction) -> list[tuple[tuple[str, ...], str, int]]:
    return [(c.argv, c.op, c.line) for c in instr.commands]


def test_instructions_lines_comments_and_blanks() -> None:
    text = (
        "# syntax=docker/dockerfile:1\n"  # 1 (directive)
        "FROM swr.example.com/ascendhub/cann:9.1.0-910b-ubuntu22.04-py3.12 AS base\n"  # 2
        "\n"  # 3
        "# a comment outside any instruction\n"  # 4
        "RUN apt-get update -y && \\\n"  # 5
        "    # comment inside the continuation\n"  # 6
        "    apt-get install -y git && \\\n"  # 7
        "\n"  # 8
        "    rm -rf /var/lib/apt/lists/*\n"  # 9
        'CMD ["/bin/bash"]\n'  # 10
    )
    df = parse(text)
    assert df.directives == {"syntax": "docker/dockerfile:1"}
    assert [(i.keyword, i.line, i.end_line) for i in df.instructions] == [
        ("FROM", 2, 2),
        ("RUN", 5, 9),
        ("CMD", 10, 10),
    ]
    run = _one(df, "RUN")
    assert [(p.number, p.kind) for p in run.physical] == [
        (5, CONTENT),
        (6, COMMENT),
        (7, CONTENT),
        (8, BLANK),
        (9, CONTENT),
    ]
    assert run.args == "apt-get update -y &&     apt-get install -y git &&     rm -rf /var/lib/apt/lists/*"
    assert [s.line for s in run.segments] == [5, 7, 9]
    assert _cmds(run) == [
        (("apt-get", "update", "-y"), "&&", 5),
        (("apt-get", "install", "-y", "git"), "&&", 7),
        (("rm", "-rf", "/var/lib/apt/lists/*"), "", 9),
    ]
    assert run.line_at(run.args.index("rm -rf")) == 9


def test_from_variants() -> None:
    df = parse(
        "FROM --platform=linux/arm64 quay.io/ascend/cann:8.5.0-a3-ubuntu22.04-py3.11 AS build\n"
        "FROM localhost:5000/img@sha256:abc\n"
        "FROM build\n"
    )
    images = [i.image for i in df.of("FROM")]
    assert images[0] is not None and images[1] is not None and images[2] is not None
    assert (images[0].image, images[0].tag, images[0].stage, images[0].platform) == (
        "quay.io/ascend/cann",
        "8.5.0-a3-ubuntu22.04-py3.11",
        "build",
        "linux/arm64",
    )
    assert (images[1].image, images[1].tag, images[1].digest) == ("localhost:5000/img", None, "sha256:abc")
    assert (images[2].image, images[2].tag, images[2].stage) == ("build", None, None)


def test_env_and_arg_pairs() -> None:
    df = parse(
        'ENV A=1 B="two words" \\\n'  # 1
        "    C='x'\n"  # 2
        "ENV LEGACY value with spaces\n"  # 3
        "ARG MAX_JOBS\n"  # 4
        'ARG SOC_VERSION="ascend910b1"\n'  # 5
    )
    env = list(df.of("ENV"))
    assert [(p.name, p.value, p.line, p.legacy) for p in env[0].pairs] == [
        ("A", "1", 1, False),
        ("B", "two words", 1, False),
        ("C", "x", 2, False),
    ]
    assert [(p.name, p.value, p.line, p.legacy) for p in env[1].pairs] == [("LEGACY", "value with spaces", 3, True)]
    args = list(df.of("ARG"))
    assert [(p.name, p.value) for a in args for p in a.pairs] == [("MAX_JOBS", None), ("SOC_VERSION", "ascend910b1")]


def test_run_operators_quotes_and_substitutions() -> None:
    df = parse(
        "RUN ARCH=$(uname -m) && \\\n"  # 1
        '    if [ "$ARCH" = "x86_64" ]; then \\\n'  # 2
        '        pip config set global.extra-index-url "https://a/b|c"; \\\n'  # 3
        "    fi && \\\n"  # 4
        "    MBRIDGE=$(pip show mbridge | grep Location | awk '{print $2}') || true ; \\\n"  # 5
        "    make -j8 2>&1 | tee build.log\n"  # 6
    )
    run = _one(df, "RUN")
    assert _cmds(run) == [
        ((), "&&", 1),
        (("[", "$ARCH", "=", "x86_64", "]"), ";", 2),
        (("pip", "config", "set", "global.extra-index-url", "https://a/b|c"), ";", 2),
        (("fi",), "&&", 4),
        ((), "||", 5),
        (("true",), ";", 5),
        (("make", "-j8"), "|", 6),
        (("tee", "build.log"), "", 6),
    ]
    first = run.commands[0]
    assert [(n, v) for n, v, _ in first.assignments()] == [("ARCH", "$(uname -m)")]
    # `then` is a prefix word: the command is pip, whose first word sits on line 3
    pip = run.commands[2]
    assert pip.words[0].unquoted == "then" and pip.words[1].line == 3
    assert [r.text for r in run.commands[6].redirects] == ["2>&1"]


def test_run_flags_and_exec_form() -> None:
    df = parse(
        "RUN --mount=type=cache,target=/root/.cache/pip pip install -r requirements-npu.txt\n"
        'RUN ["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && pip list"]\n'
        'RUN ["pip", "list"]\n'
    )
    runs = list(df.of("RUN"))
    assert runs[0].flags == ("--mount=type=cache,target=/root/.cache/pip",)
    assert _cmds(runs[0]) == [(("pip", "install", "-r", "requirements-npu.txt"), "", 1)]
    assert runs[1].json_args == ("bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && pip list")
    assert _cmds(runs[1]) == [
        (("source", "/usr/local/Ascend/ascend-toolkit/set_env.sh"), "&&", 2),
        (("pip", "list"), "", 2),
    ]
    assert _cmds(runs[2]) == [(("pip", "list"), "", 3)]


def test_heredoc_script_is_one_instruction() -> None:
    text = (
        "RUN <<EOF\n"  # 1
        "set -e\n"  # 2
        "pip install a \\\n"  # 3
        "    b\n"  # 4
        "\n"  # 5
        "echo done\n"  # 6
        "EOF\n"  # 7
        "RUN cat <<-'CONF' > /etc/pip.conf\n"  # 8
        "\t[global]\n"  # 9
        "\tindex-url = https://mirrors.example.com/simple\n"  # 10
        "\tCONF\n"  # 11
        'CMD ["bash"]\n'  # 12
    )
    df = parse(text)
    assert [(i.keyword, i.line, i.end_line) for i in df.instructions] == [
        ("RUN", 1, 7),
        ("RUN", 8, 11),
        ("CMD", 12, 12),
    ]
    script, data = list(df.of("RUN"))
    assert script.heredocs[0].name == "EOF" and (script.heredocs[0].line, script.heredocs[0].end_line) == (2, 7)
    assert {p.kind for p in script.physical[1:]} == {HEREDOC}
    assert [(c.argv, c.line, c.in_heredoc) for c in script.commands] == [
        (("set", "-e"), 2, True),
        (("pip", "install", "a", "b"), 3, True),
        (("echo", "done"), 6, True),
    ]
    assert data.heredocs[0].body == "[global]\nindex-url = https://mirrors.example.com/simple"
    assert data.heredocs[0].strip_tabs
    assert [(c.argv, [(r.op, r.target and r.target.raw) for r in c.redirects]) for c in data.commands] == [
        (("cat",), [("<<-", "'CONF'"), (">", "/etc/pip.conf")])
    ]


def test_escape_directive_backtick() -> None:
    df = parse("# escape=`\nFROM mcr.example.com/windows\nRUN dir c: `\n    && echo hi\n")
    assert df.escape == "`"
    run = _one(df, "RUN")
    assert (run.line, run.end_line) == (3, 4)
    assert [c.argv for c in run.commands] == [("dir", "c:"), ("echo", "hi")]


def test_trailing_continuation_at_end_of_file() -> None:
    df = parse("RUN echo a && \\\n    echo b \\\n\n# trailing\n")
    run = _one(df, "RUN")
    assert (run.line, run.end_line) == (1, 2)
    assert [p.number for p in run.physical] == [1, 2]


def test_comment_word_ends_the_line() -> None:
    cmds = commands(Source.single("pip install a  # comment && rm -rf /\necho b", 1))
    assert [(c.argv, c.op) for c in cmds] == [(("pip", "install", "a"), "\n"), (("echo", "b"), "")]


def test_never_raises_on_garbage() -> None:
    rng = random.Random(7)
    alphabet = "RUN ENV FROM ARG \\ \n \" ' ` $ ( ) { } [ ] < > | & ; # = -- <<EOF EOF"
    pieces = [*alphabet.split(" "), " ", "\n", "\\\n"]
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        df = parse(text)
        for instr in df.instructions:
            for cmd in instr.commands:
                assert cmd.words  # every command has at least one word
    assert parse("").instructions == ()
    assert parse("RUN\n").instructions[0].commands == ()
    assert parse('RUN ["unterminated\n').instructions[0].json_args is None


def test_powershell_runs_are_not_read_as_posix_shell() -> None:
    df = parse(
        'FROM mcr.example.com/windows/servercore\nSHELL ["powershell", "-Command"]\nRUN Write-Host hi; echo x\n'
        "FROM ubuntu:22.04\nRUN echo y\n"
    )
    runs = list(df.of("RUN"))
    assert runs[0].commands == ()
    assert [c.argv for c in runs[1].commands] == [("echo", "y")]


# -- expand: ARG and ENV values substituted the way the builder does ------------------------------------------------

DEFS = [(1, "CANN", "8.3.rc1"), (2, "DEVICE", "910b"), (3, "TAG", "${CANN}-${DEVICE}-ubuntu22.04-py3.11"), (4, "E", "")]


def test_expand_follows_values_that_name_other_args() -> None:
    assert expand("quay.io/ascend/cann:${TAG}", DEFS, 10) == (
        "quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        {"TAG": 3, "CANN": 1, "DEVICE": 2},
    )


def test_expand_nested_defaults_and_alternatives() -> None:
    assert expand("${UNSET:-${CANN:-9.0.0}-x}", DEFS, 10) == ("8.3.rc1-x", {"CANN": 1})
    assert expand("${E:-z}|${E-z}|${E:+q}|${CANN:+q${DEVICE}}", DEFS, 10) == (
        "z|||q910b",
        {"E": 4, "CANN": 1, "DEVICE": 2},
    )


def test_expand_leaves_the_unknown_as_written() -> None:
    text = "${UNSET:+q} $UNSET ${UNSET} ${X:?} ${ $1 $$"
    assert expand(text, DEFS, 10) == (text, {})
    # a definition after the line does not count
    assert expand("${CANN}", DEFS, 1) == ("${CANN}", {})


def test_expand_overrides_win_over_defaults() -> None:
    assert expand("${TAG}", DEFS, 10, {"CANN": "9.0.0"}) == (
        "9.0.0-910b-ubuntu22.04-py3.11",
        {"TAG": 3, "CANN": 0, "DEVICE": 2},
    )


def test_an_escape_character_right_after_the_first_word_continues_the_instruction() -> None:
    # Docker joins the lines before it reads the instruction: `RUN\` is a RUN, and a left-over `$X:\` line of a
    # broken ENV takes the next line with it.
    df = parse("FROM x\nRUN\\\n  echo hi\n$A/lib:\\\n$B\nENV C=1\n")
    assert [(i.keyword, i.line, i.end_line) for i in df.instructions] == [
        ("FROM", 1, 1),
        ("RUN", 2, 3),
        ("$A/LIB:", 4, 5),
        ("ENV", 6, 6),
    ]
