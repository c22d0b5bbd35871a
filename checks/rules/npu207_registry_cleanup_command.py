"""NPU207: a CI step that cleans up registry tags uses a command that does not delete, or hides its failure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.workflow import Job, Workflow
from npu_review.checks.parsers.sh import Command, Source, commands
from npu_review.checks.rule import Hit, Rule

_PREFILTER = lazyre.compile(r"crane|regctl|skopeo|oras|docker\s+(?:rmi|image\s+(?:rm|remove))")
# Commands after which an image is on the runner (a later `docker rmi` of it is local cleanup).
_MAKES_LOCAL = lazyre.compile(r"docker\s+(?:pull|build|tag|load|run|create|commit|import|compose)\b|--load\b")


class RegistryCleanupCommand(Rule):
    """A step meant to delete image tags from the registry uses a command that deletes nothing, or swallows
    the failure with `|| true` without a word in the log.

    Why: the Ascend image builds push per-architecture temporary tags (`tmp-a2-amd64`) and delete them after
    the multi-arch merge. `crane tag delete IMG:TAG` is not a delete (`crane tag` adds a tag; it fails), and
    `docker rmi IMG:TAG` only removes the runner's local copy. With `|| true` after it, the step is green
    while nothing was deleted: verl shipped `./crane tag delete ... || true` in #7345, and the temporary tags
    piled up in quay.io/ascend/verl until #7293 changed it to `crane delete`. `|| true` on purpose is fine when
    the failure is logged (`|| echo "::warning::..."`), and on local cleanup such as `docker system prune`.

    Bad:
        ./crane tag delete ${{ env.QUAY_REPO }}:tmp-a3-amd64 || true
        docker rmi quay.io/ascend/verl:tmp-a3-amd64

    Good:
        ./crane delete ${{ env.QUAY_REPO }}:tmp-a3-amd64 || echo "::warning::could not delete tmp-a3-amd64"
        docker system prune -a -f --volumes || true

    A correct delete (`crane delete IMG:TAG`) followed by `|| true` is a notice only: the cleanup works, and a
    temporary tag left behind by a failed run costs little.

    The same mistake on several lines of one step is one finding (one comment), listing the lines.

    Fix: delete with `crane delete IMG:TAG` (or `regctl tag rm`, `skopeo delete`), and log a warning instead
    of `|| true` (a suggestion is attached when both are on one line).
    """

    id = "NPU207"
    name = "registry-cleanup-command"
    severity = Severity.WARNING
    title = "Registry cleanup command does not delete, or hides its failure"
    kinds = frozenset({ASCEND_WORKFLOW})  # GPU workflows are not this App's business

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if workflow_host(src.path) is None or not _PREFILTER.search(src.text):
            return
        section = ctx.facts.registry_cleanup
        deletes, loggers = list(section.delete_commands), list(section.log_commands)
        local = _makes_local(job)
        for step in job.steps:
            if step.run is None or not _PREFILTER.search(step.run.value):
                continue
            found = commands(Source.lines(step.run.text_lines()), heredoc_bodies=True)
            yield from _one_per_cause(ctx, src, list(self._commands(src, wf, found, deletes, loggers, local)))

    def _commands(
        self,
        src: SourceFile,
        wf: Workflow,
        commands: list[Command],
        deletes: list[tuple[str, ...]],
        loggers: list[str],
        local: bool,
    ) -> Iterator[Hit]:
        for i, cmd in enumerate(commands):
            argv = cmd.argv
            if not argv:
                continue
            words = [argv[0].rsplit("/", 1)[-1], *(a for a in argv[1:] if not a.startswith("-"))]
            kind = next((d for d in deletes if tuple(words[: len(d)]) == d), None)
            notes: list[str] = []
            ref = ""
            if kind is not None:
                ref = words[len(kind)] if len(words) > len(kind) else ""
                if kind[:3] == ("crane", "tag", "delete"):
                    notes.append(
                        "`crane tag` adds a tag to an image; there is no `crane tag delete`, so this deletes "
                        "nothing. Use `crane delete IMG:TAG`."
                    )
            elif words[0] == "docker" and (
                words[1:2] == ["rmi"] or words[1:3] in (["image", "rm"], ["image", "remove"])
            ):
                refs = words[2:] if words[1] == "rmi" else words[3:]
                remote = [r for r in refs if _is_remote(r)]
                if not remote or local:
                    continue  # local cleanup of an image this job pulled or built
                ref = remote[0]
                notes.append(
                    f"`docker rmi` removes only this runner's copy of `{ref}`; the tag stays in the registry. "
                    "Use `crane delete IMG:TAG` to delete it there."
                )
            else:
                continue
            silenced = cmd.op == "||" and i + 1 < len(commands) and commands[i + 1].argv[:1] in (("true",), (":",))
            correct = not notes  # a real delete (`crane delete IMG:TAG`): only the `|| true` is left to say
            if silenced and not any(lg in " ".join(commands[i + 1].argv) for lg in loggers):
                if correct:
                    notes.append(
                        "`|| true` after this delete hides a failure in the log (the temporary tag would stay). "
                        'The delete itself is right; `|| echo "::warning::could not delete ..."` would say so.'
                    )
                else:
                    notes.append(
                        "`|| true` hides a failed delete: the step stays green while the tag is left behind. Log "
                        'it instead: `|| echo "::warning::could not delete ..."`.'
                    )
            if not notes:
                continue
            yield Hit(
                src.path,
                cmd.line,
                " ".join(notes),
                suggestion=_suggest(src.line(cmd.line), ref, silenced),
                severity=Severity.NOTICE if correct else None,
            )


def _one_per_cause(ctx: Context, src: SourceFile, hits: list[Hit]) -> Iterator[Hit]:
    """The same mistake on several lines of one step (one `crane tag delete` per temporary tag) is one cause:
    one finding, on the first changed line, with one suggestion for the lines when they are consecutive."""
    groups: dict[tuple[str, Severity | None], list[Hit]] = {}
    for h in hits:
        groups.setdefault((h.message, h.severity), []).append(h)
    for (message, severity), group in groups.items():
        if len(group) == 1:
            yield group[0]
            continue
        lines = [h.line for h in group]
        added = [n for n in lines if ctx.is_added_line(src.path, n)] or lines
        consecutive = lines == list(range(lines[0], lines[0] + len(lines)))
        if consecutive and added == lines and all(h.suggestion is not None for h in group):
            suggestion: str | None = "\n".join(h.suggestion or "" for h in group)
            end: int | None = lines[-1]
        else:
            suggestion, end = None, None
        others = ", ".join(str(n) for n in lines if n != added[0])
        yield Hit(
            src.path,
            added[0],
            f"{message} The same goes for line{'s' if len(lines) > 2 else ''} {others} of this step.",
            end_line=end,
            suggestion=suggestion,
            severity=severity,
        )


def _makes_local(job: Job) -> bool:
    for step in job.steps:
        if step.run is not None and _MAKES_LOCAL.search(step.run.value):
            return True
        if step.uses and "build-push-action" in step.uses:
            load = step.with_.get("load")
            if load is not None and load.is_scalar and load.value.strip().lower() == "true":
                return True
    return False


def _is_remote(ref: str) -> bool:
    """`quay.io/x/y:tag`, `${{ env.QUAY_REPO }}:tag`: a reference naming a registry host."""
    if "${{" in ref:
        return True
    first = ref.split("/", 1)[0]
    return "/" in ref and ("." in first or ":" in first or first == "localhost")


def _suggest(line: str, ref: str, silenced: bool) -> str | None:
    """The line with `crane tag delete` -> `crane delete` and `|| true` -> `|| echo "::warning::..."`."""
    new = line
    if "crane tag delete" in new:
        if new.count("crane tag delete") != 1:
            return None
        new = new.replace("crane tag delete", "crane delete")
    if silenced:
        m = list(re.finditer(r"\|\|\s*(?:true|:)\s*$", new))
        if len(m) != 1 or not ref or '"' in ref:
            return None
        new = new[: m[0].start()] + f'|| echo "::warning::could not delete {ref}"'
    elif new == line:
        return None
    return new if new != line else None
