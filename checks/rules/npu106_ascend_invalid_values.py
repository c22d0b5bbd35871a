"""NPU106: launch values that are invalid or harmful on Ascend NPU (a preventive pack of ten cases)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.additional_config import read_keys, same_value
from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.launch import schema_for
from npu_review.checks.analysis.scripts import SOURCERS, caller_exports, resolve_script
from npu_review.checks.analysis.vllm_launches import Launch, vllm_launches
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.facts.schema import AscendValueDocs
from npu_review.checks.kinds import DOCS, HYDRA_CONFIG, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.messages import short_key
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import (
    UNKNOWN,
    Assignment,
    Effective,
    Invocation,
    Override,
    ShellScript,
    Value,
    View,
    as_bool,
    as_int,
    hydra_str,
)
from npu_review.checks.parsers.vllm_cli import normalise, resolve
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.hydra_config import Schema

_MAX_HOPS = 6


class AscendInvalidValues(Rule):
    """An NPU launch sets a value that is invalid, or known to break or slow runs, on Ascend.

    Why: each case below is documented as unsupported in docs/ascend_tutorial or has broken Ascend runs
    in verl's history (#5473 renamed the HCCL engine's key). They are cheap to spot in review and expensive
    on a cluster.

    Cases (severity):
      (a) `checkpoint_engine.backend=hccl` (error): the HCCL engine registers as `nccl` since #5473; `hccl`
          is no registry key. Valid where the repository's own registry still registers `hccl`.
      (b) `rollout.name=sglang` without `engine_kwargs.sglang.attention_backend=ascend` (error).
      (c) `CUDA_VISIBLE_DEVICES` exported in an NPU-only script or NPU branch, or `ASCEND_RT_VISIBLE_DEVICES`
          set without `RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES`, so Ray overwrites it (warning). In an
          NPU-only script whose command the rule does not read (a CI launcher's `eval $CI_COMMAND`), the first
          is reported when the script sets no `ASCEND_RT_VISIBLE_DEVICES`: it is then the only device selection.
          An export of the variable's own value with an empty default (`export CUDA_VISIBLE_DEVICES="${
          CUDA_VISIBLE_DEVICES:-}"`) selects nothing and is left alone.
          `CUDA_DEVICE_MAX_CONNECTIONS=1` is another variable and is fine.
      (d) `trainer.device=cuda` (error).
      (e) a virtual pipeline size (VPP) > 1 while `use_mbridge` is not False (error): not supported together.
      (f) only one of `megatron.context_parallel_size` and `megatron.override_transformer_config.
          context_parallel_size` set to > 1 (error) when the command does not use Megatron-Bridge (which passes
          the size to the model itself): MindSpeed needs both.
      (g) `override_transformer_config.use_flash_attn=False` in a Megatron NPU script (warning).
      (h) `use_torch_compile=True` (notice): the NPU scripts keep torch.compile off, a habit, not a documented
          breakage.
          (g) and (h) are habits: a warning on the line the change writes, a notice for a value the project
          already lives with (an audit, or a change elsewhere in the script).
      (i) a vLLM engine option with a closed set of values (facts `vllm_engine_values`) given another value
          (error): `distributed_executor_backend="tp"` in `LLM(...)`, `--distributed-executor-backend tp` of
          `vllm serve`. vLLM takes `mp`, `ray`, `uni`, `external_launcher` or the import path of an Executor
          class; any other word fails when the engine starts.
      (j) a key of `--additional-config` (`additional_config={...}`) given at its top level while vLLM-Ascend
          reads it only inside a sub-config (warning): `{"fuse_muls_add": false}` for
          `{"ascend_compilation_config": {"fuse_muls_add": false}}`. The setting does nothing. A value that is
          the key's own default where it is read (`{"fuse_muls_add": true}`) leaves the server as asked, so it
          is a notice that says to drop it. Where the
          repository has vLLM-Ascend's own reader (`vllm_ascend/ascend_config.py`), what that file reads at the
          reviewed revision decides; elsewhere the facts `ascend_additional_config` (keys vLLM-Ascend read only
          nested in every revision). A key also read at the top level is never reported.
          (i) and (j) look at every vLLM engine started on Ascend (checks/analysis/vllm_launches.py): shell
          scripts, the shell and Python code blocks of Ascend docs, YAML `server_cmd:` configs, Python files.

    Bad:
        actor_rollout_ref.rollout.checkpoint_engine.backend=hccl
        actor_rollout_ref.rollout.name=sglang          # and no attention_backend
        trainer.device=cuda

    Good:
        actor_rollout_ref.rollout.checkpoint_engine.backend=nccl
        actor_rollout_ref.rollout.name=sglang
        +actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=ascend
        trainer.device=npu

    Fix: use the value the message names (suggested where exact: `nccl`, `npu`, `False`, `True`). Values
    that cannot be resolved (`vpp=${ACTOR_VPP}` defaulting to `null`, an unset variable) are never reported,
    nor are GPU branches (or GPU docs) of dual-device scripts, nor values a dual-device script takes from a shared
    `${VAR:-default}` that its Ascend callers override (`COMMON_VPP=NULL bash run_ppo_trainer_megatron.sh`).
    """

    id = "NPU106"
    name = "ascend-invalid-values"
    severity = Severity.ERROR
    title = "A launch-script value that is invalid or harmful on Ascend NPU"
    # Shell for the launch scripts; docs, YAML test configs and Python for the vLLM engines they start ((i), (j)).
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, PYTHON})
    # The generated config (defaults of use_mbridge & co.), the checkpoint-engine registry (Python), scripts
    # that source or run this one.
    context_kinds = frozenset({HYDRA_CONFIG, SHELL, NPU_SCRIPT})
    # ... read for a changed script only: a doc, YAML config or Python file needs none of them ((i), (j)).
    context_triggers = frozenset({SHELL, NPU_SCRIPT})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return (*facts.ascend_values.checkpoint_engine_registry_files, *facts.ascend_additional_config.registry_files)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        yield from _engine_values(ctx, src)
        if SHELL not in src.kinds and NPU_SCRIPT not in src.kinds:
            return
        script = ctx.shell(src)
        view = npu_reading(ctx, src)
        if view is None:
            return
        facts = _Facts.of(ctx)
        seen: set[tuple[int, str]] = set()
        hits: list[tuple[str, Hit]] = []
        for inv in view.invocations:
            schema = schema_for(ctx, inv)
            res = _Resolver(inv, schema, facts)
            hits += [("a", h) for h in _checkpoint_backend(ctx, src, inv, facts)]
            hits += [("b", h) for h in _sglang_attention(src, inv, facts)]
            hits += [("d", h) for h in _device(src, inv, facts)]
            hits += [("e", h) for h in _vpp_with_mbridge(src, inv, res, facts)]
            hits += [("f", h) for h in _context_parallel(src, inv, res, facts)]
            # (g) and (h) are habits, not breakage: a warning when the change writes the value, a notice for one
            # the project lives with (an audit, a change elsewhere; a shared GPU/NPU array keeps its defaults)
            hits += [("g", h.unless_introduced(ctx)) for h in _flash_attn(src, inv, facts)]
            hits += [("h", h.unless_introduced(ctx)) for h in _torch_compile(src, inv, facts)]
        if view.invocations or (
            # An NPU-only script whose command is not one the rule reads (a CI launcher's `eval $CI_COMMAND`):
            # CUDA_VISIBLE_DEVICES is still its only device selection when it sets no ASCEND_RT_VISIBLE_DEVICES.
            NPU_SCRIPT in src.kinds and not any(a.name == facts.ascend_env for a in view.assignments)
        ):
            hits += [("c", h) for h in _visible_devices(ctx, src, script, view, facts)]
        for case, hit in hits:
            if (hit.line, case) in seen:
                continue
            seen.add((hit.line, case))
            yield hit


@dataclass(frozen=True)
class _Facts:
    ckpt_suffix: str
    ckpt_invalid: dict[str, str]
    registry_files: tuple[str, ...]
    registry_pattern: str
    name_key: str
    attn_key: str
    attn_value: str
    cuda_env: str
    ascend_env: str
    noset_env: str
    device_key: str
    device_invalid: dict[str, str]
    vpp_key: str
    mbridge_key: str
    cp_key: str
    cp_transformer_key: str
    inherits: dict[str, str]
    mbridge_default: str | None
    flash_key: str
    compile_key: str
    docs: AscendValueDocs  # where the project documents each case
    message_prefix: str  # left out of the keys messages show
    ckpt_since: str  # " (since #5473)": when the registry key changed, in the project's own history

    def short(self, key: str) -> str:
        return short_key(key, self.message_prefix)

    @classmethod
    def of(cls, ctx: Context) -> _Facts:
        def build() -> _Facts:
            f = ctx.facts.ascend_values
            default = f.use_mbridge_default
            return cls(
                f.checkpoint_engine_suffix,
                {k.lower(): v for k, v in f.checkpoint_engine_invalid.items()},
                f.checkpoint_engine_registry_files,
                f.checkpoint_engine_registry_pattern,
                f.rollout_name_key,
                f.sglang_attention_key,
                f.sglang_attention_value,
                f.cuda_visible_env,
                f.ascend_visible_env,
                f.ray_noset_env,
                f.device_key,
                {k.lower(): v for k, v in f.device_invalid.items()},
                f.vpp_key,
                f.mbridge_key,
                f.cp_key,
                f.cp_transformer_key,
                dict(f.megatron_inherits),
                None if default is None else str(default),
                f.flash_attn_key,
                f.torch_compile_key,
                f.docs,
                f.message_prefix,
                f" (since {f.checkpoint_engine_since})" if f.checkpoint_engine_since else "",
            )

        return ctx.memo(("npu106-facts", "head", ""), build)


# -- shared helpers ---------------------------------------------------------------------------------------------


def _keys(inv: Invocation, suffix: str) -> list[str]:
    """Distinct keys the command overrides that are `suffix` or end with `.suffix`, in order."""
    dotted = "." + suffix
    return list(dict.fromkeys(o.key for o in inv.overrides if o.key == suffix or o.key.endswith(dotted)))


def _decided(eff: Effective) -> str | None:
    """The effective value as Hydra reads it, when the command surely sets it; else None."""
    if eff.present is not True or eff.override is None:
        return None
    value = hydra_str(eff.value)
    return value if isinstance(value, str) else None


def _with_value(src: SourceFile, o: Override, new: str) -> str | None:
    """The override's line with its literal value replaced by `new` (quotes kept), when that is exact."""
    if o.raw is None or "$" in o.raw or "`" in o.raw:
        return None
    line = src.line(o.line)
    if line.count(o.text) != 1:
        return None
    raw = o.raw
    quote = raw[0] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else ""
    head = o.text[: len(o.text) - len(raw)]
    if not o.text.endswith(raw):
        return None
    return line.replace(o.text, f"{head}{quote}{new}{quote}", 1)


_DEFAULT_FORM = lazyre.compile(r"\$\{[A-Za-z_]\w*:?-")


def _caller_default(src: SourceFile, o: Override | None) -> bool:
    """In a dual-device script, a value that comes from a `${VAR:-default}` is the shared (GPU-tuned) default
    that NPU callers override (`COMMON_VPP=NULL bash run_x.sh` in the Ascend workflows): not a choice made for
    NPU. Only NPU-only scripts and NPU branches are held to their defaults."""
    if o is None or NPU_SCRIPT in src.kinds or "$" not in (o.raw or ""):
        return False
    return any(_DEFAULT_FORM.search(src.line(n)) for n in o.lines)


# -- (a) checkpoint-engine backend ------------------------------------------------------------------------------


def _registry(ctx: Context, facts: _Facts) -> set[str] | None:
    """The backends the repository's checkpoint-engine registry registers; None when no registry file is read."""

    def build() -> set[str] | None:
        rx = re.compile(facts.registry_pattern)
        names: set[str] = set()
        read = False
        for path in ctx.head_paths():
            if not globs.match_any(path, facts.registry_files):
                continue
            src = ctx.source(path)
            if src is None:
                continue
            read = True
            names.update(m.group(1).lower() for m in rx.finditer(src.text))
        return names if read and names else None

    return ctx.memo(("npu106-registry", "head", ""), build)


def _checkpoint_backend(ctx: Context, src: SourceFile, inv: Invocation, facts: _Facts) -> Iterator[Hit]:
    for key in _keys(inv, facts.ckpt_suffix):
        eff = inv.effective(key)
        value = _decided(eff)
        if value is None or value.lower() not in facts.ckpt_invalid or _caller_default(src, eff.override):
            continue
        registry = _registry(ctx, facts)
        if registry is not None and value.lower() in registry:
            continue  # this revision still registers it (before #5473)
        fix = facts.ckpt_invalid[value.lower()]
        assert eff.override is not None
        known = f" (the repository registers: {', '.join(sorted(registry))})" if registry else ""
        yield Hit(
            src.path,
            eff.override.line,
            f"`{facts.short(key)}={value}` is not a checkpoint-engine backend{known}: on Ascend the HCCL engine "
            f"registers as `{fix}`{facts.ckpt_since}, so the run fails when the engine is built. Use `{fix}`.",
            suggestion=_with_value(src, eff.override, fix),
        )


# -- (b) SGLang attention backend -------------------------------------------------------------------------------


def _sglang_attention(src: SourceFile, inv: Invocation, facts: _Facts) -> Iterator[Hit]:
    name = inv.effective(facts.name_key)
    value = _decided(name)
    if value is None or value.lower() != "sglang" or _caller_default(src, name.override):
        return
    attn = inv.effective(facts.attn_key)
    if attn.present is None or attn.value is UNKNOWN:
        return
    got = hydra_str(attn.value)
    if isinstance(got, str) and got.lower() == facts.attn_value.lower():
        return
    assert name.override is not None
    if attn.override is not None and attn.present:
        yield Hit(
            src.path,
            attn.override.line,
            f"The SGLang rollout on Ascend needs `{facts.attn_key}={facts.attn_value}`, not `{got}` (rollout "
            f"name set on line {name.override.line}).",
            suggestion=_with_value(src, attn.override, facts.attn_value),
        )
        return
    yield Hit(
        src.path,
        name.override.line,
        f"`{facts.short(facts.name_key)}=sglang` on NPU needs `+{facts.attn_key}={facts.attn_value}`: without it "
        f"SGLang picks a CUDA attention backend and the rollout fails to start on Ascend "
        f"({facts.docs.sglang_attention}). Add the override to this command.",
    )


# -- (d) trainer.device --------------------------------------------------------------------------------------------


def _device(src: SourceFile, inv: Invocation, facts: _Facts) -> Iterator[Hit]:
    eff = inv.effective(facts.device_key)
    value = _decided(eff)
    if value is None or value.lower() not in facts.device_invalid or _caller_default(src, eff.override):
        return
    fix = facts.device_invalid[value.lower()]
    assert eff.override is not None
    yield Hit(
        src.path,
        eff.override.line,
        f"`{facts.device_key}={value}` in a script that runs on Ascend NPU: the workers would look for CUDA "
        f"devices. Use `{facts.device_key}={fix}` (or leave it out: the trainer detects NPU when torch_npu "
        "is installed).",
        suggestion=_with_value(src, eff.override, fix),
    )


# -- config resolution for (e) and (f) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Resolved:
    value: Value | None  # None: nothing sets it (or null); UNKNOWN: cannot tell
    override: Override | None  # the override that decided it, when one did
    line: int = 0  # the config line of the default, when the default decided it


class _Resolver:
    """A key's value for one command: its override, else the config default (oc.select followed through the
    command's own overrides), else the role it inherits from."""

    def __init__(self, inv: Invocation, schema: Schema | None, facts: _Facts) -> None:
        self.inv = inv
        self.schema = schema
        self.facts = facts

    def get(self, key: str, hops: int = 0) -> _Resolved:
        if hops > _MAX_HOPS:
            return _Resolved(UNKNOWN, None)
        eff = self.inv.effective(key)
        if eff.present is None or eff.value is UNKNOWN:
            return _Resolved(UNKNOWN, eff.override)
        if eff.present:
            return _Resolved(eff.value, eff.override)
        if self.schema is not None:
            target = self.schema.redirect(key)
            if target is not None:
                ref, fallback = target
                found = self.get(ref, hops + 1)
                if found.value is None and fallback is not None:
                    return _Resolved(fallback.value, None, fallback.line)
                return found
            status, node = self.schema.node(key)
            if status == "exists" and node is not None and node.is_scalar:
                default = self.schema.default(key)
                return _Resolved(None if default is None else default.value, None, node.line)
            if status == "missing":
                return _Resolved(None, None)
        for child, parent in self.facts.inherits.items():
            if key.startswith(child + "."):
                return self.get(parent + key[len(child) :], hops + 1)
        if self.schema is None:
            return _Resolved(UNKNOWN, None)
        return _Resolved(None, None)


def _prefixes(inv: Invocation, *suffixes: str) -> list[str]:
    """`<role>.megatron` prefixes of the keys the command overrides that end with one of `suffixes`."""
    out: list[str] = []
    for suffix in suffixes:
        for key in _keys(inv, suffix):
            prefix = key[: -len(suffix) - 1]
            if prefix.endswith("megatron") and prefix not in out:
                out.append(prefix)
    return out


# -- (e) VPP with mbridge -------------------------------------------------------------------------------------------


def _vpp_with_mbridge(src: SourceFile, inv: Invocation, res: _Resolver, facts: _Facts) -> Iterator[Hit]:
    for prefix in _prefixes(inv, facts.vpp_key):
        vpp_key = f"{prefix}.{facts.vpp_key}"
        eff = inv.effective(vpp_key)
        size = as_int(_decided(eff))
        if size is None or size <= 1 or _caller_default(src, eff.override):
            continue  # null, 1, unresolved (`${ACTOR_VPP}` defaulting to null), conditional, a shared default
        mb = res.get(f"{prefix}.{facts.mbridge_key}")
        if mb.override is None and res.schema is None:  # no config to read the default from
            mb = _Resolved(UNKNOWN if facts.mbridge_default is None else facts.mbridge_default, None)
        if mb.value is UNKNOWN or as_bool(mb.value) is not True:
            continue
        assert eff.override is not None
        where = (
            f"`{facts.short(mb.override.key)}={hydra_str(mb.override.value)}` on line {mb.override.line}"
            if mb.override is not None
            else f"the config's default, {res.schema.path} line {mb.line}"
            if res.schema is not None
            else "the config's default"
        )
        yield Hit(
            src.path,
            eff.override.line,
            f"Virtual pipeline parallel (`{facts.short(vpp_key)}={size}`) with `use_mbridge` on ({where}): mbridge and "
            f"VPP cannot be used together on Ascend ({facts.docs.vpp_mbridge}). Set `{facts.short(prefix)}."
            f"{facts.mbridge_key}=False` when using VPP, or drop VPP.",
        )


# -- (f) context parallel needs both keys ----------------------------------------------------------------------------


def _context_parallel(src: SourceFile, inv: Invocation, res: _Resolver, facts: _Facts) -> Iterator[Hit]:
    for prefix in _prefixes(inv, facts.cp_key, facts.cp_transformer_key):
        main_key = f"{prefix}.{facts.cp_key}"
        otc_key = f"{prefix}.{facts.cp_transformer_key}"
        main, otc = res.get(main_key), res.get(otc_key)
        if main.value is UNKNOWN or otc.value is UNKNOWN:
            continue
        for have_key, have, miss_key, miss in ((main_key, main, otc_key, otc), (otc_key, otc, main_key, main)):
            if have.override is None or have.override.key != have_key:
                continue  # reported where the command itself sets it
            size = as_int(hydra_str(have.value))
            if size is None or size <= 1 or miss.override is not None or _caller_default(src, have.override):
                continue
            if as_int(hydra_str(miss.value)) not in (None, 1):
                continue
            if _uses_megatron_bridge(res, prefix, facts) is not False:
                continue  # Megatron-Bridge passes the size to the model itself; unknown: stay silent
            yield Hit(
                src.path,
                have.override.line,
                f"Context parallel on NPU needs both `{facts.short(main_key)}` and `{facts.short(otc_key)}`; this "
                f"command sets only `{facts.short(have_key)}={size}` ({facts.docs.context_parallel}: MindSpeed reads "
                f"the transformer config). Add `{'+' if miss_key == otc_key else ''}{facts.short(miss_key)}={size}`.",
            )


def _uses_megatron_bridge(res: _Resolver, prefix: str, facts: _Facts) -> bool | None:
    """True for Megatron-Bridge (use_mbridge on, vanilla_mbridge off), False for the other paths, None unknown."""
    use = res.get(f"{prefix}.{facts.mbridge_key}")
    vanilla = res.get(f"{prefix}.vanilla_mbridge")
    use_b = as_bool(use.value) if use.value is not UNKNOWN else None
    van_b = as_bool(vanilla.value) if vanilla.value is not UNKNOWN else None
    if use_b is False or van_b is True:
        return False
    if use_b is True and van_b is False:
        return True
    return None


# -- (g) use_flash_attn, (h) use_torch_compile ---------------------------------------------------------------------


def _flash_attn(src: SourceFile, inv: Invocation, facts: _Facts) -> Iterator[Hit]:
    for key in _keys(inv, facts.flash_key):
        eff = inv.effective(key)
        if as_bool(_decided(eff)) is not False or _caller_default(src, eff.override):
            continue
        assert eff.override is not None
        yield Hit(
            src.path,
            eff.override.line,
            f"`{facts.short(key)}=False` in a Megatron NPU script: on Ascend, Megatron needs flash attention on "
            f"({facts.docs.flash_attn}) for the actor and the reference model. Set it to True.",
            suggestion=_with_value(src, eff.override, "True"),
            severity=Severity.WARNING,
        )


def _torch_compile(src: SourceFile, inv: Invocation, facts: _Facts) -> Iterator[Hit]:
    for key in _keys(inv, facts.compile_key):
        eff = inv.effective(key)
        if as_bool(_decided(eff)) is not True or _caller_default(src, eff.override):
            continue
        assert eff.override is not None
        yield Hit(
            src.path,
            eff.override.line,
            f"`{facts.short(key)}=True` in a script that runs on Ascend NPU, where the project's NPU scripts keep "
            "torch.compile off: set it to False unless this one compiles on purpose.",
            suggestion=_with_value(src, eff.override, "False"),
            # A habit of the NPU scripts (the facts' source), not a documented NPU breakage (True is the config
            # default, and blind judging called it noise each time): a notice.
            severity=Severity.NOTICE,
        )


# -- (c) visible devices ---------------------------------------------------------------------------------------------


def _visible_devices(ctx: Context, src: SourceFile, script: ShellScript, view: View, facts: _Facts) -> Iterator[Hit]:
    npu_only = NPU_SCRIPT in src.kinds
    for a in view.assignments:
        if a.name != facts.cuda_env or not _sets(a) or _passes_own_value(a):
            continue
        if not (npu_only or a.device == "npu"):
            continue
        yield Hit(
            src.path,
            a.line,
            f"`{facts.cuda_env}` is exported in a script that runs on Ascend NPU: NPUs are selected with "
            f"`{facts.ascend_env}` (and `{facts.noset_env}=1` so that Ray keeps it); {facts.cuda_env} does "
            "nothing there and hides which NPUs the job uses.",
            severity=Severity.WARNING,
        )
    ascend = [a for a in view.assignments if a.name == facts.ascend_env and _sets(a)]
    if not ascend or not _runs_ray(view, ctx.facts.launch.rollout_root):
        return
    if _defines(ctx, src.path, script, facts.noset_env) or facts.noset_env in caller_exports(ctx).get(src.path, ()):
        return
    for a in ascend:
        if _whole_node(a.raw or ""):
            continue  # every NPU of an 8- or 16-NPU node: whatever Ray hands out, it is one of these
        yield Hit(
            src.path,
            a.line,
            f"`{facts.ascend_env}` is set but `{facts.noset_env}` is not: Ray then overwrites "
            f"{facts.ascend_env} for each worker and the job may land on other NPUs ({facts.docs.visible_devices}). "
            f"Add `export {facts.noset_env}=1`.",
            severity=Severity.WARNING,
        )


def _whole_node(raw: str) -> bool:
    """`0,1,2,3,4,5,6,7` (or 0-15): every NPU of a whole Atlas node, so no other NPU is left to land on."""
    ids = [p.strip() for p in raw.strip().strip("\"'").split(",")]
    return ids in ([str(i) for i in range(8)], [str(i) for i in range(16)])


def _sets(a: Assignment) -> bool:
    """An export (or a prefix `X=... cmd`) with a non-empty value."""
    if not (a.exported or a.kind in ("export", "prefix")):
        return False
    raw = (a.raw or "").strip()
    return raw not in ("", '""', "''")


def _passes_own_value(a: Assignment) -> bool:
    """The value is the variable's own, passed on (`export X="${X:-}"`, `X=$X`): a default of nothing, which
    selects no device (rwkv-rs/rwkv7-ascend-npu keeps CUDA hidden so; sweep-r31, judged noise)."""
    name = re.escape(a.name)
    return re.fullmatch(rf"([\"']?)\$(?:{name}|\{{{name}(?::?-)?\}})\1", (a.raw or "").strip()) is not None


def _runs_ray(view: View, trainer_root: str) -> bool:
    """The script starts the project's Ray trainer or a Ray node: a command configured under the trainer's root
    (`actor_rollout_ref.` overrides; not a torchrun job such as SFT) or that names Ray (`ray_init.` or
    `ray_kwargs.` overrides, a module of that name), or a `ray` command. Overrides of another framework
    (`--cfg-options runner.max_epochs=24`, mmdet's) or a launcher that hands its arguments on (`bash
    dist_train.sh config 8`) say nothing of Ray."""
    for inv in view.invocations:
        if inv.launcher.rsplit("/", 1)[-1] in ("torchrun", "deepspeed", "accelerate"):
            continue
        module = inv.module or ""
        if "sft_trainer" in module and "ray" not in module:
            continue
        if "ray" in module or any(
            o.key.startswith(trainer_root) or "ray" in o.key.split(".")[0] for o in inv.overrides
        ):
            return True
    return any(c.program == "ray" for c in view.calls)


def _defines(ctx: Context, path: str, script: ShellScript, name: str, depth: int = 0) -> bool:
    """The script, or a repository script it sources, assigns `name` anywhere."""
    if any(a.name == name for a in script.assignments):
        return True
    if depth >= 3:
        return False
    for call in script.view(False, ctx.facts.launchers).calls:
        if call.program not in SOURCERS:
            continue
        target = resolve_script(ctx, path, call.argument)
        other = ctx.source(target) if target else None
        if other is not None and _defines(ctx, other.path, ctx.shell(other), name, depth + 1):
            return True
    return False


# -- (i) vLLM engine options with a closed set of values, (j) additional-config keys read only in a sub-config ------


def _engine_values(ctx: Context, src: SourceFile) -> Iterator[Hit]:
    launches = vllm_launches(ctx, src)
    if not launches:
        return
    seen: set[tuple[int, str]] = set()
    for launch in launches:
        for hit in (*_closed_values(ctx, src, launch), *_misplaced_keys(ctx, src, launch)):
            if (hit.line, hit.message) not in seen:
                seen.add((hit.line, hit.message))
                yield hit


def _closed_values(ctx: Context, src: SourceFile, launch: Launch) -> Iterator[Hit]:
    facts = ctx.facts.vllm_engine_values
    for a in launch.args:
        name, key = normalise(a.flag)
        if name not in facts.closed:
            continue
        valid = facts.closed[name]
        if key is not None or not a.known or a.value is None or a.via_variable or "$" in a.value:
            continue
        value: object = a.value.strip()
        if launch.where == "python":  # a keyword's literal, written as JSON
            try:
                value = json.loads(a.value)
            except ValueError:
                continue
        if not isinstance(value, str) or not value or value in valid:
            continue
        if name in facts.import_path and "." in value:
            continue  # the import path of a class of the user's own
        listed = ", ".join(f"`{v}`" for v in valid)
        path = " (or the import path of an Executor class)" if name in facts.import_path else ""
        written = f'`{name[2:].replace("-", "_")}="{value}"`' if launch.where == "python" else f"`{name} {value}`"
        yield Hit(
            src.path,
            a.value_line,
            f"{written} is not a value vLLM accepts: it takes one of {listed}{path}, so the engine fails to "
            "start with a ValueError before the model is loaded onto the NPUs. Use one of those values.",
        )


def _misplaced_keys(ctx: Context, src: SourceFile, launch: Launch) -> Iterator[Hit]:
    cli = ctx.facts.vllm_cli
    config_name = next((c for o, c in cli.json_options.items() if o == "--additional-config"), None)
    if config_name is None:
        return
    settings = resolve(launch.args, cli).configs.get(config_name)
    if not settings:
        return
    nested, where, defaults = _nested_only(ctx)
    by_line: dict[tuple[int, tuple[str, ...]], list[str]] = {}
    for key, setting in settings.items():
        subs = nested.get(key)
        if subs:
            line = _key_line(src, setting.line, key) if launch.where == "python" else setting.line
            by_line.setdefault((line, subs), []).append(key)
    for (line, subs), keys in sorted(by_line.items()):
        names = " and ".join(f"`{k}`" for k in keys)
        inside = " or ".join(f"`{s}`" for s in subs)
        moved = {subs[0]: {k: settings[k].value for k in keys}}
        example = str(moved) if launch.where == "python" else json.dumps(moved)
        one = len(keys) == 1
        # A value that is the nested key's own default changes nothing where it is read: harmless, a notice.
        idle = all(k in defaults and same_value(settings[k].value, defaults[k]) for k in keys)
        tail = (
            f"; {'it is' if one else 'they are'} the default there anyway, so drop {'it' if one else 'them'}."
            if idle
            else f": the server runs as if {'it' if one else 'they'} were not there. Drop {'it' if one else 'them'}, "
            f"or, to turn {'it' if one else 'them'} on, set {'it' if one else 'them'} there (`{example}`) once the "
            "sub-config's own checks allow the value (vLLM-Ascend validates it there and may refuse to start)."
        )
        yield Hit(
            src.path,
            line,
            f"{names} {'is' if one else 'are'} set at the top level of `--additional-config`, where vLLM-Ascend "
            f"does not read {'it' if one else 'them'}: it reads {'it' if one else 'them'} only inside {inside} "
            f"({where}), so {'this setting does' if one else 'these settings do'} nothing{tail}",
            severity=Severity.NOTICE if idle else Severity.WARNING,
        ).unless_introduced(ctx)  # a dead key the project already runs with (an audit) is no inline comment


def _key_line(src: SourceFile, start: int, key: str) -> int:
    """The line of `"key":` in a Python dict literal written from line `start` on (the keyword's line when the
    key is not found within a few lines)."""
    pattern = re.compile(rf"""["']{re.escape(key)}["']\s*:""")
    for n in range(start, min(start + 40, len(src.lines)) + 1):
        if pattern.search(src.line(n)):
            return n
    return start


def _nested_only(ctx: Context) -> tuple[dict[str, tuple[str, ...]], str, dict[str, object]]:
    """Key -> the sub-configs vLLM-Ascend reads it in, for keys it never reads at the top level, and where that was
    read: the repository's own reader (vLLM-Ascend itself, at the reviewed revision) or the facts."""

    def build() -> tuple[dict[str, tuple[str, ...]], str, dict[str, object]]:
        facts = ctx.facts.ascend_additional_config
        for path in ctx.head_paths():
            if not globs.match_any(path, facts.registry_files):
                continue
            src = ctx.source(path)
            keys = read_keys(src.text) if src is not None else None
            if keys is None:
                continue
            own: dict[str, list[str]] = {}
            for sub in sorted(keys.nested):
                if sub in keys.top:
                    for key in sorted(keys.nested[sub] - keys.top):
                        own.setdefault(key, []).append(sub)
            return {k: tuple(v) for k, v in own.items()}, f"this revision's `{path}`", keys.defaults
        out: dict[str, list[str]] = {}
        for sub, keys_of in facts.nested_only.items():
            for key in keys_of:
                out.setdefault(key, []).append(sub)
        where = f"vLLM-Ascend's `ascend_config.py`, as of {facts.date}"
        return {k: tuple(v) for k, v in out.items()}, where, dict(facts.defaults)

    return ctx.memo(("npu106-additional-config", "head", ""), build)
