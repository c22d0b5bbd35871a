"""Engine behaviour independent of any one rule: scope, suppression, severity overrides, fingerprints, budgets."""

from __future__ import annotations

import pytest

from npu_review.checks import ChangeSet, MemoryTree, parse_config, run
from npu_review.checks.diffing import changes_between
from npu_review.checks.engine import fingerprint, known_rule_ids

DF = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
BAD = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\nRUN wget --no-check-certificate https://x/y.tgz\n"


def audit(files: dict[str, str | None], config: str | None = None, **kw: object):  # type: ignore[no-untyped-def]
    cfg = parse_config(config, known_rule_ids())
    return run(ChangeSet(head=MemoryTree(files), audit=True), cfg, **kw)  # type: ignore[arg-type]


def test_suppression_on_the_line_and_above_and_file_wide() -> None:
    same_line = BAD.replace("y.tgz\n", "y.tgz  # npu-review: ignore[NPU301] internal mirror\n")
    above = BAD.replace("RUN wget", "# npu-review: ignore[NPU301] internal mirror\nRUN wget")
    file_wide = "# npu-review: ignore-file[NPU301]\n" + BAD
    for text in (same_line, above, file_wide):
        assert [f.rule for f in audit({DF: text}).findings] == []
    # Another rule's id does not suppress it.
    other = BAD.replace("RUN wget", "# npu-review: ignore[NPU302]\nRUN wget")
    assert [f.rule for f in audit({DF: other}).findings] == ["NPU301"]


def test_unknown_rule_in_suppression_is_reported() -> None:
    text = BAD.replace("RUN wget", "# npu-review: ignore[NPU999, NPU301]\nRUN wget")
    report = audit({DF: text})
    assert [(f.rule, f.line) for f in report.findings] == [("NPU001", 2)]
    assert "'NPU999'" in report.findings[0].message


def test_config_disables_overrides_severity_and_ignores_paths() -> None:
    assert audit({DF: BAD}, "rules:\n  NPU301: off\n").findings == []
    (f,) = audit({DF: BAD}, "rules:\n  NPU301: {severity: error}\n").findings
    assert f.severity.label == "error"
    assert audit({DF: BAD}, "ignore_paths: ['docker/**']\n").findings == []


def test_change_scope_and_stable_fingerprints() -> None:
    base = {DF: BAD}
    head = {DF: "# a new comment moves every line down\n" + BAD + "RUN curl -k https://x/z.sh\n"}
    cs = ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head))
    report = run(cs)
    assert [(f.rule, f.line) for f in report.findings] == [("NPU301", 4)]  # the old wget line is old debt
    moved = audit(head).findings
    before = audit(base).findings
    fp_before = {f.fingerprint for f in before}
    assert next(f for f in moved if f.line == 3).fingerprint in fp_before  # same line moved: same fingerprint
    assert fingerprint("NPU301", DF, "RUN  wget   x", 0) == fingerprint("NPU301", DF, "RUN wget x", 0)
    assert fingerprint("NPU301", DF, "RUN wget x", 0) != fingerprint("NPU301", DF, "RUN wget x", 1)


def test_a_rule_over_its_budget_is_stopped_and_reported() -> None:
    ticks = iter(range(0, 10_000, 30))  # every clock reading is 30 s after the previous one
    report = audit({DF: BAD, "docker/ascend/Dockerfile.b": BAD}, clock=lambda: float(next(ticks)))
    stopped = [e for e in report.errors if "was stopped" in e]
    assert stopped and all("budget 20 s" in e for e in stopped)
    # Files are checked in path order: the first one is checked, then the rule is stopped.
    assert [f.path for f in report.findings if f.rule == "NPU301"] == [DF]


def test_binary_and_missing_files_are_skipped() -> None:
    report = audit({DF: None, "docker/ascend/Dockerfile.b": BAD})
    assert report.files_checked == 1 and report.errors == []


def test_findings_the_change_caused_on_unchanged_lines_are_kept() -> None:
    from npu_review.checks.context import Context
    from npu_review.checks.engine import _finalise
    from npu_review.checks.kinds import KindMap
    from npu_review.checks.rule import Hit, all_rules

    base = {DF: BAD, "ci.yml": "image: x\n"}
    head = {DF: BAD + "RUN true\n", "ci.yml": "image: x\n"}
    cs = ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head))
    ctx = Context(cs, parse_config(None, known_rule_ids()), KindMap())
    rule = all_rules()["NPU301"]
    hits = [(rule, Hit("ci.yml", 1, "old debt")), (rule, Hit("ci.yml", 1, "caused", caused_by_change=True))]
    assert [f.message for f in _finalise(hits, ctx, known_rule_ids(), {})] == ["caused"]


def test_the_app_fetches_only_what_the_rules_read() -> None:
    from npu_review.checks.engine import needed_paths
    from npu_review.checks.model import ChangeStatus, FileChange

    head_paths = [f"verl/models/m{i}.py" for i in range(300)] + [
        "verl/single_controller/ray/base.py",
        "verl/checkpoint_engine/hccl_checkpoint_engine.py",
        ".github/workflows/e2e_ascend.yml",
        "docker/ascend/Dockerfile.ascend_9.1.0_a3",
        DF,
        "README.md",
        "assets/logo.png",
    ]
    config = parse_config(None, known_rule_ids())
    changes = {DF: FileChange(DF, ChangeStatus.MODIFIED, None, frozenset({2}))}
    head, base = needed_paths(head_paths, changes, config)
    assert DF in head and base == {DF}
    assert {".github/workflows/e2e_ascend.yml", "docker/ascend/Dockerfile.ascend_9.1.0_a3"} <= head
    assert not any(p.startswith("verl/") for p in head)  # a Dockerfile change reads no Python
    assert "assets/logo.png" not in head
    py = "verl/workers/fsdp_workers.py"
    changes = {py: FileChange(py, ChangeStatus.MODIFIED, None, frozenset({2}))}
    head, _ = needed_paths([*head_paths, py], changes, config)
    # Every Python file, as the CLI reads them: NPU401's index of defaults, NPU402's "still called elsewhere".
    assert {p for p in head_paths if p.endswith(".py")} | {py} <= head
    assert "README.md" not in head and DF not in head


def test_context_is_read_only_for_rules_the_change_concerns() -> None:
    from npu_review.checks.engine import needed_paths
    from npu_review.checks.model import ChangeStatus, FileChange

    head_paths = [f"examples/run_{i}_npu.sh" for i in range(50)] + [".github/workflows/e2e_ascend.yml", "README.md"]
    readme = {"README.md": FileChange("README.md", ChangeStatus.MODIFIED, None, frozenset({1}))}
    head, _ = needed_paths(head_paths, readme, parse_config(None, known_rule_ids()))
    assert not any(p.endswith("_npu.sh") for p in head)  # a README edit needs no launch script
    script = {"examples/run_1_npu.sh": FileChange("examples/run_1_npu.sh", ChangeStatus.MODIFIED, None, frozenset({1}))}
    head, _ = needed_paths(head_paths, script, parse_config(None, known_rule_ids()))
    assert {f"examples/run_{i}_npu.sh" for i in range(50)} <= head  # callers and sourced helpers
    gone = {"docs/old.md": FileChange("docs/old.md", ChangeStatus.DELETED)}
    head, _ = needed_paths(head_paths, gone, parse_config(None, known_rule_ids()))
    assert ".github/workflows/e2e_ascend.yml" in head  # references to a deleted file may be left anywhere


def test_a_doc_change_reads_the_gitignore_files_of_the_top_levels() -> None:
    """A doc's link into what `.gitignore` ignores names no missing file (NPU502, NPU118): the App fetches the
    root's `.gitignore` and those three levels below it with a changed doc, not a deeper one, and none for a
    change that concerns no such rule."""
    from npu_review.checks.engine import needed_paths
    from npu_review.checks.model import ChangeStatus, FileChange

    ignores = [".gitignore", "ops/.gitignore", "ops/lab/dsl/.gitignore", "ops/lab/dsl/deep/.gitignore"]
    head_paths = [*ignores, "docs/npu.md", "tools/x.py"]
    doc = {"docs/npu.md": FileChange("docs/npu.md", ChangeStatus.MODIFIED, None, frozenset({1}))}
    head, _ = needed_paths(head_paths, doc, parse_config(None, known_rule_ids()))
    assert {p for p in head if p.endswith(".gitignore")} == set(ignores[:3])
    py = {"tools/x.py": FileChange("tools/x.py", ChangeStatus.MODIFIED, None, frozenset({1}))}
    head, _ = needed_paths(head_paths, py, parse_config(None, known_rule_ids()))
    assert not any(p.endswith(".gitignore") for p in head)


def test_a_registry_change_reads_the_files_that_may_set_its_old_names() -> None:
    """NPU110's `context_after`: a rename in `envs.py` can leave any script, CI env or doc setting the old name,
    so those are fetched after a change to `envs.py`, and not after a change to another Python file."""
    from npu_review.checks.engine import needed_paths
    from npu_review.checks.model import ChangeStatus, FileChange

    left = ["tests/e2e/pd/run_edge_case_test.sh", ".github/workflows/e2e_pd.yaml", "docs/source/pd.md"]
    head_paths = ["vllm_ascend/envs.py", "vllm_ascend/worker.py", *left]
    config = parse_config(None, known_rule_ids())
    for path, fetched in (("vllm_ascend/envs.py", True), ("vllm_ascend/worker.py", False)):
        head, _ = needed_paths(
            head_paths, {path: FileChange(path, ChangeStatus.MODIFIED, None, frozenset({3}))}, config
        )
        assert (set(left) <= head) is fetched, path


def test_context_holds_a_window_of_files_and_reads_again_when_asked() -> None:
    from npu_review.checks.context import Context
    from npu_review.checks.kinds import KindMap

    reads: list[str] = []

    class CountingTree(MemoryTree):
        def read(self, path: str) -> str | None:
            reads.append(path)
            return super().read(path)

    files = {f"f{i}.sh": f"echo {i}\n" for i in range(4)}
    ctx = Context(ChangeSet(head=CountingTree(files), audit=True), parse_config(None, known_rule_ids()), KindMap())
    ctx.keep_files = 2
    parses: list[str] = []

    def parse(text: str) -> str:
        parses.append(text)
        return text.upper()

    for p in ("f0.sh", "f1.sh", "f0.sh", "f2.sh"):  # f0 used again, so f1 is the least recently used
        src = ctx.source(p)
        assert src is not None and ctx.parsed("shell", src, parse) == src.text.upper()
    assert ctx.loaded() == ["f0.sh", "f2.sh"]
    assert reads == ["f0.sh", "f1.sh", "f2.sh"] and len(parses) == 3
    assert ctx.source("f1.sh") is not None and reads[-1] == "f1.sh"  # let go, so read again
    ctx.release("f2.sh")
    assert ctx.loaded() == ["f1.sh"]  # f0 went when f1 came back; f2 was let go


def test_shares_keep_python_and_the_rest_together_and_cut_scripts_and_docs_fine() -> None:
    from npu_review.checks.engine import _shares
    from npu_review.checks.kinds import KindMap

    py = [f"verl/m{i:03d}.py" for i in range(300)]
    yml = [f".github/workflows/w{i:03d}.yml" for i in range(60)]
    docs = [f"docs/p{i:03d}.md" for i in range(150)]
    sh = [f"examples/run_{i:02d}.sh" for i in range(42)]
    paths = sorted(py + yml + docs + sh)
    got = _shares(paths, KindMap(), jobs=2)
    # Python in as few shares as balance allows (at most half the files: 201), of equal sizes (150, 150: not
    # 201 and 99), the rest likewise, and the docs and scripts in 2 x 4 pieces of 24 (the last 24 too), last;
    # each share keeps the files' order.
    assert [len(s) for s in got] == [150, 150, 60] + [24] * 8
    assert got[0] + got[1] == sorted(py) and got[2] == sorted(yml)
    assert [p for share in got[3:] for p in share] == sorted(docs + sh)


class _CountingTree(MemoryTree):
    def __init__(self, files: dict[str, str | None]) -> None:
        super().__init__(files)
        self.reads: list[str] = []

    def read(self, path: str) -> str | None:
        self.reads.append(path)
        return super().read(path)


def test_shares_hand_back_the_lines_of_their_findings_so_no_file_is_read_again() -> None:
    # 400 Ascend Dockerfiles: two shares. Once the shares are done, the engine reads nothing more (the
    # fingerprints' lines came back with the findings).
    files: dict[str, str | None] = {f"docker/ascend/Dockerfile.{i:03d}": BAD for i in range(400)}
    tree = _CountingTree(files)
    after_shares: list[str] = []

    def in_process(task, count):  # type: ignore[no-untyped-def]
        parts = [task(i) for i in range(count)]
        tree.reads = after_shares
        return parts

    report = run(ChangeSet(head=tree, audit=True), mapper=in_process, jobs=2)
    assert len(report.findings) == 400
    assert {f.rule for f in report.findings} == {"NPU301"}
    assert after_shares == []
    # The fingerprints are those of the lines: as the same audit in one process gives them.
    alone = run(ChangeSet(head=MemoryTree(files), audit=True))
    assert [f.fingerprint for f in report.findings] == [f.fingerprint for f in alone.findings]


_ASCEND_WORKFLOW = (
    "name: ascend\non: [pull_request]\njobs:\n  test:\n    runs-on: linux-aarch64-a2-1\n"
    "    container:\n      image: quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
    "    steps:\n      - run: npu-smi info\n"
)


def test_the_process_of_the_project_rules_lets_go_of_what_they_kept_before_its_next_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A forked process that ran the project rules takes more shares afterwards: the workflow models and indexes
    # the project rules kept for the run would add to what those shares' rules build (the largest process of an
    # audit). In a large audit they are let go of after the project rules' task; the findings are those of one
    # process.
    from npu_review.checks import engine
    from npu_review.checks.context import Context

    contexts: list[Context] = []
    init = Context.__init__

    def capture(self: Context, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        init(self, *args, **kwargs)
        contexts.append(self)

    monkeypatch.setattr(Context, "__init__", capture)
    monkeypatch.setattr(engine, "_RELEASE_FILES", 600)  # (the audit below checks 603 files)
    files: dict[str, str | None] = {f".github/workflows/ascend_{i:03d}.yml": _ASCEND_WORKFLOW for i in range(3)}
    files |= {f"docker/ascend/Dockerfile.{i:03d}": BAD for i in range(200)}
    files |= {f"docs/guide_{i:03d}.md": "# Guide\n\nRun `bash run_npu.sh`.\n" for i in range(300)}
    files |= {f"examples/run_{i:03d}_npu.sh": "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\n" for i in range(100)}
    models_held: list[bool] = []

    def in_process(task, count):  # type: ignore[no-untyped-def]
        parts = []
        for i in range(count):
            parts.append(task(i))
            models_held.append(any(key[0] == "workflow" for key in contexts[-1]._memo))
        return parts

    shared = run(ChangeSet(head=MemoryTree(files), audit=True), mapper=in_process, jobs=2)
    # The first task is the project rules' (with the first share of workflows and Dockerfiles): the workflow
    # models they built are gone when it is done; the docs' and scripts' shares build none.
    assert len(models_held) > 2 and models_held == [False] * len(models_held)
    alone = run(ChangeSet(head=MemoryTree(files), audit=True))
    assert [(f.rule, f.path, f.line, f.message) for f in shared.findings] == [
        (f.rule, f.path, f.line, f.message) for f in alone.findings
    ]
    assert {f.rule for f in shared.findings} >= {"NPU301"}
    # In an audit of fewer files, what they kept stays for the shares after them (building it again costs more).
    monkeypatch.setattr(engine, "_RELEASE_FILES", 604)
    models_held.clear()
    run(ChangeSet(head=MemoryTree(files), audit=True), mapper=in_process, jobs=2)
    assert models_held == [True] * len(models_held)


def test_every_enabled_rule_is_loaded_before_the_shares_go_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # The shares run in forked processes: a rule imported after the fork is imported again in each of them.
    from npu_review.checks.rule import RuleSpec, rule_specs

    loaded: list[str] = []
    load = RuleSpec.load

    def counting(spec: RuleSpec):  # type: ignore[no-untyped-def]
        loaded.append(spec.id)
        return load(spec)

    monkeypatch.setattr(RuleSpec, "load", counting)
    at_mapper: list[set[str]] = []

    def in_process(task, count):  # type: ignore[no-untyped-def]
        at_mapper.append(set(loaded))
        return [task(i) for i in range(count)]

    files: dict[str, str | None] = {f"docker/ascend/Dockerfile.{i:03d}": BAD for i in range(400)}
    run(ChangeSet(head=MemoryTree(files), audit=True), mapper=in_process, jobs=2)
    enabled = {rid for rid, spec in rule_specs().items() if spec.enabled_by_default}
    assert at_mapper == [enabled]


_FIRST_USE_PROBE = """
import sys
from npu_review.checks import ChangeSet, MemoryTree, engine, run
from npu_review.checks.rule import all_rules

all_rules()
before = [n for n in engine._FIRST_USE_IMPORTS if n in sys.modules]
at_mapper = []

def in_process(task, count):
    at_mapper.append([n for n in engine._FIRST_USE_IMPORTS if n not in sys.modules])
    return [task(i) for i in range(count)]

files = {f"docker/ascend/Dockerfile.{i:03d}": "FROM ubuntu:22.04\\n" for i in range(400)}
run(ChangeSet(head=MemoryTree(files), audit=True), mapper=in_process, jobs=2)
print(before, at_mapper)
"""


def test_what_the_parsers_import_at_first_use_is_imported_before_the_shares_go_out() -> None:
    # Each forked process would import them again (markdown-it, pathspec: ~40 ms a process). A fresh interpreter:
    # this one has imported them for other tests. None is imported with the rules (else the list is no use).
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _FIRST_USE_PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "[[]]"]


def test_an_audit_makes_notices_of_a_dockerfile_nothing_builds_any_more() -> None:
    from tests.fixture_support import audit

    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "RUN wget --no-check-certificate https://example.com/tool.tar.gz\n"
    )
    workflow = (
        "name: image\n"
        "on: [push]\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: docker build -f docker/Dockerfile.ascend_a2 -t quay.io/example/app:a2 .\n"
    )
    files = {
        "docker/Dockerfile.ascend_a2": dockerfile,
        "docker/Dockerfile.ascend_a2_old": dockerfile,
        ".github/workflows/image.yml": workflow,
    }
    got = {(f.path, f.rule, f.severity.label) for f in audit(files).findings if f.rule == "NPU301"}
    assert got == {
        ("docker/Dockerfile.ascend_a2", "NPU301", "warning"),
        ("docker/Dockerfile.ascend_a2_old", "NPU301", "notice"),
    }
    old = next(f for f in audit(files).findings if f.path.endswith("_old") and f.rule == "NPU301")
    assert old.message.endswith("(No workflow, script or install doc builds this Dockerfile any more.)")


def test_a_change_review_leaves_no_cycle_holding_its_context(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI runs with the cyclic collector off, and a replay reviews hundreds of changes in one process: the
    # context (its memos are closures over it, and hold every parse) must go with reference counting alone.
    import gc
    import weakref

    from npu_review.checks import context

    made: list[weakref.ref[context.Context]] = []
    init = context.Context.__init__

    def remember(self: context.Context, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(weakref.ref(self))

    monkeypatch.setattr(context.Context, "__init__", remember)
    base = {"scripts/run_npu.sh": "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\npython train.py\n"}
    head = {
        "scripts/run_npu.sh": "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\nexport HCCL_BUFSIZE=512\n"
        "python train.py\n",
        ".github/workflows/npu.yml": "on: [pull_request]\njobs:\n  t:\n    runs-on: linux-aarch64-a2-4\n"
        "    steps:\n      - run: bash scripts/run_npu.sh\n",
    }
    was = gc.isenabled()
    gc.disable()
    try:
        cs = ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head))
        report = run(cs, parse_config(None, known_rule_ids()))
        del cs
        assert [f.rule for f in report.findings] == ["NPU110"]
        assert made and all(ref() is None for ref in made)
    finally:
        if was:
            gc.enable()


def test_the_warm_up_change_has_a_file_of_every_kind_and_each_is_checked() -> None:
    # What a review process reviews before its first real change: every file kind the rules read (the Hydra config
    # tree's globs name one project's layout), each file wanted by some rule, and no rule failing on it.
    from npu_review.checks.config import default_config
    from npu_review.checks.context import Context
    from npu_review.checks.engine import warm_up_change
    from npu_review.checks.kinds import HYDRA_CONFIG, KNOWN_KINDS, KindMap

    change = warm_up_change()
    ctx = Context(change, default_config(), KindMap())
    kinds = set().union(*(src.kinds for p in change.changes if (src := ctx.source(p)) is not None))
    assert kinds == KNOWN_KINDS - {HYDRA_CONFIG}
    report = run(change)
    assert (report.files_checked, report.errors) == (len(change.changes), [])


def _recording_project_rules(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The ids of the project rules the engine runs from now on, added to the set returned as they run."""
    from npu_review.checks import engine

    ran: set[str] = set()
    timed = engine._Runner._timed

    def recording(self, out, rule, where, work):  # type: ignore[no-untyped-def]
        if where == "the repository":
            ran.add(rule.id)
        return timed(self, out, rule, where, work)

    monkeypatch.setattr(engine._Runner, "_timed", recording)
    return ran


def _project_rules_run(monkeypatch: pytest.MonkeyPatch, changes: dict[str, tuple[str | None, str | None]]) -> set[str]:
    """The project rules that ran on a change of `changes` (path -> (base text, head text)) to a tree with an
    Ascend workflow, Dockerfile and launch script."""
    ran = _recording_project_rules(monkeypatch)
    tree: dict[str, str | None] = {
        DF: BAD,
        ".github/workflows/e2e_ascend.yml": "on: push\njobs:\n  t:\n    runs-on: linux-aarch64-a2-1\n",
        "tests/run_npu.sh": "export HCCL_CONNECT_TIMEOUT=1200\n",
    }
    base = dict(tree, **{p: b for p, (b, _h) in changes.items() if b is not None})
    head = dict(tree, **{p: h for p, (_b, h) in changes.items() if h is not None})
    for p, (b, h) in changes.items():
        if h is None:
            head.pop(p, None)
        if b is None:
            base.pop(p, None)
    run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)))
    return ran


def test_project_rules_run_only_on_a_change_that_concerns_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from npu_review.checks.rule import rule_specs

    project = {rid for rid, s in rule_specs().items() if s.project and s.enabled_by_default}
    # An OWNERS edit: no project rule reads such a file; NPU501 reads every changed file's name.
    assert _project_rules_run(monkeypatch, {"OWNERS": ("a\n", "a\nb\n")}) == {"NPU501"}
    # A Makefile is no kind of file, but NPU221 reads builds from it (its context paths).
    assert "NPU221" in _project_rules_run(monkeypatch, {"Makefile": ("all:\n", "all:\n\techo\n")})
    # A Python module: the rules of Python files, and the workflow rules stay out.
    python = _project_rules_run(monkeypatch, {"pkg/mod.py": ("x = 1\n", "x = 2\n")})
    assert {"NPU402", "NPU501"} <= python and "NPU214" not in python
    # A launch script: the shell rules run.
    assert "NPU117" in _project_rules_run(monkeypatch, {"tests/run_npu.sh": (None, "export A=1\n")})
    # A deleted file may leave references to it anywhere: every project rule runs.
    assert _project_rules_run(monkeypatch, {"OWNERS": ("a\n", None)}) == project


def test_a_file_name_with_an_invisible_character_is_reported_whatever_its_kind() -> None:
    name = "tools/pa\u200bckage.json"
    files: dict[str, str | None] = {name: "{}\n"}
    report = run(ChangeSet(head=MemoryTree(files), base=MemoryTree({}), changes=changes_between({}, files)))
    assert [(f.rule, f.path, f.line) for f in report.findings] == [("NPU501", name, 1)]


def test_an_audit_of_some_files_runs_the_project_rules_that_read_files_of_their_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran = _recording_project_rules(monkeypatch)
    files: dict[str, str | None] = {
        DF: BAD,
        ".github/workflows/e2e_ascend.yml": "on: push\njobs:\n  t:\n    runs-on: linux-aarch64-a2-1\n",
        "pkg/mod.py": "x = 1\n",
    }
    report = run(ChangeSet(head=MemoryTree(files), audit=True), only=lambda p: p == "pkg/mod.py")
    assert report.findings == []
    assert "NPU501" in ran and "NPU214" not in ran and "NPU202" not in ran  # no workflow rule for a module
    ran.clear()
    run(ChangeSet(head=MemoryTree(files), audit=True), only=lambda p: p == DF)
    assert {"NPU202", "NPU310"} <= ran


def test_named_paths_are_the_scripts_a_changed_guide_names_its_own_first() -> None:
    """The App's second fetch: the files of NPU117's endings that a changed guide names by file name; where more
    than MAX_NAMED_PATHS have that name, those beside the guide come first. A deleted or unchanged file names
    nothing, and a change whose files name no such file fetches nothing."""
    from npu_review.checks.config import DEFAULT_CONFIG
    from npu_review.checks.engine import MAX_NAMED_PATHS, named_paths
    from npu_review.checks.model import ChangeStatus, FileChange

    head = [f"examples/a{k:02d}/run.sh" for k in range(50)] + ["examples/a45/README.md", "tools/convert.py"]
    guide = "# On Ascend\n\n```bash\nbash run.sh --ranks 2\npython ../../tools/convert.py --model x\n```\n"
    changes = {"examples/a45/README.md": FileChange("examples/a45/README.md", ChangeStatus.MODIFIED)}
    got = named_paths(head, {"examples/a45/README.md": guide}, changes, DEFAULT_CONFIG)
    assert len(got) == MAX_NAMED_PATHS
    assert {"examples/a45/run.sh", "tools/convert.py"} <= got
    assert named_paths(head, {"examples/a45/README.md": "# On Ascend\n"}, changes, DEFAULT_CONFIG) == set()
    deleted = {"examples/a45/README.md": FileChange("examples/a45/README.md", ChangeStatus.DELETED)}
    assert named_paths(head, {"examples/a45/README.md": guide}, deleted, DEFAULT_CONFIG) == set()


def test_a_suggestion_that_is_the_line_as_it_stands_is_no_suggestion() -> None:
    """A suggestion equal to the line it replaces (blanks at the end aside) changes nothing: it is dropped, the
    finding kept (rs-r44 judged an NPU502 finding noise for offering its own text as the fix)."""
    from npu_review.checks.engine import _with_fingerprints
    from npu_review.checks.model import Finding, Severity

    line = "bash scripts/collect.sh  "
    same = Finding("NPU502", "broken-repo-link", Severity.WARNING, "README.md", 3, 3, "m", suggestion=line.rstrip())
    other = Finding("NPU502", "broken-repo-link", Severity.WARNING, "README.md", 4, 4, "m", suggestion="bash x.sh")
    lines = {("README.md", 3): line, ("README.md", 4): "bash y.sh"}
    done = _with_fingerprints([same, other], None, lines)  # type: ignore[arg-type]  # (the lines are given)
    assert [(f.line, f.suggestion) for f in done] == [(3, None), (4, "bash x.sh")]
