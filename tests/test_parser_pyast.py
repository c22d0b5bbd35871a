"""The Python reader of the Python-code rules (NPU401, NPU402): which calls an NPU run reaches."""

from __future__ import annotations

import ast

from npu_review.checks.parsers import pyast


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
