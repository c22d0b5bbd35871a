"""Issue 13: the notice policy, same-cause findings merged into one, and the judge's sample. What one rule's
findings say on verl's traps is pinned in that rule's module (tests/rules/test_npuXXX.py)."""

from __future__ import annotations

from pathlib import Path

from npu_review.checks.model import Finding, Severity
from tests.fixture_support import FIXTURES, load_case
from tests.rules.support import case_findings_change

# -- the notice policy and its config switch --------------------------------------------------------------------


def test_review_config_switch_parses_and_refuses_bad_values() -> None:
    import pytest

    from npu_review.checks.config import ConfigError, parse_config
    from npu_review.checks.engine import known_rule_ids

    assert parse_config(None, known_rule_ids()).inline_notices is False
    assert parse_config("review:\n  inline_notices: true\n", known_rule_ids()).inline_notices is True
    with pytest.raises(ConfigError, match=r"review.inline_notices: expected true or false"):
        parse_config("review:\n  inline_notices: sometimes\n", known_rule_ids())
    with pytest.raises(ConfigError, match=r"review: unknown key 'notices'"):
        parse_config("review:\n  notices: inline\n", known_rule_ids())
    assert parse_config(None, known_rule_ids()).max_inline_comments == 10
    assert parse_config("review:\n  max_inline_comments: 3\n", known_rule_ids()).max_inline_comments == 3
    for bad in ("-1", "2.5", "true", "many"):
        with pytest.raises(ConfigError, match=r"review.max_inline_comments: expected a whole number, 0 or more"):
            parse_config(f"review:\n  max_inline_comments: {bad}\n", known_rule_ids())


# -- same-cause findings: one finding, every rule id, one stable fingerprint ------------------------------------


WF = ".github/workflows/e2e.yml"


def _f(rule: str, name: str, sev: Severity, message: str, line: int = 20) -> Finding:
    return Finding(rule, name, sev, ".github/workflows/e2e.yml", line, line, message)


def test_same_cause_findings_on_one_line_merge_into_one() -> None:
    from npu_review.checks.engine import merge_same_cause

    merged = merge_same_cause(
        [
            _f("NPU202", "image-tag-not-produced", Severity.ERROR, "No build pushes `x`."),
            _f("NPU201", "mixed-image-tag-formats", Severity.ERROR, "`x` uses F2."),
            _f("NPU201", "mixed-image-tag-formats", Severity.ERROR, "`y` uses F1.", line=30),
            _f("NPU301", "tls-verification-disabled", Severity.WARNING, "curl -k"),
        ]
    )
    by_line = {(f.line, f.rule): f for f in merged}
    assert len(merged) == 3
    one = by_line[(20, "NPU201")]
    assert one.rule_ids == ("NPU201", "NPU202")
    assert one.message == "`x` uses F2. Also NPU202 (image-tag-not-produced): No build pushes `x`."
    assert one.to_json()["rules"] == ["NPU201", "NPU202"]
    assert by_line[(30, "NPU201")].rule_ids == ("NPU201",)  # alone on its line: unchanged
    assert by_line[(20, "NPU301")].rule_ids == ("NPU301",)  # not of the family: not merged


def test_merged_fingerprint_is_the_same_whichever_rules_of_the_family_fire() -> None:
    both = case_findings_change("NPU202/bad_consumer_stale_tag")
    (merged,) = [f for f in both if f.rule_ids == ("NPU201", "NPU202")]
    from npu_review.checks.config import RuleSetting
    from tests.fixture_support import case_config, run_case

    case = load_case(FIXTURES / "NPU202/bad_consumer_stale_tag")
    cfg = case_config(case)
    import dataclasses

    only_202 = dataclasses.replace(cfg, rules={**cfg.rules, "NPU201": RuleSetting(enabled=False)})
    (alone,) = [f for f in run_case(case, only_202).findings if f.line == merged.line]
    assert alone.rule_ids == ("NPU202",)
    assert alone.fingerprint == merged.fingerprint


def test_inline_comments_are_for_errors_and_warnings_unless_asked() -> None:
    from npu_review.bot import reporters
    from npu_review.bot.diffmap import from_file_patches

    dm = from_file_patches({".github/workflows/e2e.yml": "@@ -0,0 +1,30 @@\n" + "+x\n" * 30})
    fs = [
        Finding(
            "NPU304",
            "empty-continuation-line",
            Severity.NOTICE,
            ".github/workflows/e2e.yml",
            3,
            3,
            "n",
            fingerprint="a" * 20,
        ),
        Finding(
            "NPU301",
            "tls-verification-disabled",
            Severity.WARNING,
            ".github/workflows/e2e.yml",
            4,
            4,
            "w",
            fingerprint="b" * 20,
        ),
        _f("NPU201", "mixed-image-tag-formats", Severity.ERROR, "e"),
    ]
    fs[2] = Finding(**{**fs[2].__dict__, "rules": ("NPU201", "NPU202"), "fingerprint": "c" * 20})
    plan = reporters.plan_review("s", fs, dm, set())
    assert plan.payload is not None
    assert [c["line"] for c in plan.payload["comments"]] == [4, 20]
    assert plan.overflow == ()  # the notice is not listed in the body either: it is in the check run
    assert plan.payload["comments"][1]["body"].startswith("🛑 **NPU201 + NPU202** `mixed-image-tag-formats` (error)")
    plan = reporters.plan_review("s", fs, dm, set(), inline_notices=True)
    assert plan.payload is not None and [c["line"] for c in plan.payload["comments"]] == [3, 4, 20]
    assert reporters.annotation(fs[2])["title"] == "NPU201+NPU202 mixed-image-tag-formats"


def test_judge_sample_is_seeded_per_rule_and_skips_notices(tmp_path: Path) -> None:
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location(
        "judge", Path(__file__).resolve().parent.parent / "bench" / "precision" / "judge.py"
    )
    assert spec is not None and spec.loader is not None
    judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(judge)
    sample = judge.sample

    findings = [
        {"rule": "NPU301", "severity": "warning", "path": "D", "line": n, "fingerprint": f"fp{n}", "message": "m"}
        for n in range(1, 21)
    ] + [{"rule": "NPU304", "severity": "notice", "path": "D", "line": 1, "fingerprint": "n", "message": "m"}]
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps({"commits": [{"sha": "a" * 40, "subject": "x (#1)", "findings": findings}]}))
    first, again = sample(replay, "after"), sample(replay, "after")
    assert first == again and len(first) == 8 and {e["rule"] for e in first} == {"NPU301"}


def _judge_module():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "judge", Path(__file__).resolve().parent.parent / "bench" / "precision" / "judge.py"
    )
    assert spec is not None and spec.loader is not None
    judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(judge)
    return judge


def _replay(tmp_path: Path, name: str, commits: dict[str, list[dict[str, object]]]) -> Path:
    import json

    out = tmp_path / name
    out.write_text(
        json.dumps({"commits": [{"sha": sha, "subject": "s (#1)", "findings": fs} for sha, fs in commits.items()]})
    )
    return out


def _jf(rule: str, line: int, fp: str, severity: str = "warning", **extra: object) -> dict[str, object]:
    return {"rule": rule, "severity": severity, "path": "D", "line": line, "fingerprint": fp, "message": "m", **extra}


def test_judge_update_keeps_verdicts_of_unchanged_findings_and_hash_sample_is_stable(tmp_path: Path) -> None:
    import yaml

    judge = _judge_module()
    a, b = "a" * 40, "b" * 40
    first = _replay(tmp_path, "1.json", {a: [_jf("NPU301", n, f"fp{n}") for n in range(1, 13)]})
    judged = tmp_path / "j.yml"
    entries, stats = judge.update(judged, first, "replay")
    assert stats == {"to judge": 8, "dropped": 0} and len(entries) == 8
    for e in entries:
        e["verdict"], e["why"] = "true", f"line {e['line']}"
    entries.append({**entries[0], "run": "other", "verdict": "false", "why": "kept as is"})
    judged.write_text(yaml.safe_dump(entries, sort_keys=False))
    picked = {e["fingerprint"] for e in entries[:8]}

    # Same findings plus one on another commit and one notice: the sample of the 12 old ones stays the same
    # (hash order), verdicts carry over, the other run is untouched, the notice is not sampled.
    again = _replay(
        tmp_path,
        "2.json",
        {
            a: [_jf("NPU301", n, f"fp{n}") for n in range(1, 13)],
            b: [_jf("NPU301", 1, "fp1"), _jf("NPU304", 2, "n", "notice")],
        },
    )
    entries2, stats2 = judge.update(judged, again, "replay")
    run2 = [e for e in entries2 if e["run"] == "replay"]
    old_kept = [e for e in run2 if e["sha"] == a]
    assert {e["fingerprint"] for e in old_kept} <= picked
    assert all(e["verdict"] == "true" and e["why"] == f"line {e['line']}" for e in old_kept)
    assert [e["verdict"] for e in run2 if e["sha"] == b] in ([], [None])
    assert stats2["reused"] == len(old_kept) and stats2["to judge"] == 8 - len(old_kept)
    assert [e["why"] for e in entries2 if e["run"] == "other"] == ["kept as is"]

    notices, nstats = judge.update(judged, again, "notices", notices=True)
    assert [(e["rule"], e["verdict"]) for e in notices if e["run"] == "notices"] == [("NPU304", None)]
    assert nstats["to judge"] == 1


def test_judge_kept_matches_commit_rule_path_line_through_merged_rules(tmp_path: Path) -> None:
    import yaml

    judge = _judge_module()
    a = "a" * 40
    judged = tmp_path / "j.yml"
    base = {"sha": a, "path": "D", "fingerprint": "x", "why": "w"}
    judged.write_text(
        yaml.safe_dump(
            [
                {**base, "run": "before", "rule": "NPU202", "line": 3, "verdict": "true"},
                {**base, "run": "before", "rule": "NPU301", "line": 5, "verdict": "true"},
                {**base, "run": "before", "rule": "NPU302", "line": 9, "verdict": "false"},
                {**base, "run": "all", "rule": "NPU303", "line": 1, "verdict": "true"},
            ]
        )
    )
    new = _replay(
        tmp_path, "n.json", {a: [_jf("NPU201", 3, "y", "error", rules=["NPU201", "NPU202"]), _jf("NPU301", 6, "z")]}
    )
    assert [(e["rule"], e["line"], where) for e, where in judge.kept(judged, new, {"before"})] == [
        ("NPU301", 5, "gone")
    ]
    spanning = _replay(tmp_path, "s.json", {a: [_jf("NPU202", 3, "y", "error"), _jf("NPU301", 4, "z", end_line=5)]})
    assert [(e["rule"], where) for e, where in judge.kept(judged, spanning, {"before"})] == [
        ("NPU301", "inside lines 4-5")
    ]
    quieter = _replay(tmp_path, "q.json", {a: [_jf("NPU202", 3, "y", "notice"), _jf("NPU301", 5, "z")]})
    assert [(e["rule"], where) for e, where in judge.kept(judged, quieter, {"before"})] == [("NPU202", "now a notice")]


def test_judge_markdown_table_counts_findings_and_verdicts_per_rule(tmp_path: Path) -> None:
    import yaml

    judge = _judge_module()
    a = "a" * 40
    replay = _replay(
        tmp_path,
        "r.json",
        {a: [_jf("NPU212", n, f"f{n}", "error") for n in range(1, 4)] + [_jf("NPU304", 1, "n", "notice")]},
    )
    judged = tmp_path / "j.yml"
    judged.write_text(
        yaml.safe_dump(
            [
                {
                    "run": "r",
                    "sha": a,
                    "rule": "NPU212",
                    "path": "D",
                    "line": n,
                    "fingerprint": f"f{n}",
                    "verdict": v,
                    "why": "",
                }
                for n, v in ((1, "true"), (2, "false"), (3, "unclear"))
            ]
        )
    )
    assert judge.markdown_table(judged, "r", replay).splitlines()[2:] == [
        "| NPU212 | error | 3 | 3 | 1 | 1 | 0 | 1 | 33% |",
        "| all | | 3 | 3 | 1 | 1 | 0 | 1 | 33% |",
    ]
