"""Unit tests for the Python-code rules (NPU401, NPU402), the docs rules (NPU501-NPU503) and their parsers."""

from __future__ import annotations

import ast

import pytest

from checks.engine import run
from checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from checks.parsers import pyast
from checks.parsers.markdown import parse, resolve
from checks.rule import all_rules

MINE = ("NPU401", "NPU402", "NPU501", "NPU502", "NPU503")
REPOS = ["verl-project/verl", "volcengine/verl"]


def findings(report, rule):  # type: ignore[no-untyped-def]
    return sorted((f.path, f.line) for f in report.findings if f.rule == rule)


# -- rule documentation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rid", MINE)
def test_rule_docs_have_why_bad_good_fix(rid: str) -> None:
    doc = all_rules()[rid].doc()
    for section in ("Why:", "Bad", "Good", "Fix:"):
        assert section in doc, f"{rid} docstring lacks {section}"
    assert "\u200b" not in doc


# -- markdown / reStructuredText parser -----------------------------------------------------------------------------


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


# -- Python: NPU guards -----------------------------------------------------------------------------------------------


def _reach_of_calls(code: str) -> dict[str, bool]:
    tree = pyast.parse(code)
    assert tree is not None
    return {pyast.callee_name(v.node): v.reach for v in pyast.walk_npu(tree) if isinstance(v.node, ast.Call)}


def test_guards() -> None:
    code = (
        "def f(d):\n"
        "    if is_cuda_available:\n        cuda_body()\n    else:\n        cuda_else()\n"
        "    if is_npu_available:\n        npu_body()\n    else:\n        npu_else()\n"
        "    if d != 'npu':\n        not_npu()\n"
        "    x = a() if torch.cuda.is_available() else b()\n"
        "    if not is_cuda_available:\n        return\n"
        "    after_exit()\n"
    )
    reach = _reach_of_calls(code)
    assert reach["cuda_body"] is False and reach["cuda_else"] is True
    assert reach["npu_body"] is True and reach["npu_else"] is False
    assert reach["not_npu"] is False
    assert reach["a"] is False and reach["b"] is True
    assert reach["after_exit"] is False


def test_syntax_error_is_silent() -> None:
    assert pyast.parse("def f(:\n  pass\n") is None


# -- NPU401 --------------------------------------------------------------------------------------------------------

LIB = (
    "class RayResourcePool:\n"
    "    def get_placement_groups(self, strategy='STRICT_PACK', name=None, device_name='cuda'):\n"
    "        return []\n"
)


def _audit(files: dict[str, str | None]):  # type: ignore[no-untyped-def]
    return run(ChangeSet(head=MemoryTree(files), audit=True))


def test_npu401_positional_argument_covers_the_default() -> None:
    user = "def f(p, d):\n    p.get_placement_groups('PACK', None, d)\n    p.get_placement_groups('PACK')\n"
    report = _audit({"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": user})
    assert findings(report, "NPU401") == [("verl/trainer/u.py", 3)]


def test_npu401_index_is_limited_to_index_dirs() -> None:
    user = "def f(p):\n    p.get_placement_groups()\n"
    report = _audit({"recipe/pool.py": LIB, "verl/trainer/u.py": user})
    assert findings(report, "NPU401") == []


def test_npu401_only_added_lines_on_a_change() -> None:
    old = "def f(p):\n    p.get_placement_groups()\n"
    new = old + "\n\ndef g(p):\n    p.get_placement_groups()\n"
    base = {"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": old}
    head = {"verl/single_controller/ray/base.py": LIB, "verl/trainer/u.py": new}
    change = FileChange("verl/trainer/u.py", ChangeStatus.MODIFIED, added_lines=frozenset({3, 4, 5, 6}))
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes={change.path: change}))
    assert findings(report, "NPU401") == [("verl/trainer/u.py", 6)]


# -- NPU402 --------------------------------------------------------------------------------------------------------


def test_npu402_pure_deletion_without_added_lines_is_not_reported_and_does_not_crash() -> None:
    base = {"verl/utils/vllm/npu_vllm_patch.py": "def apply_npu_vllm_patches():\n    pass\n"}
    change = FileChange("verl/utils/vllm/npu_vllm_patch.py", ChangeStatus.DELETED)
    report = run(ChangeSet(head=MemoryTree({}), base=MemoryTree(base), changes={change.path: change}))
    assert report.errors == []
    assert findings(report, "NPU402") == []


def test_npu402_audit_is_silent() -> None:
    assert findings(_audit({"verl/utils/vllm/npu_vllm_patch.py": "def apply_npu_patch():\n    pass\n"}), "NPU402") == []


# -- NPU501 --------------------------------------------------------------------------------------------------------


def test_npu501_binary_file_with_invisible_name_is_reported_on_line_one() -> None:
    report = _audit({"docs/ascend_tutorial/img/\u200bflow.png": None})
    assert findings(report, "NPU501") == [("docs/ascend_tutorial/img/\u200bflow.png", 1)]


def test_npu501_suggestion_removes_only_the_invisible_character() -> None:
    text = "见[指南](./a\u200b.md)，👩\u200d💻\n"
    report = _audit({"docs/x.md": text, "docs/a.md": "# a\n"})
    (f,) = [f for f in report.findings if f.rule == "NPU501"]
    assert f.suggestion == "见[指南](./a.md)，👩\u200d💻"


# -- NPU503 --------------------------------------------------------------------------------------------------------


def test_npu503_note_parsing_takes_the_new_version() -> None:
    from checks.rules.npu503_version_table_inconsistent import _pairs

    text = (
        "-  2026/08/03：将 vLLM / vLLM-Ascend 从 ``0.18.0`` 更新为 ``0.23.0``\\ ，vLLM\n"
        "   对应基础环境版本同步调整为 torch ``2.10.0``\\ 、torch_npu ``2.10.0.post2``\\ 。\n"
    )
    doc = parse(text, "rst")
    pairs = _pairs(doc, (1, 2), ["vLLM-Ascend", "torch_npu", "torch", "vLLM"])
    assert pairs == {
        "vllm": ("0.23.0", 1),
        "vllm-ascend": ("0.23.0", 1),
        "torch": ("2.10.0", 2),
        "torch_npu": ("2.10.0.post2", 2),
    }


def test_npu503_release_ref_row_checks_device_but_not_cann() -> None:
    tags = (
        "| Device | CANN Base Image | Dockerfile |\n|---|---|---|\n"
        "| A3 | 7.0.0 | [D](https://github.com/verl-project/verl/blob/release/v0.6.1/"
        "docker/ascend/Dockerfile.ascend_8.2.rc1_a3) |\n"
    )
    assert findings(_audit({"docker/ascend/supported_tags.md": tags}), "NPU503") == []


# -- NPU502 -------------------------------------------------------------------------------------------------------


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
