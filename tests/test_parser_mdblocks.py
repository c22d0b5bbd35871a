"""The one Markdown scanner (CommonMark, markdown-it-py) and its three readers: the docs parser's code lines, the
shell blocks of docs, and the App's `/recheck`."""

from __future__ import annotations

from npu_review.bot.routers.recheck import has_recheck
from npu_review.checks.parsers.codeblocks import shell_blocks
from npu_review.checks.parsers.markdown import parse
from npu_review.checks.parsers.mdblocks import blocks


def kinds(text: str) -> list[tuple[str, int, int, str]]:
    return [(b.kind, b.start, b.end, b.info) for b in blocks(text)]


def test_fences_indented_blocks_and_paragraphs_with_their_lines() -> None:
    text = "intro\n\n```bash\necho a\n````\n\n    indented\n\n~~~\nopen to the end\n"
    assert kinds(text) == [
        ("paragraph", 1, 1, ""),
        # closed by a longer fence (the docs parser this replaced kept reading past it)
        ("fence", 3, 5, "bash"),
        ("code", 7, 7, ""),
        ("fence", 9, 10, ""),  # unclosed: runs to the end
    ]
    fence = blocks(text)[1]
    assert fence.body == ((4, "echo a"),)


def test_a_fence_in_a_list_item_loses_the_items_indentation_and_one_in_a_quote_is_marked() -> None:
    text = "1. Install:\n\n   ```bash\n   pip install x\n     --pre\n   ```\n\n> ```sh\n> rm -rf y\n> ```\n"
    fence, quoted = (b for b in blocks(text) if b.kind == "fence")
    assert (fence.body, fence.quoted) == (((4, "pip install x"), (5, "  --pre")), False)
    assert (quoted.body, quoted.quoted) == (((9, "rm -rf y"),), True)
    # Shell blocks leave the quoted one out (a suggestion made from its body would drop the `>`).
    assert [b.lines for b in shell_blocks(text, "md")] == [((4, "pip install x"), (5, "  --pre"))]


def test_what_commonmark_does_not_call_a_fence() -> None:
    # Inside an HTML block (no blank line after the tag), and indented four spaces at the top level.
    text = "<details>\n```bash\necho a\n```\n</details>\n\npara\n\n    ```bash\n    echo b\n    ```\n"
    assert [k for k in kinds(text) if k[0] == "fence"] == []
    assert shell_blocks(text, "md") == []


def test_mkdocs_tabs_and_admonitions_hold_blocks_of_their_own() -> None:
    # vllm-ascend's docs keep their launch commands in content tabs: without the containers, CommonMark reads
    # those fences as indented code, and the launch rules would not see them.
    text = (
        '=== "Atlas A2"\n\n    ```bash\n    vllm serve x \\\n      --port 1\n    ```\n\n    Then:\n\n'
        '??? note "More"\n    ```sh\n    ls\n    ```\nafter\n\n    indented code\n'
    )
    assert kinds(text) == [
        ("fence", 3, 6, "bash"),
        ("paragraph", 8, 8, ""),
        ("fence", 11, 13, "sh"),
        ("paragraph", 14, 14, ""),
        ("code", 16, 16, ""),
    ]
    assert [b.lines for b in shell_blocks(text, "md")] == [
        ((4, "vllm serve x \\"), (5, "  --port 1")),
        ((12, "ls"),),
    ]


def test_line_numbers_are_those_of_splitlines() -> None:
    # A form feed or U+2028 ends a line for str.splitlines() (and for every rule), not for markdown-it.
    text = "a\x0cb\n\n```bash\necho\u2028x\n```\n"
    assert text.splitlines()[3:6] == ["```bash", "echo", "x"]
    (fence,) = (b for b in blocks(text) if b.kind == "fence")
    assert (fence.start, fence.end, fence.body) == (4, 7, ((5, "echo"), (6, "x")))


def test_the_docs_parser_takes_its_code_lines_from_the_scanner() -> None:
    text = "[a](x.md)\n\n````md\n[b](y.md)\n```\n[c](z.md)\n````\n\n    [d](w.md)\n\n[e](v.md)\n"
    doc = parse(text, "md")
    assert sorted(doc.code) == [3, 4, 5, 6, 7, 9]
    assert [link.target for link in doc.links] == ["x.md", "v.md"]


def test_recheck_reads_paragraphs_only() -> None:
    assert has_recheck("/recheck")
    assert has_recheck("Thanks!\r\n/recheck\r\n")
    assert not has_recheck("```\n/recheck\n```")
    assert not has_recheck("    /recheck")
    assert not has_recheck("> /recheck")
    assert not has_recheck("`/recheck`")


def test_a_session_pasted_into_a_shell_block_is_read_as_a_console_one() -> None:
    text = (
        "```shell\n"
        "(venv) root@node:~/src# npu-smi info -t topo\n"
        "NPU0       X          HCCS\n"
        "  X    = Self\n"
        "[root@host work]# echo done\n"
        "done\n"
        "```\n"
        "```bash\n"
        "# root@node:~# is a comment here, not a prompt\n"
        "export A=1\n"
        "```\n"
    )
    session, script = shell_blocks(text, "md")
    assert session.lines == ((2, "npu-smi info -t topo"), (3, ""), (4, ""), (5, "echo done"), (6, ""))
    assert script.lines == ((9, "# root@node:~# is a comment here, not a prompt"), (10, "export A=1"))
