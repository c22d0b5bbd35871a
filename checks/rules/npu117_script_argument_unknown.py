"""NPU117: a caller passes a repository script an option its parser rejects, or an argument in the wrong slot."""

from __future__ import annotations

import difflib
import fnmatch
import posixpath
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.references import FileRef, ascend_command_refs, same_name_elsewhere, start_folders
from npu_review.checks.analysis.scripts import PYTHON_CALLER_GLOBS, ScriptCall, change_script_calls, script_interface
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCKERFILE, DOCS, MARKUP, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

# A word a guide writes for the reader to fill in or choose from (`--<pkg_type>`, `--[opapi|jit]`, `{a,b}`).
_PLACEHOLDER = lazyre.compile(r"[<>\[\]{}|]")
# What makes a guide Ascend's (NPU117 judges the calls of Ascend guides): its name, CANN's, HCCL, torch_npu, a chip.
_ASCEND_GUIDE = lazyre.compile(r"ascend|\bcann\b|\bhccl\b|torch_npu|昇腾|\b910[abc]?\d?\b|\b310[bp]\b")
_MAX_LISTED = 6  # a parser's options named in the message when none is close to the one passed
_ASCEND_WORDS = lazyre.compile(r"(?i)npu|ascend|cann|hccl")
# An argument that is one variable (`$factor`, `${MODEL_PATH}`, `${{ inputs.model_path }}`): the name it passes.
_WHOLE_REF = lazyre.compile(r"\$(?:\{\{\s*|\{)?(?:[\w-]+\.)*([A-Za-z_][\w-]*)\s*(?:\}\}|\})?")


class ScriptArgumentUnknown(Rule):
    """A caller passes a repository script an option it does not handle, or an argument in another slot.

    Why: a script that parses its options with `case "$1" in ... *) echo "Unknown option"; exit 1` stops at an
    option it no longer knows: a CI step that still passes `--torch-version` after the script moved to
    `--cann-version` (sgl-kernel-npu) fails before it installs anything. A positional argument given one slot
    too early lands in another parameter (vllm-ascend passed 11 arguments to a script that reads the case name
    from `$12`: the name became the coordination directory).

    Bad:
        # scripts/install_deps.sh
        while [[ $# -gt 0 ]]; do
            case "$1" in
                --cann-version) CANN_VERSION="$2"; shift 2 ;;
                *) echo "Unknown option: $1"; exit 1 ;;
            esac
        done
        # .github/workflows/build.yml
        - run: bash scripts/install_deps.sh --torch-version 2.10.0

    Good:
        - run: bash scripts/install_deps.sh --cann-version 9.1.0

    The repository's Python scripts are judged the same way where an NPU script, an Ascend CI job or an Ascend
    guide runs them (`python tools/export.py --pretrained-path x`, `torchrun ... train.py --opt v`, also behind a
    launch wrapper: `nohup python train.py --x 1 &`, `mpirun -n 8 python ./tools/train.py --opt v`, `taskset`,
    `numactl`, `timeout`, `stdbuf`, `time`, `env`, as NPU118 reads them): an option
    the script's `argparse` parser does not define (nor abbreviates: argparse takes a unique prefix) stops it
    with `unrecognized arguments` before it does anything. A guide that still passes `--mutiview` after the demo
    renamed it `--multiview`, or `--pretrained_path` to a parser of `--pretrained-path`, fails every reader. A
    guide's `bash build.sh --package` (or `./build.sh --package`) is judged against the shell script's parser
    the same way (the option it rejects; a guide shows one way to call it, so not the options it requires). A
    guide's script whose folder the steps before leave unknown is taken from the guide's folder, else the root.

    Fix: pass what the script's parser handles (its `case` patterns are named in the message), or teach the
    script the option.

    An option is required when its branch of the parser is the only place that sets a variable the script reads
    under `set -u` with no default: a call without it stops at `unbound variable`.

    Not reported: a wrapped call that NPU118's reading leaves unread (`mpirun -wdir D`, `env -C D`: another
    folder's script), scripts whose parser passes unknown options on (no `exit` in its `*)` branch), options written
    with variables, an option named to be rejected (`--invalid`, `--unknown-option`: a test of the script's error
    path), callers outside the repository; Python scripts whose parser is not whole in their own text
    (options added by other modules, parent parsers, sub-commands, `parse_known_args`, `HfArgumentParser`,
    Hydra, `fire`, `click`, a script that edits `sys.argv`); a design or planning doc's commands (a dated doc under
    `specs/`, `plans/`, `rfcs/`, `proposals/`, or one whose head says `Status: Draft`, `Approved`, ...): the
    options its plan will add. A finding sits on the call; when the change touched only
    the script, on the call all the same, as caused by the change.
    """

    id = "NPU117"
    name = "script-argument-unknown"
    severity = Severity.ERROR
    title = "A caller passes a repository script an option it rejects or an argument in the wrong slot"
    kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, ASCEND_WORKFLOW, DOCS, MARKUP})
    named_suffixes = (".py", ".sh", ".bash")  # the scripts a guide runs (their option parsers)
    context_kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, DOCKERFILE})
    # A doc runs no shell script another file defines the options of: a doc edit reads no other file.
    context_triggers = frozenset({SHELL, NPU_SCRIPT, WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return PYTHON_CALLER_GLOBS  # the Python build files whose `["sh", "x.sh"]` calls script_calls reads

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        """The options the file's Ascend commands pass to the repository's Python scripts."""
        guide = bool(src.kinds & {DOCS, MARKUP})
        text = src.text
        if not (("--" in text and ".py" in text) or (guide and " -" in text and ".sh" in text)):
            return  # no `--option` to a Python script, no option at all to a guide's shell script
        ascend: bool | None = None  # the guide names Ascend (asked once, on its first call with arguments)
        for ref in ascend_command_refs(ctx, src):
            if ref.found is None or not ref.args:
                continue
            if guide and ascend is None:
                ascend = ctx.ascend_only() or _ASCEND_GUIDE.search(text.lower()) is not None
            if guide and not ascend:
                return  # "NPU" alone: a guide for another vendor's NPU (a Rockchip board, an STC card) is not Ascend's
            if guide and _copies_elsewhere(ctx, ref):
                continue  # `bash scripts/run.sh` with a `scripts/run.sh` in every example: which one, the prose says
            if guide and len([p for p in ref.candidates if ctx.changeset.head.exists(p)]) > 1:
                # `bash build.sh -i` in a nested project's CONTRIBUTING.md, with a build.sh at the root and one beside
                # the guide: which one the reader runs, the guide's place does not say (a vendored torchair's own
                # build.sh takes `-i`; rs-r46, judged false three times)
                continue
            if ref.how == "python":
                yield from _python_options(ctx, ref)
            elif ref.how in ("script", "exec") and guide:
                # A guide's `bash build.sh --opt`: the shell script's own parser, as for its callers in scripts,
                # CI steps and Dockerfiles (check_project); only an option it rejects (a guide shows one way).
                call = ScriptCall(src.path, ref.command_line, ref.found, "bash", ref.args, "doc", False)
                for hit in _check(ctx, call, options_only=True):
                    yield _as_caused(hit) if _caused_by_script(ctx, ref, hit.line) else hit

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        for target, calls in change_script_calls(ctx).items():
            if not any(c.args for c in calls):
                continue
            touched_target = ctx.audit or ctx.touched(target)
            for call in calls:
                if not (touched_target or ctx.touched(call.caller)):
                    continue
                for hit in _check(ctx, call):
                    yield _as_caused(hit) if not ctx.audit and not ctx.touched(call.caller) else hit


def _as_caused(hit: Hit) -> Hit:
    """The finding on a call the change did not touch, as caused by the change (to the script it calls)."""
    return Hit(hit.path, hit.line, hit.message, related=hit.related, caused_by_change=True)


# An option named to be rejected (`--invalid`, `--unknown-option`, `--bogus`): a test of the script's error path.
_ON_PURPOSE = lazyre.compile(r"(?i)invalid|unknown|bogus|nonexist|not[-_]?exist|wrong|fake")


def _caused_by_script(ctx: Context, ref: FileRef, line: int) -> bool:
    """A call's line the change did not write, to a script the change touched: the finding is the change's doing."""
    if ref.found is None or ctx.audit:
        return False
    return ctx.touched(ref.found) and not ctx.is_added_line(ref.source, line)


def _check(ctx: Context, call: ScriptCall, options_only: bool = False) -> Iterator[Hit]:
    iface = script_interface(ctx, call.target)
    if iface is None:
        return
    src = ctx.source(call.target)
    if src is None or not (NPU_SCRIPT in src.kinds or _ASCEND_WORDS.search(src.text)):
        return  # the script has nothing of Ascend: not this App's business
    words = [w.unquoted for w in call.args]
    if iface.patterns and iface.rejects_others:
        for k, w in enumerate(words):
            if not w.startswith("-") or "$" in call.args[k].raw or w == "--" or _PLACEHOLDER.search(w):
                continue
            if iface.getopts:
                if w.startswith("--"):
                    continue  # getopts reads no long option: what it does with one depends on the script
                w = w[:2]  # `-j16`: the letter `j` with its value
            elif iface.splits_short and not w.startswith("--"):
                w = w[:2]  # GNU getopt made `-j16` `-j 16` before the script's `case` sees it
            name = w.split("=", 1)[0]
            if any(fnmatch.fnmatchcase(w, p) or fnmatch.fnmatchcase(name, p) for p in iface.patterns if p != "*"):
                continue
            if _ON_PURPOSE.search(name):
                return  # `./run.sh --invalid || echo "expected error"`: a test that the script rejects it
            known = ", ".join(f"`{p}`" for p in iface.patterns if p != "*")
            yield Hit(
                call.caller,
                call.args[k].line,
                f"`{call.target}` does not handle `{name}`: its option parser (line {iface.line}) knows {known}, "
                "and its `*)` branch stops the script for anything else, so this call fails before the script does "
                "its work. Pass one of those options, or add this one to the script.",
                related=(Related(call.target, iface.line, "its option parser"),),
            )
            return
    if options_only:
        return
    asks_help = any(w in ("-h", "--help") for w in words)
    opaque = any(w.startswith("-") and "$" in w for w in words) or _passes_all(call)
    if iface.required and not asks_help and not opaque:
        given = {w.split("=", 1)[0] for w in words if w.startswith("-")}
        missing = [(o, v) for o, v in iface.required.items() if o not in given]
        if missing:
            option, var = missing[0]
            line = call.args[-1].line if call.args else call.line
            yield Hit(
                call.caller,
                call.line,
                f"`{call.target}` requires `{option}`: its option parser (line {iface.line}) is the only place "
                f"that sets `{var}`, which the script reads under `set -u`, so without the option it stops "
                f"(`{var}: unbound variable`) before doing its work. Pass `{option} ...` here.",
                end_line=max(line, call.line),
                related=(Related(call.target, iface.line, "its option parser"),),
            )
            return
    if iface.slots and not iface.patterns:
        by_name = {_norm(v): k for k, v in iface.slots.items()}
        for j, arg in enumerate(call.args, start=1):
            m = _WHOLE_REF.fullmatch(arg.raw.strip("\"'"))
            if m is None:
                continue  # not a variable alone: `data/${set}_sp${factor}` is a path built with `factor`, not it
            slot = by_name.get(_norm(m.group(1)))
            own = iface.slots.get(j)
            if slot is None or slot == j or (own is not None and _norm(own) == _norm(m.group(1))):
                continue
            if 0 < slot <= len(call.args) and call.args[slot - 1].raw.strip("\"'") == arg.raw.strip("\"'"):
                continue  # the same value is in its slot too: an extra copy, not a misplaced one
            yield Hit(
                call.caller,
                arg.line,
                f"`{arg.raw}` is argument {j} of `{call.target}`, which reads `{iface.slots[slot]}` from `${slot}`"
                + (f" and `{own}` from `${j}`" if own else "")
                + f": the value lands in the wrong parameter. Pass it as argument {slot} (fill the slots before it).",
                related=(Related(call.target, 1, f"reads {iface.slots[slot]} from ${slot}"),),
            )
            return


def _copies_elsewhere(ctx: Context, ref: FileRef) -> bool:
    """The script a guide names by a path with a folder (`scripts/run.sh`) is at that path in other folders of the
    repository too: the guide's text ("run in examples/x"), not its commands, says which one the reader runs."""
    tail = ref.text.removeprefix("./")
    if "/" not in tail or ref.found is None:
        return False
    same = [p for p in same_name_elsewhere(ctx, ref.found, limit=1_000) if p == tail or p.endswith("/" + tail)]
    return len(same) > 1


def _python_options(ctx: Context, ref: FileRef) -> Iterator[Hit]:
    """The first option of one command that the Python script's parser rejects (one finding per command: the
    script stops at the first)."""
    from npu_review.checks.analysis.pyargs import python_interface

    assert ref.found is not None
    passed = [w.unquoted.split("=", 1)[0] for w in ref.args if w.unquoted.startswith("--") and len(w.unquoted) > 2]
    if not passed:
        return  # no option (Hydra's `key=value` overrides, positional arguments): the parser is not read
    script = ctx.source(ref.found)
    if script is None or all(f'"{o}"' in script.text or f"'{o}'" in script.text for o in passed):
        return  # every option is a string of the script, as a parser defines it: nothing to parse for
    iface = python_interface(ctx, script)
    if iface is None:
        return
    for word in ref.args:
        text = word.unquoted
        if text == "--" or word.raw in ("|", "||", "&&", ";", "&"):
            return  # what follows is no option of the script's
        if not text.startswith("--") or "$" in word.raw or "`" in word.raw or _PLACEHOLDER.search(text):
            continue
        if " " in text.split("=", 1)[0]:
            continue  # `"--enforce-eager "`: argparse takes a word with a blank for a value, never an option
        name = text.split("=", 1)[0]
        if iface.accepts(name):
            continue
        if _another_takes_them(ctx, ref, passed):
            return  # a bare name that may be run from a folder above, whose script of that name takes them
        own = sorted(iface.options - {"--help"})
        # (never an option the call passes already: `--num_class` beside `--num_per_class` would be given twice,
        # argparse keeping the last, so the advice would break the call; mindspore model zoo, rs-r41, judged false)
        near = difflib.get_close_matches(name, [o for o in own if o not in passed], n=1, cutoff=0.75)
        if near:
            advice = f"Pass `{near[0]}`"
        elif 0 < len(own) <= _MAX_LISTED:
            advice = "Pass one of its options (" + ", ".join(f"`{o}`" for o in own) + ")"
        else:
            advice = "Pass one of its options"
        yield Hit(
            ref.source,
            word.line,
            f"`{ref.found}` has no option `{name}`: its argparse parser (line {iface.line}) does not define it, "
            f"so the script stops with `unrecognized arguments: {name}` before doing its work. {advice}, or add "
            "the option to the script.",
            related=(Related(ref.found, iface.line, "its argument parser"),),
            caused_by_change=_caused_by_script(ctx, ref, word.line),
            # The same option spelled the same wrong way for several scripts (`--image-path` for `--image_path`)
            # is one habit, one comment.
            cause=f"{name} for {near[0]}" if near else f"{ref.found} {name}",
        )
        return


def _another_takes_them(ctx: Context, ref: FileRef, passed: list[str]) -> bool:
    """The guide runs the script by its bare name (`python convert_weight.py`) and a script of that name in a
    folder above the guide's (the project's root one, when the guide's steps run from there) takes every option
    passed, or one whose parser is not whole (`parse_known_args`): which one is meant is not known, and that one
    may work."""
    from npu_review.checks.analysis.pyargs import python_interface

    if ref.found is None or "/" in ref.text.strip("./"):
        return False
    name = posixpath.basename(ref.found)
    for folder in start_folders(posixpath.dirname(posixpath.dirname(ref.source))):
        other = posixpath.join(folder, name) if folder else name
        if other == ref.found or not ctx.changeset.head.exists(other):
            continue
        src = ctx.source(other)
        if src is None:
            continue
        iface = python_interface(ctx, src)
        if iface is None or all(iface.accepts(o) for o in passed):
            return True  # it takes them, or what it takes is not known (`parse_known_args` takes anything)
    return False


def _passes_all(call: ScriptCall) -> bool:
    """The caller hands on its own arguments (`"$@"`): what they hold is unknown."""
    return any(w.raw in ('"$@"', "$@", '"$*"', "$*") for w in call.args)


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").removeprefix("inputs.").removeprefix("matrix.")
