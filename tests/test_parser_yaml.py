"""YAML with line marks: lines of keys, values and block-scalar lines; errors, duplicates and limits."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_review.checks.parsers import yamlmarks
from npu_review.checks.parsers.yamlmarks import parse

WORKFLOW = textwrap.dedent(
    """\
    name: e2e_ascend
    on:
      pull_request:
        paths:
          - "verl/**"
          - ".github/workflows/e2e_ascend.yml"
    env:
      IMAGE: swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl:latest-vllm-a3-ubuntu
    jobs:
      e2e:
        if: github.repository_owner == 'verl-project'
        runs-on: linux-aarch64-a3-16
        strategy:
          matrix:
            include:
              - device: a3
        container:
          image: ${{ env.IMAGE }}
        steps:
          - uses: actions/checkout@v4
          - name: Run
            run: |
              set -e

              bash tests/special_npu/run.sh
          # - name: Disabled
          #   run: echo skipped
    """
)


def test_lines_of_keys_and_values() -> None:
    doc = parse(WORKFLOW)
    assert doc.ok and doc.root is not None
    root = doc.root
    assert root.scalar("jobs", "e2e", "runs-on") == "linux-aarch64-a3-16"
    assert root.at("jobs", "e2e", "runs-on").line == 12  # type: ignore[union-attr]
    assert root.at("jobs", "e2e", "if").line == 11  # type: ignore[union-attr]
    assert root.at("jobs", "e2e", "container", "image").line == 18  # type: ignore[union-attr]
    assert root.at("env", "IMAGE").line == 8  # type: ignore[union-attr]
    assert [(n.value, n.line) for n in root.at("on", "pull_request", "paths").items] == [  # type: ignore[union-attr]
        ("verl/**", 5),
        (".github/workflows/e2e_ascend.yml", 6),
    ]
    include = root.at("jobs", "e2e", "strategy", "matrix", "include", 0)
    assert include is not None and include.scalar("device") == "a3"
    assert root.key_node("jobs") is not None and root.key_node("jobs").line == 9  # type: ignore[union-attr]


def test_block_scalar_lines_point_inside_the_block() -> None:
    root = parse(WORKFLOW).root
    assert root is not None
    run = root.at("jobs", "e2e", "steps", 1, "run")
    assert run is not None and run.style == "|"
    assert run.text_lines() == [(23, "set -e"), (24, ""), (25, "bash tests/special_npu/run.sh")]
    # the commented-out step is not there at all
    assert len(root.at("jobs", "e2e", "steps").items) == 2  # type: ignore[union-attr]


def test_folded_and_plain_multiline_scalars_are_located_by_search() -> None:
    root = parse("a: >-\n  first part\n  second part\nb: one\n  two\n").root
    assert root is not None
    assert root.at("a").text_lines() == [(1, "first part second part")]  # type: ignore[union-attr]
    assert root.at("b").value == "one two"  # type: ignore[union-attr]


def test_on_key_stays_a_string_and_values_stay_text() -> None:
    root = parse("on: push\nversion: 3.10\nflag: yes\n").root
    assert root is not None
    assert root.scalar("on") == "push"
    assert root.scalar("version") == "3.10"
    assert root.scalar("flag") == "yes"


def test_walk_yields_paths_in_document_order() -> None:
    root = parse("a:\n  b: [x, y]\n  c: z\n").root
    assert root is not None
    paths = [p for p, _ in root.walk()]
    assert paths == [(), ("a",), ("a", "b"), ("a", "b", 0), ("a", "b", 1), ("a", "c")]


def test_syntax_error_gives_a_line_not_an_exception() -> None:
    doc = parse("jobs:\n  e2e:\n    container:\n      image: x\n     options: y\n")
    assert not doc.ok and doc.root is None
    assert doc.error is not None and doc.error.line == 5
    assert "expected" in doc.error.message or "mapping" in doc.error.message


def test_tab_indentation_is_an_error() -> None:
    doc = parse("jobs:\n\tbuild: x\n")
    assert doc.error is not None and doc.error.line == 2


def test_duplicate_keys_are_recorded() -> None:
    doc = parse("jobs:\n  e2e:\n    runs-on: a\n    runs-on: b\n")
    assert doc.ok
    assert [(d.key, d.line, d.first_line) for d in doc.duplicates] == [("runs-on", 4, 3)]


def test_aliases_and_merge_keys_expand() -> None:
    root = parse("base: &b\n  x: 1\n  y: 2\nother:\n  <<: *b\n  y: 3\nref: *b\n").root
    assert root is not None
    assert root.scalar("other", "x") == "1"
    assert root.scalar("other", "y") == "3"
    assert root.scalar("ref", "y") == "2"


def test_alias_bomb_is_a_parse_error() -> None:
    lines = ['l0: &l0 ["a", "a", "a", "a", "a", "a", "a", "a", "a"]']
    for i in range(1, 9):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    doc = parse("\n".join(lines) + "\n")
    assert doc.error is not None
    assert "expands" in doc.error.message
    assert 1 <= doc.error.line <= 9


def test_recursive_alias_is_a_parse_error() -> None:
    doc = parse("a: &a [*a]\n")
    assert doc.error is not None and "nests deeper" in doc.error.message


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    doc = parse("[" * 5000 + "]" * 5000)
    assert doc.error is not None


def test_huge_file_is_refused() -> None:
    doc = parse("a: " + "x" * (yamlmarks.MAX_BYTES + 1))
    assert doc.error is not None and "too large" in doc.error.message


def test_empty_document_and_several_documents() -> None:
    assert parse("").root is None and parse("").ok
    assert parse("# only a comment\n").root is None
    doc = parse("a: 1\n---\nb: 2\n")
    assert doc.error is not None


def test_python_tags_are_refused_by_the_safe_loader() -> None:
    doc = parse("a: !!python/object/apply:os.system ['true']\n")
    # Composing never constructs objects; the node is kept as a plain scalar or sequence, nothing runs.
    assert doc.ok


_YAML_PIECES = [*"ab:-[]{}&*!|>#'\"\n\t ,?%@`\\", "<<", "  ", "x: ", "- ", "&a ", "*a"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_YAML_PIECES), max_size=120).map("".join))
def test_parse_never_raises(text: str) -> None:
    doc = parse(text)
    assert doc.ok or doc.error is not None
    if doc.root is not None:
        for _, node in doc.root.walk():
            node.text_lines()


def test_a_plain_scalar_on_one_line_is_a_smaller_node_with_the_same_parts() -> None:
    # ~174,000 of the ~197,000 scalars of a large tree's workflows, all kept for the run: line and value alone.
    import pickle
    import sys

    doc = parse("a: b\nc: 'd'\ne: |\n  f\ng: [h, 1]\n")
    assert doc.root is not None
    plain, quoted = doc.root.get("a"), doc.root.get("c")
    assert plain is not None and quoted is not None
    assert sys.getsizeof(plain) < sys.getsizeof(quoted)
    for node in (plain, pickle.loads(pickle.dumps(plain))):
        assert (node.kind, node.line, node.end_line, node.value, node.style) == (yamlmarks.SCALAR, 1, 1, "b", None)
        assert node.text_lines() == [(1, "b")] and node.source_lines() == []
    assert (quoted.line, quoted.end_line, quoted.value, quoted.style) == (2, 2, "d", "'")
    assert quoted.source_lines()[1] == "c: 'd'"
    block = doc.root.get("e")
    assert block is not None and (block.line, block.end_line, block.text_lines()) == (3, 4, [(4, "f")])
    assert [(i.line, i.end_line, i.value) for i in doc.root.at("g").items] == [(5, 5, "h"), (5, 5, "1")]  # type: ignore[union-attr]
