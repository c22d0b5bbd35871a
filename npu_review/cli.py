"""The `npu-review` command: check a change or a tree, list rules, serve the GitHub App."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn

from npu_review import version

if TYPE_CHECKING:
    from pathlib import Path

    from npu_review.checks.config import Config
    from npu_review.checks.engine import Report
    from npu_review.checks.model import ChangeSet, Tree
    from npu_review.gitsource import Git

# What `check` and `init` read and write: checks.config.CONFIG_PATH, named here too so that building the parser
# does not import the engine (tests/test_cli.py holds the two equal). Everything else is imported by the command
# that needs it: `npu-review --version` or `rules` must not pay for the engine, the facts and the rules.
CONFIG_PATH = ".github/npu-review.yml"
# checks.output.FORMATS and npu_review.term.COLOR_CHOICES, likewise.
FORMATS = ("text", "concise", "json", "sarif", "github")
COLOR_CHOICES = ("auto", "always", "never")

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = ("error", "warning", "notice", "never")


class UsageError(Exception):
    """Bad arguments, config or repository: exit 2 with one line on stderr."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


class _ShowVersion(Exception):
    """`--version` was given: print the version and stop (before a command is asked for)."""


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise _ShowVersion


PROFILE_ENV = "NPU_REVIEW_PROFILE"
PROFILE_HELP = (
    f"write a cProfile of the run to FILE (read it with `python -m pstats FILE`; also ${PROFILE_ENV}=FILE); worker "
    "processes of a parallel review are not in it: add --jobs 1"
)

# `--fix --diff`: the fixes as a diff. `--diff` without a FILE takes this value.
FIX_DIFF = "\0fix-diff"
# What the App needs besides the engine: `pip install 'npu-review[app]'` brings them.
APP_MODULES = frozenset({"aiohttp", "gidgethub", "jwt", "redis", "tenacity", "cryptography", "multidict", "yarl"})


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="npu-review", description="Review changes for Ascend NPU mistakes.")
    p.add_argument("--version", action=_VersionAction)
    p.add_argument("--profile", metavar="FILE", dest="cprofile", help=PROFILE_HELP)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # `--profile` after the command as well (`npu-review check --profile FILE ...`); SUPPRESS: a subcommand without
    # it leaves the main parser's value alone.
    profiled = _Parser(add_help=False)
    profiled.add_argument("--profile", metavar="FILE", dest="cprofile", default=argparse.SUPPRESS, help=PROFILE_HELP)

    c = sub.add_parser("check", parents=[profiled], help="review a change (or a whole tree) exactly as the App would")
    c.add_argument("--repo", default=".", help="git repository, bare or not (default: .)")
    c.add_argument("--base", help="review base..head; content is read from git objects")
    c.add_argument("--head", help="head revision (default: HEAD)")
    c.add_argument(
        "--diff",
        nargs="?",
        const=FIX_DIFF,
        metavar="FILE|-",
        help="review a unified diff; new content from the work tree. With --fix and no FILE: print the fixes as a "
        "diff instead of writing them",
    )
    c.add_argument(
        "--staged",
        action="store_true",
        help="review the staged change (pre-commit); with PATHs that it does not all touch (pre-commit run "
        "--all-files), audit those files instead",
    )
    c.add_argument("--all", action="store_true", help="audit every file of the tree at --head")
    c.add_argument("--config", metavar="FILE", help=f"repo config (default: {CONFIG_PATH} at the base revision)")
    c.add_argument("--title", default="", help="PR title, for rules that read its scope (default: head subject)")
    c.add_argument(
        "--format", choices=FORMATS, default="text", help="concise: one `path:line:col: RULE severity message` line"
    )
    c.add_argument("--fail-on", choices=FAIL_ON, default="error")
    c.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the text and concise formats (auto: on a terminal; never with NO_COLOR set)",
    )
    c.add_argument(
        "--fix",
        action="store_true",
        help="write every finding's exact suggestion into the work tree (not where those lines changed since); "
        "report what is left",
    )
    c.add_argument(
        "--sarif", metavar="FILE", help="also write the report as SARIF 2.1.0 to FILE (the GitHub Action uploads it)"
    )
    c.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="processes for a large review such as --all (default 0: one per core; 1: this process only)",
    )
    c.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="report on these files only; with no --base, --diff, --staged or --all: audit them as they are in "
        "the work tree",
    )

    rp = sub.add_parser(
        "replay", parents=[profiled], help="review each first-parent commit since REV as its own change"
    )
    rp.add_argument("--repo", default=".", help="git repository, bare or not (default: .)")
    rp.add_argument("--since", required=True, help="replay the commits after this revision")
    rp.add_argument("--until", default="HEAD", help="up to this revision (default: HEAD)")
    rp.add_argument("--paths", nargs="+", default=[], metavar="GLOB", help="only commits touching these paths")
    rp.add_argument("--config", metavar="FILE", help=f"config for every commit (default: {CONFIG_PATH} at each base)")
    rp.add_argument("--format", choices=("text", "json"), default="text")

    r = sub.add_parser("rules", parents=[profiled], help="list the rules, or print one rule's documentation")
    r.add_argument("rule", nargs="?", help="a rule id such as NPU301")
    r.add_argument("--format", choices=("text", "markdown"), default="text", help="markdown: a table of them")

    i = sub.add_parser(
        "init", parents=[profiled], help=f"write a commented {CONFIG_PATH} for a repository, and show a first review"
    )
    i.add_argument("--repo", default=".", help="the git repository (default: .); the file goes into its work tree")
    i.add_argument("--head", default="HEAD", help="the revision whose files are counted and reviewed (default: HEAD)")
    i.add_argument("--force", action="store_true", help=f"replace an existing {CONFIG_PATH}")
    i.add_argument("--jobs", type=int, default=0, metavar="N", help="processes for the review, as in check")

    s = sub.add_parser("serve", help="run the webhook server (the GitHub App, GitCode merge requests)")
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--port", type=int, default=None, help="port (default: $PORT or 8080)")

    sub.add_parser("worker", help="run queued reviews from Redis (NPU_REVIEW_QUEUE=redis://...)")
    g = sub.add_parser(
        "gitcode-hook",
        help="register the server's webhook on a GitCode repository (GITCODE_TOKEN, GITCODE_WEBHOOK_SECRET)",
    )
    g.add_argument("repo", metavar="OWNER/REPO", help="the GitCode repository")
    g.add_argument("--url", required=True, help="the server's public address of POST /gitcode/webhook")
    from npu_review import facts_cmd  # its facts import is for the parser only: `--version` never builds it

    facts_cmd.add_parser(sub)
    return p


def _load_config(args: argparse.Namespace, config_tree: Tree | None) -> Config:
    from npu_review.checks.config import config_text, parse_config
    from npu_review.checks.engine import known_rule_ids
    from npu_review.gitsource import GitTree

    known = known_rule_ids()
    if args.config:
        try:
            with open(args.config, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read config {args.config}: {exc.strerror or exc}") from None
        return parse_config(config_text(data, args.config), known, source=args.config)
    if config_tree is None:
        return parse_config(None, known)
    source = f"{CONFIG_PATH} (base revision)"
    if isinstance(config_tree, GitTree):
        stored = config_tree.read_bytes(CONFIG_PATH)
        return parse_config(None if stored is None else config_text(stored, source), known, source=source)
    return parse_config(config_tree.read(CONFIG_PATH), known, source=source)


def _read_diff(name: str) -> str:
    """The text of `--diff FILE|-`; UsageError for one that cannot be read, is binary or holds no file diff."""
    try:
        if name == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream put in its place has none
            data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
        else:
            with open(name, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read diff {name}: {exc.strerror or exc}") from None
    where = "stdin" if name == "-" else name
    if b"\0" in data:
        raise UsageError(f"{where}: a binary file (it holds NUL bytes), not a unified diff")
    return data.decode("utf-8", errors="surrogateescape")


def _changeset(args: argparse.Namespace) -> tuple[ChangeSet, Git, Tree | None]:
    from npu_review.gitsource import changeset_audit, changeset_from_diff, changeset_from_git, changeset_staged

    modes = [m for m in ("base", "diff", "all", "staged") if getattr(args, m) not in (None, False, FIX_DIFF)]
    if len(modes) > 1:
        raise UsageError(f"--{modes[0]} and --{modes[1]} cannot be combined")
    if args.head and (args.diff not in (None, FIX_DIFF) or args.staged or (args.paths and not modes)):
        raise UsageError("--head goes with --base or --all")
    if args.diff == FIX_DIFF and not args.fix:
        raise UsageError("--diff needs a FILE or - (without a FILE it goes with --fix)")
    if args.all:
        cs, git = changeset_audit(args.repo, args.head or "HEAD")
        return cs, git, cs.head
    if args.base:
        cs, git = changeset_from_git(args.repo, args.base, args.head or "HEAD", args.title, keep=True)
        return cs, git, cs.base
    if args.staged:
        cs, git = changeset_staged(args.repo)
        config_tree = cs.base if git.has_commits() else None
        if args.paths and not all(p in cs.changes for p in _repo_paths(git, args.paths)):
            # pre-commit passes files the staged change does not touch (`run --all-files`, `--files`): review
            # those as they are, whole, like the other files it hands to its hooks.
            git.close()
            cs, git = _work_tree(args.repo)
        return cs, git, config_tree
    if args.diff not in (None, FIX_DIFF):
        text = _read_diff(args.diff)
        cs, git = changeset_from_diff(args.repo, text)
        if not cs.changes and text.strip():
            git.close()
            where = "stdin" if args.diff == "-" else args.diff
            raise UsageError(f"{where}: no file diff in it: not a unified diff")
        return cs, git, cs.base
    if args.paths:
        cs, git = _work_tree(args.repo)
        return cs, git, cs.base
    raise UsageError("say what to review: --base REV [--head REV], --diff FILE|-, --staged, --all or PATHs")


def _work_tree(repo: str) -> tuple[ChangeSet, Git]:
    from npu_review.gitsource import changeset_work_tree

    return changeset_work_tree(repo)


def _repo_paths(git: Git, paths: Sequence[str]) -> set[str]:
    """PATH arguments (relative to the current directory, as pre-commit and shells give them) as repository
    paths. In a bare repository they are taken as repository paths."""
    from pathlib import Path

    if git.is_bare():
        return {Path(p).as_posix() for p in paths}
    top = os.path.realpath(git.toplevel())
    out = set()
    for p in paths:
        absolute = os.path.abspath(p)
        # The directory's links resolved, not the file's own (a tracked symbolic link is a path of its own).
        rel = os.path.relpath(
            os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute)), top
        )
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            raise UsageError(f"{p}: not inside the repository {top}")
        out.add(Path(rel).as_posix())
    return out


def _selected(path: str, only: set[str]) -> bool:
    """A finding's path is one of the PATH arguments, or lies under one (a directory; `.` is the whole tree)."""
    return path in only or any(p in (".", "") or path.startswith(p.rstrip("/") + "/") for p in only)


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """No cyclic garbage collection while the rules run. They allocate many small objects (tokens, parse nodes)
    that reference counting frees file by file: a whole audit leaves no cycles behind (332 objects, all from
    start-up, on the generated 10,000-file tree as on verl's), so the collector's passes over the parses still
    held were pure cost, 5-15 % of an audit's CPU even at mypy's threshold of 50,000. The collector is left as
    it was found, for callers that go on in this process (tests, scripts calling main())."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def cmd_check(args: argparse.Namespace) -> int:
    import time
    from functools import partial
    from pathlib import Path

    from npu_review.checks.engine import run
    from npu_review.checks.model import Severity
    from npu_review.checks.output import render, summary_line
    from npu_review.parallel import available, default_jobs, process_mapper
    from npu_review.term import Progress, use_color

    if args.jobs < 0:
        raise UsageError(f"--jobs must be 1 or more (0: one per core), not {args.jobs}")
    cs, git, config_tree = _changeset(args)
    try:
        if args.fix and git.is_bare():
            raise UsageError(f"{args.repo}: --fix writes into the work tree, and this repository has none")
        only = _repo_paths(git, args.paths) if args.paths else None
        config = _load_config(args, config_tree)
        jobs = args.jobs or default_jobs()
        progress = Progress(sys.stderr)

        def show(done: int, count: int, checked: int) -> None:
            progress.show(f"npu-review: {checked:,} files checked ({done}/{count} parts)", force=done == count)

        mapper = process_mapper(jobs, show if progress.active else None) if jobs > 1 and available() else None
        try:
            with without_cyclic_gc():
                # PATHs: the rules check those files alone (the rest of the tree is read as context), and the
                # report is on them: what reviewing one file costs does not grow with the tree.
                selected = None if only is None else partial(_selected, only=only)
                report: Report = run(cs, config, clock=time.monotonic, mapper=mapper, jobs=jobs, only=selected)
        finally:
            progress.close()
        root = Path(git.toplevel()) if args.fix else None
    finally:
        git.close()
    shown = report
    if root is not None:
        shown = _fix(args, report, cs.head, root)
    color = use_color(args.color, sys.stdout)
    if args.diff != FIX_DIFF:
        sys.stdout.write(render(args.format, shown, cs.head, color=color))
    if args.format == "concise" and args.diff != FIX_DIFF:
        print(summary_line(shown), file=sys.stderr)
    if args.sarif:
        try:
            Path(args.sarif).write_text(render("sarif", shown, cs.head), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.sarif}: {exc.strerror or exc}") from None
    for err in report.errors:
        print(f"npu-review: warning: {err}", file=sys.stderr)
    if args.fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(args.fail_on)
    return EXIT_FINDINGS if any(f.severity >= threshold for f in shown.findings) else EXIT_OK


def _fix(args: argparse.Namespace, report: Report, head: Tree, root: Path) -> Report:
    """Applies (or, with --diff, prints) the suggestions; the report of what is left to fix by hand."""
    from npu_review import fix
    from npu_review.checks.engine import Report

    dry_run = args.diff == FIX_DIFF
    done = fix.plan(report.findings, head, root)
    if dry_run:
        sys.stdout.write(fix.unified_diff(done.files))
    else:
        try:
            fix.write(done.files, root)
        except OSError as exc:
            raise UsageError(f"cannot write the fixes: {exc.strerror or exc}") from None
    for line in fix.summary(done, dry_run):
        print(f"npu-review: {line}", file=sys.stderr)
    if dry_run:
        return report
    fixed = {id(f) for f in [*done.fixed, *done.already]}
    return Report([f for f in report.findings if id(f) not in fixed], report.files_checked, report.errors)


def cmd_rules(args: argparse.Namespace) -> int:
    from npu_review.checks.rule import rule_specs

    rules = rule_specs()  # the registry: only the rule whose documentation is asked for is imported
    if args.rule:
        rid = args.rule.upper()
        if rid not in rules:
            raise UsageError(f"unknown rule {args.rule!r} (see `npu-review rules`)")
        cls = rules[rid].load()
        default = "" if cls.enabled_by_default else ", off by default"
        print(f"{rid} {cls.name} ({cls.severity.label}{default})\n{cls.title}\n\n{cls.doc()}")
        return EXIT_OK
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return EXIT_OK
    width = max((len(c.name) for c in rules.values()), default=10)
    for rid, spec in rules.items():
        off = "" if spec.enabled_by_default else " (off by default)"
        print(f"{rid}  {spec.name:<{width}}  {spec.severity.label:<7}  {spec.title}{off}")
    return EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    from npu_review import replay

    config = _load_config(args, None) if args.config else None
    with without_cyclic_gc():
        results, seconds = replay.replay(
            args.repo, args.since, args.until, args.paths, config, replay.progress_stream()
        )
    render = replay.render_json if args.format == "json" else replay.render_text
    sys.stdout.write(render(results, seconds))
    return EXIT_OK


def rules_markdown() -> str:
    from npu_review.checks.rule import rule_specs

    rows = ["| id | name | severity | default | what it reports |", "|---|---|---|---|---|"]
    for rid, cls in rule_specs().items():
        on = "on" if cls.enabled_by_default else "off"
        rows.append(f"| {rid} | `{cls.name}` | {cls.severity.label} | {on} | {cls.title} |")
    return "\n".join(rows) + "\n"


@contextlib.contextmanager
def app_dependencies(command: str) -> Iterator[None]:
    """The App's modules come with the `app` extra: without them, say how to install them (exit 2)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in APP_MODULES:
            raise
        raise UsageError(
            f"`npu-review {command}` runs the GitHub App, whose dependencies are not installed ({exc.name}): "
            "pip install 'npu-review[app]'"
        ) from None


def cmd_worker(args: argparse.Namespace) -> int:
    with app_dependencies("worker"):
        from npu_review.bot.worker import work

    return work()


def cmd_init(args: argparse.Namespace) -> int:
    import datetime as dt
    import time
    from pathlib import Path

    from npu_review.checks.engine import run
    from npu_review.gitsource import changeset_audit
    from npu_review.init import init
    from npu_review.parallel import available, default_jobs, process_mapper

    if args.jobs < 0:
        raise UsageError(f"--jobs must be 1 or more (0: one per core), not {args.jobs}")
    cs, git = changeset_audit(args.repo, args.head)
    try:
        if git.is_bare():
            raise UsageError(f"{args.repo}: init writes {CONFIG_PATH} into the work tree, and this repository has none")
        jobs = args.jobs or default_jobs()
        mapper = process_mapper(jobs) if jobs > 1 and available() else None

        def review(changeset: ChangeSet, config: Config) -> Report:
            return run(changeset, config, clock=time.monotonic, mapper=mapper, jobs=jobs)

        try:
            path, look = init(cs, Path(git.toplevel()), version(), args.force, dt.date.today(), review)
        except FileExistsError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot write {CONFIG_PATH}: {exc.strerror or exc}") from None
    finally:
        git.close()
    print(f"npu-review init: wrote {path}\n")
    sys.stdout.write(look)
    print(f"\nCommit {CONFIG_PATH}: the App and `npu-review check` read it from the base branch.")
    return EXIT_OK


def cmd_gitcode_hook(args: argparse.Namespace) -> int:
    with app_dependencies("gitcode-hook"):
        from npu_review.bot.gitcode_setup import register

    return register(args.repo, args.url)


def cmd_serve(args: argparse.Namespace) -> int:
    with app_dependencies("serve"):
        from npu_review.bot.__main__ import serve

    return serve(host=args.host, port=args.port)


# Commands that run, print and end: the program ends right after them (see `program`). `serve` and `worker` run
# until stopped and end the usual way.
ONE_SHOT = frozenset({"check", "replay", "rules", "init", "facts", "version", "gitcode-hook"})


def program() -> NoReturn:
    """The `npu-review` program (its console script, and `python -m npu_review`).

    After a one-shot command it exits at once, as mypy does: what the review still holds (the parse caches,
    the report) is left to the operating system instead of being freed object by object, and the cyclic
    collector, off for the run (see `without_cyclic_gc`), is not turned back on to walk it all first. On the
    generated 10,000-file tree in one process that teardown took ~0.4 s, and the collection on the way out
    0.13 s; on verl's tree with the default jobs, 0.05 s."""
    # A file name that is not UTF-8 (a GBK `Presenter-Server\xbd\xe7.png`) reaches the text it is named in as
    # surrogate escapes: a UTF-8 stdout with strict errors stopped the run on it; it is written as the name's own
    # bytes, as `ls` writes them. (JSON and SARIF escape them: checks.output.json_text.)
    if getattr(sys.stdout, "errors", None) == "strict" and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="surrogateescape")
    command, code = _main(None, program=True)
    if command in ONE_SHOT:
        gitsource = sys.modules.get("npu_review.gitsource")
        if gitsource is not None:  # os._exit below: reap the `git cat-file` children first
            gitsource.close_all()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
            pass
        if "logging" in sys.modules:  # imported by the commands that log
            sys.modules["logging"].shutdown()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command in this process; its exit code."""
    return _main(argv, program=False)[1]


def _main(argv: Sequence[str] | None, program: bool) -> tuple[str | None, int]:
    """The command's name (None until the arguments are parsed) and its exit code. In the program, a one-shot
    command runs with the cyclic collector off for good: the program ends right after it."""
    command: str | None = None
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--version"]:  # what argparse would do (the option acts as it is read), without building it
        print(f"npu-review {version()}")
        return "version", EXIT_OK
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        if program and command in ONE_SHOT:
            gc.disable()
        # `cprofile`: `facts --profile NAME` names a facts profile, not this one
        profile = getattr(args, "cprofile", None) or os.environ.get(PROFILE_ENV)
        if profile:
            return command, _profiled(profile, args)
        return command, _dispatch(args)
    except _ShowVersion:
        print(f"npu-review {version()}")
        return "version", EXIT_OK
    except UsageError as exc:
        print(f"npu-review: error: {exc}", file=sys.stderr)
        return command, EXIT_USAGE
    except KeyboardInterrupt:
        return command, 130
    except BrokenPipeError:
        return command, EXIT_OK
    except Exception as exc:  # never a traceback for the user; NPU_REVIEW_DEBUG=1 shows it
        if isinstance(exc, _user_errors()):
            print(f"npu-review: error: {exc}", file=sys.stderr)
            return command, EXIT_USAGE
        if os.environ.get("NPU_REVIEW_DEBUG"):
            raise
        print(
            f"npu-review: internal error: {type(exc).__name__}: {exc} (set NPU_REVIEW_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return command, EXIT_USAGE


def _profiled(path: str, args: argparse.Namespace) -> int:
    """The command run under cProfile, its profile written to `path` when it ends however it ends (the program
    then leaves with os._exit, which would lose a profile written at interpreter exit)."""
    import cProfile

    profiler = cProfile.Profile()
    try:
        profiler.enable()
        try:
            return _dispatch(args)
        finally:
            profiler.disable()
    finally:
        try:
            profiler.dump_stats(path)
        except OSError as exc:
            print(f"npu-review: warning: cannot write the profile {path}: {exc.strerror or exc}", file=sys.stderr)


# The errors that are the user's (a bad config, repository or diff), by module: one that is not imported has raised
# nothing, so these are looked up only among the modules the command imported.
_USER_ERRORS = (
    ("npu_review.checks.config", "ConfigError"),
    ("npu_review.gitsource", "GitError"),
    ("npu_review.checks.diffing", "DiffError"),
)


def _user_errors() -> tuple[type[Exception], ...]:
    return tuple(getattr(m, name) for module, name in _USER_ERRORS if (m := sys.modules.get(module)) is not None)


def cache_dir() -> str | None:
    """Where the CLI keeps what it can reuse between runs (checks.diskcache): $NPU_REVIEW_CACHE_DIR (empty: no
    cache), else $XDG_CACHE_HOME/npu-review, else ~/.cache/npu-review; None when there is no home to put it in."""
    chosen = os.environ.get("NPU_REVIEW_CACHE_DIR")
    if chosen is not None:
        return chosen or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return None if base.startswith("~") else os.path.join(base, "npu-review")


def _dispatch(args: argparse.Namespace) -> int:
    from npu_review.checks import diskcache

    diskcache.use(cache_dir())
    if args.command == "check":
        return cmd_check(args)
    if args.command == "init":
        return cmd_init(args)
    if args.command == "rules":
        return cmd_rules(args)
    if args.command == "replay":
        return cmd_replay(args)
    if args.command == "worker":
        return cmd_worker(args)
    if args.command == "facts":
        from npu_review import facts_cmd

        return facts_cmd.run(args)
    if args.command == "gitcode-hook":
        return cmd_gitcode_hook(args)
    return cmd_serve(args)


if __name__ == "__main__":
    program()
