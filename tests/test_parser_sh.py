"""The shell layer: sources and their line maps, the lexer's exact tokens, words and simple commands."""

from __future__ import annotations

from npu_review.checks.parsers.sh import (
    ArrayWord,
    Op,
    Source,
    Word,
    commands,
    heredoc_markers,
    line_commands,
    logical_lines,
    split_logical,
    split_words,
    tokens,
    unquote,
)


def toks(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, line) of every token of every logical line of a file."""
    out = []
    for ll in logical_lines(Source.file(text)):
        for t in tokens(ll):
            if isinstance(t, Word):
                out.append(("w", t.raw, t.line))
            elif isinstance(t, ArrayWord):
                out.append(("a", t.raw, t.line))
            else:
                assert isinstance(t, Op)
                out.append(("op", t.text, t.line))
    return out


# -- sources ---------------------------------------------------------------------------------------------------


def test_a_file_source_maps_offsets_to_lines() -> None:
    src = Source.file("a\nbb\nccc\n", first=10)
    assert [src.line_at(i) for i in (0, 1, 2, 4, 5, 8)] == [10, 10, 11, 11, 12, 12]


def test_joined_segments_map_to_their_lines() -> None:
    src = Source.joined([(3, "pip install "), (5, "a "), (6, "b")])
    assert src.text == "pip install a b"
    assert [src.line_at(i) for i in (0, 11, 12, 14)] == [3, 3, 5, 6]


def test_yaml_block_lines_and_a_gap() -> None:
    src = Source.lines([(7, "echo a"), (9, "echo b")])
    assert src.text == "echo a\necho b\n"
    assert [src.line_at(0), src.line_at(7)] == [7, 9]
    assert Source.lines([(4, "x"), (5, "y")]).plain


def test_tail_keeps_the_offsets_of_the_whole_text() -> None:
    src = Source.joined([(1, "--mount=type=cache "), (2, "pip install x")])
    [cmd] = commands(src.tail(19))
    assert [(w.raw, w.offset, w.line) for w in cmd.words] == [("pip", 19, 2), ("install", 23, 2), ("x", 31, 2)]


# -- the lexer -------------------------------------------------------------------------------------------------


def test_operators_redirections_and_words() -> None:
    assert toks("a && b || c; d | e |& f & g 2>&1 >>log <in\n") == [
        ("w", "a", 1),
        ("op", "&&", 1),
        ("w", "b", 1),
        ("op", "||", 1),
        ("w", "c", 1),
        ("op", ";", 1),
        ("w", "d", 1),
        ("op", "|", 1),
        ("w", "e", 1),
        ("op", "|&", 1),
        ("w", "f", 1),
        ("op", "&", 1),
        ("w", "g", 1),
        ("op", "2>&", 1),
        ("w", "1", 1),
        ("op", ">>", 1),
        ("w", "log", 1),
        ("op", "<", 1),
        ("w", "in", 1),
    ]


def test_quotes_and_expansions_keep_operators_inside_words() -> None:
    text = "echo 'a && b' \"c; $(d | e)\" ${F:-g h} `i; j` $((1 + 2)) k\\ l\n"
    assert toks(text) == [
        ("w", "echo", 1),
        ("w", "'a && b'", 1),
        ("w", '"c; $(d | e)"', 1),
        ("w", "${F:-g h}", 1),
        ("w", "`i; j`", 1),
        ("w", "$((1 + 2))", 1),
        ("w", "k\\ l", 1),
    ]


def test_continuations_comments_and_multiline_quotes() -> None:
    text = 'a \\\n  b # comment && x\n# whole line\nc "one\ntwo" d\n'
    assert toks(text) == [("w", "a", 1), ("w", "b", 2), ("w", "c", 4), ("w", '"one\ntwo"', 4), ("w", "d", 5)]
    lines = logical_lines(Source.file(text))
    assert [(ll.line, ll.end_line, ll.text) for ll in lines] == [(1, 2, "a   b "), (4, 5, 'c "one\ntwo" d')]


def test_a_hash_inside_a_word_is_no_comment() -> None:
    assert toks("echo a#b '#c' ${X#y} #d\n") == [
        ("w", "echo", 1),
        ("w", "a#b", 1),
        ("w", "'#c'", 1),
        ("w", "${X#y}", 1),
    ]


def test_here_document_bodies_are_skipped_and_recorded() -> None:
    text = "cat <<EOF > f\nbody && x\nEOF\ncat <<-'END'\n\tmore\n\tEND\necho done\n"
    lines, breaks, heredocs = split_logical(Source.file(text))
    assert [(ll.line, ll.text) for ll in lines] == [(1, "cat <<EOF > f"), (4, "cat <<-'END'"), (7, "echo done")]
    assert heredocs == [(2, 3), (5, 6)]
    assert breaks == []
    assert toks(text)[:4] == [("w", "cat", 1), ("op", "<<", 1), ("w", "EOF", 1), ("op", ">", 1)]
    assert heredoc_markers("cat <<EOF <<-'B' <<<here") == [("EOF", False), ("B", True)]


def test_arrays_are_one_token() -> None:
    assert toks("A=(x 'y z'\n  w) B+=(1)\n") == [("a", "A=(x 'y z'\n  w)", 1), ("a", "B+=(1)", 2)]


def test_offsets_of_a_script_point_into_its_text() -> None:
    text = "x=1\nfoo \\\n  bar\n"
    words = [t for ll in logical_lines(Source.file(text)) for t in tokens(ll)]
    assert [
        (w.raw, w.line, w.offset, text[w.offset : w.offset + len(w.raw)]) for w in words if isinstance(w, Word)
    ] == [
        ("x=1", 1, 0, "x=1"),
        ("foo", 2, 4, "foo"),
        ("bar", 3, 12, "bar"),
    ]


def test_split_words_breaks_on_blanks_only() -> None:
    text = 'A="b c" D=e;f G=$(h i)'
    assert [text[s:e] for s, e in split_words(text)] == ['A="b c"', "D=e;f", "G=$(h i)"]


# -- words -----------------------------------------------------------------------------------------------------


def test_unquote_removes_quotes_and_escapes_but_expands_nothing() -> None:
    assert unquote("plain") == "plain"
    assert unquote('\'a b\'"c\\"d"e\\ f') == 'a bc"de f'
    assert unquote('"$(echo "x y")"') == '$(echo "x y")'
    assert unquote("${A:-'b'}`c 'd'`") == "${A:-'b'}`c 'd'`"
    assert unquote('"\\$HOME \\n"') == "$HOME \\n"


# -- simple commands -------------------------------------------------------------------------------------------


def test_commands_have_words_argv_operators_and_redirects() -> None:
    text = "if true; then A=1 pip install 'x y' >/dev/null 2>&1 || exit 1; fi\n(cd d && make)\necho end"
    cmds = commands(Source.file(text))
    assert [(c.argv, c.op, [r.text for r in c.redirects]) for c in cmds] == [
        (("true",), ";", []),
        (("pip", "install", "x y"), "||", [">/dev/null", "2>&1"]),
        (("exit", "1"), ";", []),
        (("fi",), "\n", []),
        (("cd", "d"), "&&", []),
        (("make",), "\n", []),
        (("echo", "end"), "", []),
    ]
    pip = cmds[1]
    assert pip.start == 2 and pip.name == "pip"
    assert [(w.raw, w.line) for w in pip.words] == [("then", 1), ("A=1", 1), ("pip", 1), ("install", 1), ("'x y'", 1)]
    assert [(n, v, w.raw) for n, v, w in pip.assignments()] == [("A", "1", "A=1")]
    assert [(r.op, r.target.raw if r.target else None, r.index) for r in pip.redirects] == [
        (">", "/dev/null", 5),
        ("2>&", "1", 5),
    ]


def test_a_command_of_redirections_only_is_left_out() -> None:
    assert commands(Source.file("> file\n")) == []


def test_glue_keeps_a_version_spec_in_its_word_and_bash_reading_splits_it() -> None:
    text = 'pip install torch>=2.1 "x<3" >log\necho "k=v">>$GITHUB_OUTPUT\n'
    glued = commands(Source.file(text))
    assert [(c.argv, [r.text for r in c.redirects]) for c in glued] == [
        (("pip", "install", "torch>=2.1", "x<3"), [">log"]),
        (("echo", "k=v>>$GITHUB_OUTPUT"), []),
    ]
    bash = commands(Source.file(text), glue=False)
    assert [(c.argv, [(r.op, r.target and r.target.raw, r.index) for r in c.redirects]) for c in bash] == [
        (("pip", "install", "torch", "x<3"), [(">", "=2.1", 3), (">", "log", 4)]),
        (("echo", "k=v"), [(">>", "$GITHUB_OUTPUT", 2)]),
    ]


def test_line_commands_reads_one_logical_line_on_one_line() -> None:
    cmds = line_commands("A=1 docker push $A && echo 'a;b' | tee x", 12, glue=False)
    assert [(c.argv, c.op, c.line, c.start) for c in cmds] == [
        (("docker", "push", "$A"), "&&", 12, 1),
        (("echo", "a;b"), "|", 12, 0),
        (("tee", "x"), "", 12, 0),
    ]


def test_a_tail_inside_a_line_of_a_file_keeps_its_lines_and_offsets() -> None:
    src = Source.file("x\nRUN a \\\n  b\n", first=5).tail(6)
    assert (src.text, src.base, [src.line_at(i) for i in range(len(src.text))]) == (
        "a \\\n  b\n",
        6,
        [6, 6, 6, 6, 7, 7, 7, 7],
    )
    [cmd] = commands(src)
    assert [(w.raw, w.line, w.offset) for w in cmd.words] == [("a", 6, 6), ("b", 7, 12)]


def test_heredoc_bodies_can_be_read_as_shell() -> None:
    text = "cat <<'EOF' > run.sh\npip install vllm-ascend==0.9.1\nEOF\nbash run.sh\n"
    assert [c.argv for c in commands(Source.file(text))] == [("cat",), ("bash", "run.sh")]
    assert [(c.argv, c.line) for c in commands(Source.file(text), heredoc_bodies=True)] == [
        (("cat",), 1),
        (("pip", "install", "vllm-ascend==0.9.1"), 2),
        (("EOF",), 3),
        (("bash", "run.sh"), 4),
    ]
