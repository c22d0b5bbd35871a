"""NPU214: two image builds (workflows, jobs or matrix legs) push the same tag of one image."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.builds import CallLeg, change_mentions, graph
from npu_review.checks.analysis.workflows import workflow, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.expressions import substitute
from npu_review.checks.parsers.gha.metadata_action import TagRule, is_metadata_action, parse_line, tag_rules
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.gha.workflow import Job, Scope, Step, Workflow, legs, trigger_filters
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

_BUILDERS = ("docker/build-push-action", "docker/bake-action")
# What the tag's variable part is, per rule kind: tags of two rules can be equal only when these are.
_KIND = {
    ("ref", "branch"): "{branch}",
    ("ref", "tag"): "{git tag}",
    ("ref", "pr"): "pr-{number}",
}
_LITERAL_COMPARE = lazyre.compile(r"^\$\{\{\s*'([^']*)'\s*(==|!=)\s*'([^']*)'\s*\}\}$")


@dataclass(frozen=True)
class _Tag:
    path: str
    line: int
    job: str
    leg: str  # "device=a3" or ""
    image: str  # repository path without the registry host: mirrors of one namespace are one image
    template: str  # the tag with its variable part named, e.g. "{branch}-openeuler"
    shown: str  # the same for a reader: "<branch>-openeuler", "{{version}}-a3"
    event: str  # push-branch, push-tag, pull_request, any
    branches: tuple[str, ...]  # push branch (or tag) filters; () when unfiltered
    pushed_on_pr: bool
    enable: str  # the rule's `enable=` as written after the leg's values ("" when always)

    @property
    def producer(self) -> tuple[str, str, str]:
        return (self.path, self.job, self.leg)

    @property
    def who(self) -> str:
        leg = f" [{self.leg}]" if self.leg else ""
        return f"`{self.path}` job `{self.job}`{leg}"


class TwoProducersOfOneTag(Rule):
    """Two image builds push the same tag of one image, so each overwrites the other's image.

    Why: the tags of an image come from each build's `docker/metadata-action` rules and the suffix its matrix
    leg or workflow adds (`-a3`, `-310p`, `-openeuler`). When two variants yield the same tag (a rule left
    without the variant's suffix, a matrix leg with an empty `suffix` that is not the default variant, two
    workflows whose rules agree), whichever build finishes last wins, and users of the tag get the other
    device's or OS's image. Registry mirrors of one repository (`quay.io/org/app`, `mirror.example.com/org/app`)
    count as one image. vllm-ascend's 310P openEuler build tagged pull requests `pr-N-openeuler`, the A2 openEuler
    build's tag.

    Bad:
        # .github/workflows/image_openeuler.yml
        tags: |
          type=ref,event=branch,suffix=-openeuler
          type=ref,event=pr,suffix=-openeuler
        # .github/workflows/image_310p_openeuler.yml
        tags: |
          type=ref,event=branch,suffix=-310p-openeuler
          type=ref,event=pr,suffix=-openeuler

    Good:
        # .github/workflows/image_openeuler.yml
        tags: |
          type=ref,event=branch,suffix=-openeuler
          type=ref,event=pr,suffix=-openeuler
        # .github/workflows/image_310p_openeuler.yml
        tags: |
          type=ref,event=branch,suffix=-310p-openeuler
          type=ref,event=pr,suffix=-310p-openeuler

    The legs of a job that calls a reusable image workflow (`uses: ./.github/workflows/build.yml` with a matrix
    of `with:` values) are compared too, with the called workflow evaluated for each leg (its `inputs`, the
    `$GITHUB_ENV` its steps write, its metadata-action rules): a leg whose entry lacks the `suffix` the others
    set is reported on its matrix entry (vllm-ascend's 310P entries were pushed under the A2 tags).

    Fix: give every variant's rules the variant's suffix (in each rule or in `flavor: suffix=`).

    The colliding rules of one image are one cause, one comment naming the others (a workflow whose four tag
    rules give every matrix leg the same tags is one missing suffix).

    Not reported: rules whose tag or `enable=` is not known statically (other than by matrix values), builds
    whose push filters (`branches:`, `tags:`) cannot overlap, rules that differ in `enable=`, and builds that never
    push (`push: false`, with no `outputs:` or outputs that stay on the runner: `type=docker,dest=x.tar`).
    Pull-request tags of builds that push only on `push` events are a notice.
    """

    id = "NPU214"
    name = "two-producers-of-one-tag"
    severity = Severity.WARNING
    title = "Two image builds push the same tag"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        yield from self._call_legs(ctx)
        yield from self._same_workflow(ctx)

    def _call_legs(self, ctx: Context) -> Iterator[Hit]:
        """The legs of one call of a reusable image workflow (`uses: ./.github/workflows/build.yml` with a
        matrix of `with:` values) whose tags come out the same: one leg's image overwrites the other's."""
        wfs = frozenset({WORKFLOW, ASCEND_WORKFLOW})
        if not change_mentions(ctx, ("uses: ./", "metadata-action", "suffix"), wfs):
            return
        g = graph(ctx, reads=wfs)
        groups: dict[tuple[str, str, str, str], list[tuple[CallLeg, set[tuple[str, str]], list[str]]]] = {}
        for lt in g.leg_tags:
            known = [p for p in lt.produced if "<?>" not in p.shown]  # an unknown value is no shared tag
            keys = {(_namespace(p.image), p.pattern.pattern) for p in known}
            shown = list(dict.fromkeys(p.shown for p in known))
            groups.setdefault((lt.leg.caller, lt.leg.job, lt.callee, lt.job), []).append((lt.leg, keys, shown))
        for (_caller, job, callee, _cjob), items in sorted(groups.items()):
            legs_seen: dict[int, tuple[CallLeg, set[tuple[str, str]], list[str]]] = {}
            for leg, keys, shown in items:
                prev = legs_seen.get(leg.line)
                legs_seen[leg.line] = (leg, keys | (prev[1] if prev else set()), shown)
            ordered = sorted(legs_seen.values(), key=lambda x: x[0].line)
            for k, (leg, keys, _shown) in enumerate(ordered):
                clash = [(o, keys & okeys) for o, okeys, _s in ordered[:k] if keys & okeys]
                if not clash or not ctx.is_added_line(leg.caller, leg.line):
                    continue
                other, common = clash[0]
                images = sorted({img for img, _p in common})
                tags = list(dict.fromkeys(s for s in _shown_of(items, leg, common)))
                yield Hit(
                    leg.caller,
                    leg.line,
                    f"This matrix entry of job `{job}` ({leg.label or 'its leg'}) gets the same tags as "
                    f"{other.label or 'another entry'} (line {other.line}) from `{callee}`: `{images[0]}` "
                    f"{', '.join(f'`{t}`' for t in tags[:4])}. The two images overwrite each other under one tag. "
                    "Give this entry its own suffix.",
                    # The entries of one call that collide are one decision (the call's matrix gives them no suffix).
                    cause=f"entries of {job} calling {callee} share tags",
                )

    def _same_workflow(self, ctx: Context) -> Iterator[Hit]:
        tags: list[_Tag] = []
        # (the workflows that name the action, found without reading the others where the tree can search)
        for path in ctx.paths_mentioning(("metadata-action",), workflow_paths(ctx, "head")):
            wf = workflow(ctx, path)
            if wf is not None:
                tags.extend(_tags(wf))
        by_key: dict[tuple[str, str], list[_Tag]] = {}
        for t in tags:
            by_key.setdefault((t.image, t.template), []).append(t)
        per_line: dict[tuple[str, int], list[tuple[_Tag, list[_Tag]]]] = {}
        for group in by_key.values():
            for t in group:
                others = [o for o in group if o.producer != t.producer and _meet(t, o)]
                if others:
                    per_line.setdefault((t.path, t.line), []).append((t, others))
        for (path, line), entries in sorted(per_line.items()):
            first = entries[0][0]
            mine = [t.leg for t, _ in entries if t.leg]
            others = list(dict.fromkeys(o for _, os in entries for o in os))
            siblings = [o.leg for o in others if o.path == path and o.job == first.job and o.line == line and o.leg]
            elsewhere = list(dict.fromkeys(o.who for o in others if not (o.path == path and o.job == first.job)))
            parts = []
            if siblings:
                legs = list(dict.fromkeys(mine + siblings))
                parts.append(f"in matrix legs {_and(legs)} alike")
            if elsewhere:
                parts.append(f"like {_and(elsewhere, 3)}")
            pr_only = all(
                t.event == "pull_request" and not (t.pushed_on_pr and o.pushed_on_pr) for t, os in entries for o in os
            )
            where = " (on pull requests, which these builds do not push)" if pr_only else ""
            yield Hit(
                path,
                line,
                f"This rule tags `{first.image}` as `{first.shown}` {' and '.join(parts)}{where}: the variants "
                "overwrite each other's image under one tag. Give each variant its own suffix.",
                severity=Severity.NOTICE if pr_only else None,
                # Every tag rule that gives an image's variants the same tags is one decision (no suffix per
                # variant), in one workflow or across the change's: one comment, listing the other rules.
                cause=f"variants of {first.image} under one tag",
            )


def _and(items: list[str], limit: int = 4) -> str:
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _meet(a: _Tag, b: _Tag) -> bool:
    if a.enable != b.enable:
        return False
    if a.event != b.event:
        return a.event == "any" or b.event == "any"
    if a.event in ("push-branch", "push-tag") and a.branches and b.branches:
        return any(_patterns_meet(x, y) for x in a.branches for y in b.branches)
    return True


def _patterns_meet(a: str, b: str) -> bool:
    """Whether two branch filters can name one branch (a literal matching the other, or equal globs)."""
    if a == b:
        return True
    a_glob, b_glob = any(c in a for c in "*?["), any(c in b for c in "*?[")
    if not a_glob:
        return fnmatch.fnmatchcase(a, b) if b_glob else False
    if not b_glob:
        return fnmatch.fnmatchcase(b, a)
    # two globs: they meet when one's literal start is a start of the other's
    pa, pb = re.split(r"[*?\[]", a, maxsplit=1)[0], re.split(r"[*?\[]", b, maxsplit=1)[0]
    return pa.startswith(pb) or pb.startswith(pa)


def _tags(wf: Workflow) -> Iterator[_Tag]:
    triggers = wf.triggers
    filters: dict[str, tuple[str, ...]] = {"branches": (), "tags": ()}
    for key in filters:
        filters[key] = tuple(n.value for e, n in trigger_filters(wf, key) if e == "push")
    for job in wf.jobs.values():
        builders = [s for s in job.steps if s.uses and s.uses.split("@")[0].strip().lower() in _BUILDERS]
        if not builders:
            continue
        pushes = [_scalar(s.with_.get("push"), "false") for s in builders]
        if all(p.strip().lower() == "false" for p in pushes) and not any(_outputs_push(s) for s in builders):
            continue
        pushed_on_pr = any(_pushes_on_pr(p) for p in pushes)
        # The metadata steps whose tags a pushing build takes (`tags: ${{ steps.meta.outputs.tags }}`, its JSON or
        # bake file): a build that pushes tags of its own (`${{ matrix.tags }}-${{ github.sha }}`) does not push
        # what the metadata step computes.
        taken = " ".join(
            n.value
            for b, push in zip(builders, pushes, strict=True)
            if push.strip().lower() != "false" or _outputs_push(b)
            for n in b.with_.values()
            if n.is_scalar
        )
        metas = [
            s
            for s in job.steps
            if is_metadata_action(s)
            and s.id
            and re.search(rf"steps\.{re.escape(s.id)}\.outputs\.(?:tags|json|bake-file)", taken)
        ]
        if not metas:
            continue
        combos = job.combinations() or []
        varying = [k for k in (combos[0] if combos else {}) if len({c.get(k) for c in combos}) > 1]
        for scope in legs(wf, job):
            leg = ", ".join(f"{k}={(scope.combo or {}).get(k)}" for k in varying[:1])
            for step in metas:
                yield from _step_tags(wf, job, step, scope, leg, triggers, filters, pushed_on_pr)


def _outputs_push(step: Step) -> bool:
    """The build's `outputs:` send the image to a registry (`type=registry`, `type=image,...,push=true`), or may
    (an expression): a `type=docker,dest=x.tar` or `type=local` output stays on the runner (a pull-request build
    that saves a tar for an artifact; rs-r75, judged false as a producer of its tag)."""
    node = step.with_.get("outputs")
    if node is None:
        return False
    text = node.value.lower() if node.is_scalar else ""
    kind = re.search(r"\btype=([^,\s]+)", text)
    if kind is None or "${{" in kind.group(1):
        return True  # not known: it may push
    return kind.group(1) == "registry" or (kind.group(1) == "image" and "push=true" in text)


def _scalar(node: Node | None, default: str) -> str:
    return node.value if node is not None and node.is_scalar else default


def _pushes_on_pr(push: str) -> bool:
    text = push.strip().lower()
    if text == "false":
        return False
    pushed_only = ("event_name == 'push'", "event_name != 'pull_request'", 'event_name == "push"')
    return not any(p in text for p in pushed_only)


def _resolve(text: str, scope: Scope, line: int) -> str | None:
    vals = substitute(text, scope.lookup, (scope.workflow.path, line))
    if len(vals) != 1 or WILD in vals[0].text:
        return None
    return vals[0].text


def _images(step: Step, scope: Scope) -> list[str]:
    node = step.with_.get("images")
    if node is None or not node.is_scalar:
        return []
    out: list[str] = []
    for line, text in node.text_lines():
        for part in text.split(","):
            item = part.strip()
            if not item or item.startswith("#"):
                continue
            if "=" in item:
                key, _, value = item.partition("=")
                if key.strip() != "name":
                    continue
                item = value.strip()
            resolved = _resolve(item, scope, line)
            if resolved is None:
                return []  # an image we cannot name: the step's tags are unknown
            out.append(_namespace(resolved))
    return list(dict.fromkeys(out))


def _namespace(image: str) -> str:
    """`quay.io/org/app` and `swr.example.com/org/app` -> `org/app` (the registry host dropped)."""
    parts = image.strip().lower().split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    return "/".join(parts)


def _flavor(step: Step, scope: Scope) -> dict[str, str]:
    node = step.with_.get("flavor")
    out: dict[str, str] = {}
    if node is None or not node.is_scalar:
        return out
    for line, text in node.text_lines():
        for part in text.split(","):
            key, eq, value = part.partition("=")
            if eq and key.strip() in ("prefix", "suffix"):
                resolved = _resolve(value.strip(), scope, line)
                out[key.strip()] = WILD if resolved is None else resolved
    return out


def _step_tags(
    wf: Workflow,
    job: Job,
    step: Step,
    scope: Scope,
    leg: str,
    triggers: set[str],
    filters: dict[str, tuple[str, ...]],
    pushed_on_pr: bool,
) -> Iterator[_Tag]:
    images = _images(step, scope)
    if not images:
        return
    flavor = _flavor(step, scope)
    for raw in tag_rules(step):
        rule = _leg_rule(raw, scope)
        if rule is None:
            continue
        got = _template(rule, flavor)
        if got is None:
            continue
        template, shown, event = got
        if event == "push-branch" and "push" not in triggers:
            continue
        if event == "push-tag" and "push" not in triggers:
            continue
        if event == "pull_request" and not triggers & {"pull_request", "pull_request_target"}:
            continue
        enable = rule.attrs.get("enable", "true")
        decided = _LITERAL_COMPARE.match(enable)
        if decided:
            equal = decided.group(1) == decided.group(3)
            enable = "true" if equal == (decided.group(2) == "==") else "false"
        if enable.strip().lower() == "false":
            continue
        if "${{" in enable and "matrix." in enable:
            continue  # depends on a leg value we did not resolve
        branches = filters["tags"] if event == "push-tag" else filters["branches"] if event == "push-branch" else ()
        for image in images:
            yield _Tag(
                wf.path,
                raw.line,
                job.id,
                leg,
                image,
                template,
                shown,
                event,
                branches,
                pushed_on_pr,
                "" if enable.strip().lower() == "true" else enable,
            )


def _leg_rule(rule: TagRule, scope: Scope) -> TagRule | None:
    """The rule with this leg's matrix (and env) values put in; None when something stays unknown."""
    if "${{" not in rule.text:
        return rule
    resolved = _resolve(rule.text, scope, rule.line)
    if resolved is None:
        # keep `enable=` expressions that are not about the leg, resolve the rest
        parts = rule.text.split(",")
        kept = []
        for part in parts:
            key = part.partition("=")[0].strip().lower()
            if key == "enable":
                kept.append(part)
                continue
            value = _resolve(part, scope, rule.line)
            if value is None:
                return None
            kept.append(value)
        resolved = ",".join(kept)
    return parse_line(resolved, rule.line)


def _template(rule: TagRule, flavor: dict[str, str]) -> tuple[str, str, str] | None:
    """The tag a rule yields with its variable part named (as a key and for a reader), and its event."""
    kind = rule.type
    attrs = rule.attrs
    prefix = attrs.get("prefix", flavor.get("prefix", ""))
    suffix = attrs.get("suffix", flavor.get("suffix", ""))
    if WILD in prefix + suffix:
        return None
    if kind == "ref":
        event = attrs.get("event", "")
        body = _KIND.get(("ref", event))
        if body is None:
            return None
        where = {"branch": "push-branch", "tag": "push-tag", "pr": "pull_request"}[event]
    elif kind in ("semver", "pep440", "match"):
        pattern = attrs.get("pattern")
        if not pattern:
            return None
        body = "{" + kind + ":" + pattern + (":" + attrs["value"] if "value" in attrs else "") + "}"
        where = "push-tag" if "value" not in attrs else "any"
    elif kind == "raw":
        value = attrs.get("value")
        if not value:
            return None
        body, where = value, "any"
    elif kind == "sha":
        if "prefix" not in attrs:
            prefix = "sha-" if "prefix" not in flavor else prefix
        body, where = "{sha:" + attrs.get("format", "short") + "}", "any"
    elif kind == "edge":
        body, where = "edge", "push-branch"
    elif kind == "schedule":
        body, where = attrs.get("pattern", "nightly"), "schedule"
    else:
        return None
    readable = {
        "{branch}": "<branch>",
        "{git tag}": "<git tag>",
        "pr-{number}": "pr-<number>",
    }.get(body, attrs.get("pattern", body) if kind in ("semver", "pep440", "match") else body)
    if kind == "sha":
        readable = "<short sha>" if attrs.get("format", "short") == "short" else "<sha>"
    return prefix + body + suffix, prefix + readable + suffix, where


def _shown_of(
    items: list[tuple[CallLeg, set[tuple[str, str]], list[str]]], leg: CallLeg, common: set[tuple[str, str]]
) -> list[str]:
    """How the shared tags read (`<pep440 raw>`, `main`)."""
    del common
    for other, _keys, shown in items:
        if other == leg:
            return shown
    return []
