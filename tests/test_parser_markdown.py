"""The Markdown and reStructuredText parser the docs rules (NPU501-NPU503) read: tables, links, sections."""

from __future__ import annotations

import pytest

from npu_review.checks.parsers.markdown import parse, resolve

REPOS = ["verl-project/verl", "volcengine/verl"]


def test_rst_simple_table_with_cjk_headers_splits_by_display_width() -> None:
    text = (
        "============== ==================== ============== ====================\n"
        "设备类型         CANN基础镜像版本     推理后端        参考文件\n"
        "============== ==================== ============== ====================\n"
        "A2              9.1.0                  vLLM            `Dockerfile.ascend_9.1.0_a2 <https://x/y>`_\n"
        "============== ==================== ============== ====================\n"
    )
    doc = parse(text, "rst")
    (table,) = doc.tables
    assert table.header == ("设备类型", "CANN基础镜像版本", "推理后端", "参考文件")
    (row,) = table.rows
    assert [c.text for c in row.cells][:3] == ["A2", "9.1.0", "vLLM"]
    assert [k.target for k in doc.links_in(row.cells[3])] == ["https://x/y"]


def test_md_pipe_table_keeps_pipes_inside_code_spans() -> None:
    doc = parse("| a | b |\n|---|---|\n| `x | y` | [t](./z.md) |\n", "md")
    (table,) = doc.tables
    assert [c.text for c in table.rows[0].cells] == ["`x | y`", "[t](./z.md)"]


def test_links_skip_code_blocks_and_inline_code() -> None:
    md = '```bash\nsee [a](./in_code.md)\n```\nInline `[b](./inline.md)` and [c](./real.md "title").\n'
    assert [k.target for k in parse(md, "md").links] == ["./real.md"]
    rst = ".. code-block:: bash\n\n   cd `x <./in_code>`_\n\nText ``<./lit>`_`` and `y <./real.rst>`__.\n"
    assert [k.target for k in parse(rst, "rst").links] == ["./real.rst"]


def test_bare_url_stops_at_cjk_punctuation_and_trailing_invisible() -> None:
    doc = parse("见 https://example.com/a_b\u200b，以及 https://example.com/x).\n", "md")
    assert [k.target for k in doc.links] == ["https://example.com/a_b", "https://example.com/x"]


def test_rst_link_whose_text_starts_on_the_previous_line() -> None:
    doc = parse("按 `PR\n   #6291 <https://github.com/verl-project/verl/pull/6291>`__ 更新\n", "rst")
    assert [(k.line, k.target) for k in doc.links] == [(2, "https://github.com/verl-project/verl/pull/6291")]


def test_sections_nest_by_heading_level() -> None:
    doc = parse("# A\n\n## History Images\n\n| x | y |\n|---|---|\n| 1 | 2 |\n", "md")
    assert doc.section(7) == ("A", "History Images")


@pytest.mark.parametrize(
    ("target", "kind", "path"),
    [
        ("#硬件支持", "anchor", ""),
        ("https://quay.io/repository/ascend/verl", "external", ""),
        ("https://github.com/verl-project/verl-recipe/blob/main/x.sh", "external", ""),
        ("https://github.com/verl-project/verl/blob/release/v0.7.0/docker/ascend/D", "unknown", ""),
        ("https://github.com/volcengine/verl/blob/main/docker/ascend/D#L2", "repo", "docker/ascend/D"),
        ("https://github.com/verl-project/verl/tree/main/docs/", "repo", "docs"),
        ("../../../scripts/install.sh", "repo", "scripts/install.sh"),
        ("../../../../outside.md", "unknown", ""),
        ("{verl-root-path}/docker/ascend", "unknown", ""),
    ],
)
def test_resolve(target: str, kind: str, path: str) -> None:
    t = resolve("docs/ascend_tutorial/get_start/x.rst", target, REPOS, ["main"])
    assert (t.kind, t.path) == (kind, path)


def test_tables_and_list_items_are_read_on_first_use_and_stay_unknown_after_a_parser_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "# T\n\n- one\n  more\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    doc = parse(text, "md")
    assert [(t.line, t.header, [c.text for c in t.rows[0].cells]) for t in doc.tables] == [(7, ("a", "b"), ["1", "2"])]
    assert doc.bullets == [(3, 4), (5, 5)]

    import npu_review.checks.parsers.markdown as md

    def broken(doc: md.Document, out: list[md.Table]) -> None:
        raise ValueError("bug")

    monkeypatch.setattr(md, "_md_tables", broken)
    doc = parse(text, "md")
    assert [k.line for k in doc.links] == [] and doc.headings[0].title == "T"  # read before the tables
    assert doc.tables == [] and doc.bullets == []  # a bug in the tables: they and the list items are unknown


def test_a_footnote_is_no_link_and_an_unclosed_destination_is_none() -> None:
    text = (
        "[^1]: 此处使能的特性包含本文[5.1](###5.1 复用)\n"
        "请参考[W8A8](w8a8.md。\n"
        "[ref]: ./docs/install.md\n"
        'See [the guide](./guide.md) and [the FAQ](faq.md "FAQ").\n'
    )
    doc = parse(text, "md")
    assert [(k.line, k.target, k.syntax) for k in doc.links] == [
        (1, "###5.1", "inline"),
        (3, "./docs/install.md", "reference"),
        (4, "./guide.md", "inline"),
        (4, "faq.md", "inline"),
    ]
