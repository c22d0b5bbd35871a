"""NPU213: a docker/metadata-action `tags:` rule the action refuses, ignores in part, or reads otherwise."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.metadata_action import (
    COMMON_ATTRS,
    PRERELEASE_PATTERN_TYPES,
    REF_EVENTS,
    SHA_FORMATS,
    TYPE_ATTRS,
    TYPES,
    TagRule,
    is_metadata_action,
    literal_outside_templates,
    tag_rules,
)
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.rule import Hit, Rule


class MetadataActionTagRuleInvalid(Rule):
    """A `docker/metadata-action` tag rule is invalid: the step fails, or the image gets other tags than meant.

    Why: the image tags of a release come from these rules, and mistakes in them show only when the workflow
    runs (often a release or a nightly build). The action refuses a rule whose `type` is not one of
    `schedule`, `semver`, `pep440`, `match`, `edge`, `ref`, `raw`, `sha`, a `type=ref` without
    `event=branch|tag|pr`, a `type=raw` without `value=`, a `semver`/`pep440`/`match` without `pattern=`, an
    `enable=` that is not `true`/`false`: the step fails and nothing is pushed (errors). It silently ignores
    attributes the type does not read (`event=` on a `type=raw` rule: the rule then applies to every event),
    and for a pre-release it drops a `semver`/`pep440` pattern other than `{{raw}}`, so literal text written in
    the pattern vanishes from those tags (warnings; a literal before the template is a notice). vllm-ascend
    shipped each of these: `type=ref,event=workflow_dispatch`, `type=raw` without `value=`, `event=` on a raw
    rule, `type=branch`, and `type=pep440,pattern={{raw}}-openeuler`, which pushed the openEuler release
    candidate under the Ubuntu image's tag.

    Bad:
        tags: |
          type=branch,suffix=-a3
          type=ref,event=workflow_dispatch
          type=raw,event=workflow_dispatch,suffix=-a3
          type=pep440,pattern={{raw}}-openeuler

    Good:
        tags: |
          type=ref,event=branch,suffix=-a3
          type=raw,value=${{ inputs.tag }},enable=${{ github.event_name == 'workflow_dispatch' }},suffix=-a3
          type=pep440,pattern={{raw}},suffix=-openeuler

    Fix: use `type=ref,event=branch` (or `tag`, `pr`) for ref names, give `type=raw` a `value=`, limit a rule
    to an event with `enable=${{ github.event_name == '…' }}`, and put fixed text in `prefix=`/`suffix=`.

    Not reported: a line, key or value that is a `${{ }}` expression (unknown until the run) or an
    `enable=` that is a template (`{{is_default_branch}}`), a `tags:`
    input that is itself an expression, `#` comment lines, the regex of a `type=match` pattern, and
    docker/metadata-action v1 (which had no `type=` rules).
    """

    id = "NPU213"
    name = "metadata-action-tag-rule-invalid"
    severity = Severity.ERROR
    title = "docker/metadata-action tag rule is invalid"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})

    needles = ("metadata-action",)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not is_metadata_action(step):
            return
        for rule in tag_rules(step):
            for message, severity in _problems(rule):
                yield Hit(src.path, rule.line, message, severity=severity)


def _problems(rule: TagRule) -> Iterator[tuple[str, Severity | None]]:
    shown = f"`{rule.text}`"
    kind = rule.type
    if kind not in TYPES:
        if rule.is_expression("type"):
            return
        hint = f" Use `type=ref,event={kind}` for the {kind} name." if kind in REF_EVENTS else ""
        yield (
            f"{shown}: `type={kind}` is not a metadata-action tag type (schedule, semver, pep440, match, edge, "
            f"ref, raw, sha), so the step fails with `Unknown tag type attribute: {kind}` and no image is "
            f"tagged.{hint}",
            None,
        )
        return
    if kind == "ref":
        event = rule.attrs.get("event")
        if event is None:
            yield f"{shown}: `type=ref` needs `event=branch`, `event=tag` or `event=pr`; the step fails.", None
        elif event not in REF_EVENTS and not rule.is_expression("event"):
            yield (
                f"{shown}: `event={event}` is not a ref event (branch, tag, pr), so the step fails with "
                "`Invalid event`. To tag only on some event, use `type=raw,value=…` with "
                f"`enable=${{{{ github.event_name == '{event}' }}}}`.",
                None,
            )
    if kind == "raw" and not rule.has("value"):
        yield f"{shown}: `type=raw` needs `value=`, so the step fails with `Missing value attribute`.", None
    if kind in ("semver", "pep440", "match") and not rule.has("pattern"):
        yield f"{shown}: `type={kind}` needs `pattern=`, so the step fails with `Missing pattern attribute`.", None
    fmt = rule.attrs.get("format")
    if kind == "sha" and fmt is not None and not rule.is_expression("format") and fmt not in SHA_FORMATS:
        yield f"{shown}: `format=` must be `short` or `long`; the step fails with `Invalid format`.", None
    group = rule.attrs.get("group")
    if kind == "match" and group is not None and not rule.is_expression("group") and not group.isdigit():
        yield f"{shown}: `group=` must be a number; the step fails with `Invalid match group`.", None
    enable = rule.attrs.get("enable")
    templated = enable is not None and (rule.is_expression("enable") or "{{" in enable)
    if enable is not None and not templated and enable not in ("true", "false"):
        yield f"{shown}: `enable=` must be `true` or `false` (or an expression giving one); the step fails.", None
    for key in dict.fromkeys(rule.keys):
        if key in COMMON_ATTRS or key in TYPE_ATTRS[kind]:
            continue
        if key == "value":  # a field without `=`: the action takes it as the value, which this type ignores
            continue
        if key == "event":
            yield (
                f"{shown}: `event=` is read only by `type=ref`; metadata-action ignores it here, so this rule "
                "applies on every event. To limit it to one, use `enable=${{ github.event_name == '…' }}`.",
                Severity.WARNING,
            )
            continue
        yield (
            f"{shown}: `{key}=` is not an attribute of `type={kind}`; metadata-action ignores it.",
            Severity.WARNING,
        )
    pattern = rule.attrs.get("pattern")
    if kind in PRERELEASE_PATTERN_TYPES and pattern and not rule.is_expression("pattern"):
        before, after = literal_outside_templates(pattern)
        if any(c.isalnum() for c in after):
            yield (
                f"{shown}: the text `{after}` after the template is lost on pre-release versions (for them "
                f"metadata-action drops a {kind} pattern other than `{{{{raw}}}}`), so a release candidate is "
                f"pushed without it, under the tag of another variant. Move it to `suffix={after}`.",
                Severity.WARNING,
            )
        if any(c.isalnum() for c in before):
            yield (
                f"{shown}: the text `{before}` before the template is lost on pre-release versions (metadata-"
                f"action drops a {kind} pattern other than `{{{{raw}}}}` for them). Move it to `prefix={before}` "
                "if every tag must carry it.",
                Severity.NOTICE,
            )
