"""The `npu-review` command: check a change or a tree, list rules, serve the GitHub App."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from npu_review import facts_cmd
from npu_review.checks.config import CONFIG_PATH, Config, ConfigError, parse_config
from npu_review.checks.diffing import DiffError
from npu_review.checks.engine import Report, known_rule_ids, run
from npu_review.checks.model import ChangeSet, Severity, Tree
from npu_review.checks.output import FORMATS, RENDERERS
from npu_review.checks.rule import all_rules
from npu_review.gitsource import (
    Git,
    GitError,
    changeset_audit,
    changeset_from_diff,
    changeset_from_git,
    changeset_staged,
)
from npu_review.parallel import available, default_jobs, process_mapper

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = ("error", "warning", "notice", "never")


class UsageError(Exception):
    """Bad arguments, config or repository: exit 2 with one line on stderr."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="npu-review", description="Review changes for Ascend NPU mistakes.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check", help="review a change (or a whole tree) exactly as the App would")
    c.add_argument("--repo", default=".", help="git repository, bare or not (default: .)")
    c.add_argument("--base", help="review base..head; content is read from git objects")
    c.add_argument("--head", help="head revision (default: HEAD)")
    c.add_argument("--diff", metavar="FILE|-", help="review a unified diff; new content from the work tree")
    c.add_argument("--staged", action="store_true", help="review the staged change (for pre-commit)")
    c.add_argument("--all", action="store_true", help="audit every file of the tree at --head")
    c.add_argument("--config", metavar="FILE", help=f"repo config (default: {CONFIG_PATH} at the base revision)")
    c.add_argument("--title", default="", help="PR title, for rules that read its scope (default: head subject)")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.add_argument("--fail-on", choices=FAIL_ON, default="error")
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

    rp = sub.add_parser("replay", help="review each first-parent commit since REV as its own change")
    rp.add_argument("--repo", default=".", help="git repository, bare or not (default: .)")
    rp.add_argument("--since", required=True, help="replay the commits after this revision")
    rp.add_argument("--until", default="HEAD", help="up to this revision (default: HEAD)")
    rp.add_argument("--paths", nargs="+", default=[], metavar="GLOB", help="only commits touching these paths")
    rp.add_argument("--config", metavar="FILE", help=f"config for every commit (default: {CONFIG_PATH} at each base)")
    rp.add_argument("--format", choices=("text", "json"), default="text")

    r = sub.add_parser("rules", help="list the rules, or print one rule's documentation")
    r.add_argument("rule", nargs="?", help="a rule id such as NPU301")
    r.add_argument("--format", choices=("text", "markdown"), default="text", help="markdown: the README's table")

    i = sub.add_parser("init", help=f"write a commented {CONFIG_PATH} for a repository, and show a first review")
    i.add_argument("--repo", default=".", help="the git repository (default: .); the file goes into its work tree")
    i.add_argument("--head", default="HEAD", help="the revision whose files are counted and reviewed (default: HEAD)")
    i.add_argument("--force", action="store_true", help=f"replace an existing {CONFIG_PATH}")
    i.add_argument("--jobs", type=int, default=0, metavar="N", help="processes for the review, as in check")

    s = sub.add_parser("serve", help="run the GitHub App webhook server")
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--port", type=int, default=None, help="port (default: $PORT or 8080)")

    sub.add_parser("worker", help="run queued reviews from Redis (NPU_REVIEW_QUEUE=redis://...)")
    facts_cmd.add_parser(sub)
    return p


def _load_config(args: argparse.Namespace, config_tree: Tree | None) -> Config:
    known = known_rule_ids()
    if args.config:
        path = Path(args.config)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read config {args.config}: {getattr(exc, 'strerror', None) or exc}") from None
        return parse_config(text, known, source=args.config)
    if config_tree is None:
        return parse_config(None, known)
    return parse_config(config_tree.read(CONFIG_PATH), known, source=f"{CONFIG_PATH} (base revision)")


def _changeset(args: argparse.Namespace) -> tuple[ChangeSet, Git, Tree | None]:
    modes = [m for m in ("base", "diff", "all", "staged") if getattr(args, m)]
    if len(modes) > 1:
        raise UsageError(f"--{modes[0]} and --{modes[1]} cannot be combined")
    if args.head and (args.diff or args.staged):
        raise UsageError("--head goes with --base or --all")
    if args.all:
        cs, git = changeset_audit(args.repo, args.head or "HEAD")
        return cs, git, cs.head
    if args.base:
        cs, git = changeset_from_git(args.repo, args.base, args.head or "HEAD", args.title)
        return cs, git, cs.base
    if args.staged:
        cs, git = changeset_staged(args.repo)
        return cs, git, cs.base if git.has_commits() else None
    if args.diff:
        try:
            if args.diff == "-":
                text = sys.stdin.read()
            else:
                text = Path(args.diff).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise UsageError(f"cannot read diff {args.diff}: {exc.strerror or exc}") from None
        cs, git = changeset_from_diff(args.repo, text)
        return cs, git, cs.base
    raise UsageError("say what to review: --base REV [--head REV], --diff FILE|-, --staged or --all")


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
    if args.jobs < 0:
        raise UsageError(f"--jobs must be 1 or more (0: one per core), not {args.jobs}")
    cs, git, config_tree = _changeset(args)
    try:
        config = _load_config(args, config_tree)
        jobs = args.jobs or default_jobs()
        mapper = process_mapper(jobs) if jobs > 1 and available() else None
        with without_cyclic_gc():
            report: Report = run(cs, config, clock=time.monotonic, mapper=mapper, jobs=jobs)
        sys.stdout.write(RENDERERS[args.format](report, cs.head))
        if args.sarif:
            try:
                Path(args.sarif).write_text(RENDERERS["sarif"](report, cs.head), encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {args.sarif}: {exc.strerror or exc}") from None
    finally:
        git.close()
    for err in report.errors:
        print(f"npu-review: warning: {err}", file=sys.stderr)
    if args.fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(args.fail_on)
    return EXIT_FINDINGS if any(f.severity >= threshold for f in report.findings) else EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    rules = all_rules()
    if args.rule:
        rid = args.rule.upper()
        if rid not in rules:
            raise UsageError(f"unknown rule {args.rule!r} (see `npu-review rules`)")
        cls = rules[rid]
        default = "" if cls.enabled_by_default else ", off by default"
        print(f"{rid} {cls.name} ({cls.severity.label}{default})\n{cls.title}\n\n{cls.doc()}")
        return EXIT_OK
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return EXIT_OK
    width = max((len(c.name) for c in rules.values()), default=10)
    for rid, cls in rules.items():
        off = "" if cls.enabled_by_default else " (off by default)"
        print(f"{rid}  {cls.name:<{width}}  {cls.severity.label:<7}  {cls.title}{off}")
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
    rows = ["| id | name | severity | default | what it reports |", "|---|---|---|---|---|"]
    for rid, cls in all_rules().items():
        on = "on" if cls.enabled_by_default else "off"
        rows.append(f"| {rid} | `{cls.name}` | {cls.severity.label} | {on} | {cls.title} |")
    return "\n".join(rows) + "\n"


def cmd_worker(args: argparse.Namespace) -> int:
    from npu_review.bot.worker import work

    return work()


def cmd_init(args: argparse.Namespace) -> int:
    import datetime as dt
    from importlib import metadata

    from npu_review.init import init

    if args.jobs < 0:
        raise UsageError(f"--jobs must be 1 or more (0: one per core), not {args.jobs}")
    cs, git = changeset_audit(args.repo, args.head)
    try:
        if git.is_bare():
            raise UsageError(f"{args.repo}: init writes {CONFIG_PATH} into the work tree, and this repository has none")
        try:
            version = metadata.version("npu-review")
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        jobs = args.jobs or default_jobs()
        mapper = process_mapper(jobs) if jobs > 1 and available() else None

        def review(changeset: ChangeSet, config: Config) -> Report:
            return run(changeset, config, clock=time.monotonic, mapper=mapper, jobs=jobs)

        try:
            path, look = init(cs, Path(git.toplevel()), version, args.force, dt.date.today(), review)
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


def cmd_serve(args: argparse.Namespace) -> int:
    from npu_review.bot.__main__ import serve

    return serve(host=args.host, port=args.port)


# Commands that run, print and end: the program ends right after them (see `program`). `serve` and `worker` run
# until stopped and end the usual way.
ONE_SHOT = frozenset({"check", "replay", "rules", "init", "facts"})


def program() -> NoReturn:
    """The `npu-review` program (its console script, and `python -m npu_review`).

    After a one-shot command it exits at once, as mypy does: what the review still holds (the parse caches,
    the report) is left to the operating system instead of being freed object by object, and the cyclic
    collector, off for the run (see `without_cyclic_gc`), is not turned back on to walk it all first. On the
    generated 10,000-file tree in one process that teardown took ~0.4 s, and the collection on the way out
    0.13 s; on verl's tree with the default jobs, 0.05 s."""
    command, code = _main(None, program=True)
    if command in ONE_SHOT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
            pass
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command in this process; its exit code."""
    return _main(argv, program=False)[1]


def _main(argv: Sequence[str] | None, program: bool) -> tuple[str | None, int]:
    """The command's name (None until the arguments are parsed) and its exit code. In the program, a one-shot
    command runs with the cyclic collector off for good: the program ends right after it."""
    command: str | None = None
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        if program and command in ONE_SHOT:
            gc.disable()
        return command, _dispatch(args)
    except (UsageError, ConfigError, GitError, DiffError) as exc:
        print(f"npu-review: error: {exc}", file=sys.stderr)
        return command, EXIT_USAGE
    except KeyboardInterrupt:
        return command, 130
    except BrokenPipeError:
        return command, EXIT_OK
    except Exception as exc:  # never a traceback for the user; NPU_REVIEW_DEBUG=1 shows it
        if os.environ.get("NPU_REVIEW_DEBUG"):
            raise
        print(
            f"npu-review: internal error: {type(exc).__name__}: {exc} (set NPU_REVIEW_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return command, EXIT_USAGE


def _dispatch(args: argparse.Namespace) -> int:
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
        return facts_cmd.run(args)
    return cmd_serve(args)


if __name__ == "__main__":
    program()
