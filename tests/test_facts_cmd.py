"""`npu-review facts`: every shipped section with its source and date; a universal section without one fails."""

from __future__ import annotations

import json
import re

import pytest

from npu_review.checks.facts import load
from npu_review.checks.facts.schema import UNIVERSAL, sections, sourced_sections
from npu_review.cli import main
from npu_review.facts_cmd import report, unsourced


def test_every_universal_section_names_its_source_and_date() -> None:
    # The guard of the facts' provenance: a section added without a source or a date fails here.
    assert unsourced(load()) == []
    for profile in ("generic", "verl", "vllm-ascend"):
        for section in report(load(profile=profile))["sections"]:
            assert section["source"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", section["date"]), section["name"]


def test_a_section_without_a_source_or_date_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert unsourced(load({"graph_modes": {"source": " "}, "env_hccl": {"date": ""}})) == ["graph_modes", "env_hccl"]
    assert main(["facts"]) == 0
    assert capsys.readouterr().err == ""


def test_the_text_lists_each_section_with_its_source_date_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facts"]) == 0
    out = capsys.readouterr().out
    for name in sections(UNIVERSAL):
        block = out.split(f"\n{name} (", 1)[1].split("\n\n", 1)[0]
        assert "\n  source: " in block and "(none)" not in block, name
        assert re.search(r"\n  date:   \d{4}-\d{2}-\d{2}", block), name
    assert "torch_npu_releases (universal, read from its sources by bench/facts/refresh.py)" in out
    assert re.search(r"\n  source: Ascend/pytorch@[0-9a-f]{12} COMPATIBILITY\.en\.md", out)


def test_json_carries_every_section_with_its_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facts", "--format", "json", "--profile", "generic"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == 1 and doc["profile"] == "generic"
    by_name = {s["name"]: s for s in doc["sections"]}
    assert [n for n, s in by_name.items() if s["sourced"]] == list(sourced_sections())
    releases = by_name["torch_npu_releases"]
    assert releases["data"]["releases"]["2.9.0.post4"] == {"torch": "2.9.0", "cann": "9.0.0", "listed": False}
    assert releases["sizes"]["releases"] == len(releases["data"]["releases"])
    assert by_name["published_versions"]["source"].startswith("PyPI JSON API")


def test_one_section_in_full_and_an_unknown_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facts", "env_cuda"]) == 0
    out = capsys.readouterr().out
    assert '"NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME"' in out and "graph_modes" not in out
    assert main(["facts", "env_cudaa"]) == 2
    assert "unknown facts section 'env_cudaa'" in capsys.readouterr().err
