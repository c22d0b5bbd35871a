"""Launch commands as the rules read them: the trainer config (Hydra schema) a command addresses, and what is
wrong with a `cudagraph_mode` value for that command (NPU103 and NPU108 both ask, and must say the same)."""

from __future__ import annotations

import dataclasses
import difflib
import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.context import Context
from npu_review.checks.parsers.shell import Invocation, Override, View, as_int
from npu_review.checks.parsers.vllm_cli import normalise

if TYPE_CHECKING:
    from npu_review.checks.parsers.hydra_config import Schema


@dataclass(frozen=True)
class ModeIssue:
    """What is wrong with one cudagraph_mode value (shared with NPU103, which must not repeat it)."""

    message: str
    suggestion_value: str | None = None  # the exact canonical spelling, when there is one


def mode_keys(ctx: Context) -> list[str]:
    return list(ctx.facts.launch.cudagraph_mode_keys)


def mode_issue(ctx: Context, inv: Invocation, value: str) -> ModeIssue | None:
    """Why `value` (already shell-resolved) is not a usable cudagraph_mode for this command, or None."""
    issue = mode_name_issue(ctx, value)
    if issue is not None:
        return issue
    modes = ctx.facts.graph_modes
    v = value.strip()
    canon = v.upper() if modes.case_insensitive else v
    if canon in set(modes.full_with_prefill):
        for key in ctx.facts.launch.rollout_context_parallel_keys:
            eff = inv.effective(key)
            size = as_int(eff.value)
            if eff.present is True and eff.override is not None and size is not None and size > 1:
                shown = f"{key.rsplit('.', 1)[-1]}={size}"
                return full_with_cp(v, shown, eff.override.line, "rollout context parallel")
    return None


def full_with_cp(value: str, shown: str, line: int, what: str = "context parallel") -> ModeIssue:
    return ModeIssue(
        f"`cudagraph_mode={value}` captures full graphs for prefill too, which vLLM(-Ascend) does not "
        f"support with {what} (`{shown}` on line {line}). Use FULL_DECODE_ONLY or "
        "PIECEWISE, or drop context parallel."
    )


def mode_name_issue(ctx: Context, value: str) -> ModeIssue | None:
    """Why `value` is not a cudagraph_mode name vLLM knows, or None."""
    modes = ctx.facts.graph_modes
    valid, insensitive = list(modes.valid), modes.case_insensitive
    v = value.strip()
    if v in ("", "null", "None", "~") or v.isdigit():
        return None  # vLLM's default, or an enum value given as a number
    canon = v.upper() if insensitive else v
    if canon not in valid:
        normalised = re.sub(r"[\s-]+", "_", v.strip()).upper()
        if normalised in valid:
            return ModeIssue(
                f"`cudagraph_mode={v}` is not a vLLM CUDAGraphMode; write `{normalised}` (valid: {', '.join(valid)}).",
                normalised,
            )
        close = difflib.get_close_matches(canon, valid, n=1, cutoff=0.75)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        return ModeIssue(
            f"`cudagraph_mode={v}` is not a vLLM CUDAGraphMode (valid: {', '.join(valid)}): the rollout fails "
            f"when vLLM parses its compilation config.{hint}"
        )
    return None


def deciding_overrides(inv: Invocation, key: str) -> list[tuple[Override, str]]:
    """(override, value) pairs that can be the final cudagraph_mode of the command, with known values."""
    eff = inv.effective(key)
    if eff.override is None:
        return []
    if isinstance(eff.value, str):
        return [(eff.override, eff.value)]
    out: list[tuple[Override, str]] = []
    for o in reversed(eff.overrides):  # an arm that may not run: each of its values may be the final one
        if o.key == key and isinstance(o.value, str):
            out.append((o, o.value))
        if not o.conditional:
            break
    return out[::-1]


def schema_for(ctx: Context, inv: Invocation) -> Schema | None:
    """The generated config that describes `inv`'s config, parsed once per run; None when unknown or absent."""
    from npu_review.checks.parsers import hydra_config

    choice = hydra_config.config_file_for(inv, ctx.facts.hydra_schema)
    if choice.file is None:
        return None
    path, name = choice.file, choice.name

    def load() -> Schema | None:
        src = ctx.source(path)
        schema = None if src is None else hydra_config.from_doc(path, ctx.yaml(src))
        if schema is not None and name is not None:
            schema = dataclasses.replace(schema, top=_root_names(ctx, posixpath.dirname(path), name))
        return schema

    return ctx.memo(("hydra-schema", "head", f"{path}:{name}"), load)


def _root_names(ctx: Context, folder: str, name: str) -> frozenset[str] | None:
    """The top-level names the primary config `name` composes (hydra_config.root_names), once per run."""
    from npu_review.checks.parsers import hydra_config
    from npu_review.checks.parsers.yamlmarks import Node

    def read(path: str) -> tuple[str, Node | None] | None:
        src = ctx.source(path)
        return None if src is None else (src.text, ctx.yaml(src).root)

    return ctx.memo(
        ("hydra-root-names", "head", f"{folder}/{name}"),
        lambda: hydra_config.root_names(folder, name, read, ctx.head_paths()),
    )


def free_form(ctx: Context) -> list[re.Pattern[str]]:
    def build() -> list[re.Pattern[str]]:
        return [re.compile(p) for p in ctx.facts.hydra_schema.free_form]

    return ctx.memo(("hydra-free-form", "head", ""), build)


# -- how many NPUs a launch asks for ------------------------------------------------------------------------------
# A training launch (torchrun, a Hydra trainer) starts `world` processes, one per NPU, and splits them into model
# parallel groups; a serving command (`vllm serve`, a DP launcher script) starts tensor x pipeline x local data
# parallel workers on the node it runs on. NPU228 compares these with what the node, the container or the
# visible-device list gives.


@dataclass(frozen=True)
class Size:
    """A parallel size a launch sets, with where."""

    key: str  # as written (`actor_rollout_ref.actor.megatron.tensor_model_parallel_size`)
    value: int
    line: int


@dataclass(frozen=True)
class World:
    """The processes a training launch starts over all its nodes, and what says so."""

    value: int
    per_node: int
    line: int
    how: str  # "`--nproc_per_node=1`", "`trainer.n_gpus_per_node=8`"


_INT = lazyre.compile(r"\d+\Z")


def _resolved(view: View, inv: Invocation, text: str) -> int | None:
    """An int written literally or as `$X` / `${X}` / `${X:-8}` that the view resolves to one."""
    text = text.strip("\"'")
    if _INT.match(text):
        return int(text)
    m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)(?::?-([^}]*))?\}?", text)
    if not m:
        return None
    found = view.variable(m.group(1), inv)
    value = found.value if found is not None else m.group(2)
    return int(value) if isinstance(value, str) and _INT.match(value.strip("\"'")) else None


def _option(args: tuple[str, ...], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1 :]
    return None


def world(ctx: Context, view: View, inv: Invocation) -> World | None:
    """The world size of a training launch: torchrun's `--nproc_per_node` x `--nnodes`, else the trainer's
    NPUs per node x nodes (`trainer.n_gpus_per_node`, `trainer.nnodes`); None when a part is unknown."""
    nproc = _option(inv.args, ("--nproc_per_node", "--nproc-per-node"))
    if nproc is not None:
        per = _resolved(view, inv, nproc)
        nodes_text = _option(inv.args, ("--nnodes",))
        nodes = 1 if nodes_text is None else _resolved(view, inv, nodes_text)
        if per is None or nodes is None:
            return None
        shown = f"`--nproc_per_node={nproc}`" + (f" x `--nnodes={nodes_text}`" if nodes_text else "")
        return World(per * nodes, per, inv.line, shown)
    key = ctx.facts.ascend_runners.npu_count_key
    eff = inv.effective(key)
    if eff.override is None or not isinstance(eff.value, str) or not _INT.match(eff.value):
        return None
    nodes_key = key.rsplit(".", 1)[0] + ".nnodes"
    neff = inv.effective(nodes_key)
    if neff.override is None:
        nodes = 1
    elif isinstance(neff.value, str) and _INT.match(neff.value):
        nodes = int(neff.value)
    else:
        return None
    shown = f"`{key}={eff.value}`" + (f" x `{nodes_key}={nodes}`" if neff.override is not None else "")
    return World(int(eff.value) * nodes, int(eff.value), eff.override.line, shown)


def parallel_sizes(ctx: Context, view: View, inv: Invocation) -> list[Size]:
    """The parallel sizes a launch sets (the facts' `parallel_keys`, dotted overrides and bare `key=value`
    arguments alike), as ints; unknown values left out."""
    keys = set(ctx.facts.ascend_devices.parallel_keys)
    out: list[Size] = []
    seen: set[str] = set()
    for o in reversed(inv.overrides):  # the last override of a key wins
        if o.key.rsplit(".", 1)[-1] in keys and o.key not in seen:
            seen.add(o.key)
            if isinstance(o.value, str) and _INT.match(o.value) and not o.conditional:
                out.append(Size(o.key, int(o.value), o.line))
    for a in inv.args:
        name, eq, value = a.partition("=")
        if eq and "." not in name and name in keys and name not in seen:
            seen.add(name)
            n = _resolved(view, inv, value)
            if n is not None:
                out.append(Size(name, n, inv.line))
    return out


def model_groups(ctx: Context, sizes: list[Size]) -> list[tuple[int, list[Size]]]:
    """The NPUs each model replica needs: per config path, the product of its model parallel sizes (TP x PP x
    CP); single sizes (Ulysses SP, EP) on their own."""
    product_keys = set(ctx.facts.ascend_devices.model_parallel_keys)
    groups: dict[str, list[Size]] = {}
    out: list[tuple[int, list[Size]]] = []
    for s in sizes:
        prefix, _, last = s.key.rpartition(".")
        if last in product_keys:
            groups.setdefault(prefix, []).append(s)
        else:
            out.append((s.value, [s]))
    for members in groups.values():
        total = 1
        for s in members:
            total *= s.value
        out.append((total, members))
    return out


@dataclass(frozen=True)
class Serve:
    """A serving command and the NPUs it starts on its node."""

    line: int
    need: int  # tensor x pipeline x local data parallel
    shown: str  # the options that say so
    spans_nodes: bool  # the engine may spread one model over nodes (Ray executor, --nnodes): no per-node bound


_TP = ("--tensor-parallel-size", "-tp", "--tp-size", "--tp")
_PP = ("--pipeline-parallel-size", "-pp", "--pp-size", "--pp")
_DP = ("--data-parallel-size", "-dp", "--dp-size", "--dp")
_DPL = ("--data-parallel-size-local", "-dpl", "--dp-size-local")
_DP_ELSEWHERE = (
    "--data-parallel-address",
    "--data-parallel-start-rank",
    "--headless",
    "--dp-address",
    "--dp-rank-start",
)
_SPANS = ("--nnodes", "--node-rank")


# A checkpoint conversion tool (`convert_ckpt.py`, `convert_pt2ckpt.py`, `checkpoint_converter`, `merge_lora`):
# it reshards weights offline, and its parallel sizes describe a checkpoint, not NPUs it starts.
_CONVERTER = lazyre.compile(r"(?i)convert|ckpt|checkpoint|(?:^|[_/.-])(?:merge|split|reshard)(?:[_.-]|$)")


def _tool(argv: tuple[str, ...]) -> str:
    """What a command runs: its Python script or module (`python x.py`, `python -m m`), else its program."""
    for k, a in enumerate(argv[:4]):
        if a.endswith(".py"):
            return a
        if a == "-m" and k + 1 < len(argv):
            return argv[k + 1]
    return argv[0] if argv else ""


def _hyphenated(arg: str) -> str:
    """A long option in its hyphen spelling, as vLLM's parser reads it (vllm_cli.normalise:
    `--tensor_parallel_size=2` -> `--tensor-parallel-size=2`); any other word as it is."""
    if not arg.startswith("--") or "_" not in arg:
        return arg
    flag, eq, value = arg.partition("=")
    name, key = normalise(flag)
    return name + ("." + key if key is not None else "") + eq + value


def serve_of(argv: tuple[str, ...], line: int) -> Serve | None:
    """The NPUs a command with tensor-parallel options asks of its node; None without them, when a value is not a
    literal number, or for a checkpoint conversion tool (its sizes are the checkpoint's)."""
    # vLLM's parser takes every option in its underscore spelling too (`--tensor_parallel_size 16`,
    # `--distributed_executor_backend "ray"` in shirwy/vllm-ascend-910a's multi-node guide; sweep-r34, judged false
    # when only the hyphen spelling was read): the options are read in both.
    argv = tuple(_hyphenated(a) for a in argv)
    tp = _option(argv, _TP)
    if tp is None:
        return None
    if not argv or argv[0].startswith("-"):
        return None  # options cut off their command by a lost `\` (NPU111 and NPU115 say so): no launch
    if _CONVERTER.search(_tool(argv).rsplit("/", 1)[-1]):
        return None
    values: dict[str, int] = {}
    for name, flags in (("tp", _TP), ("pp", _PP), ("dp", _DP), ("dpl", _DPL)):
        raw = _option(argv, flags)
        if raw is None:
            continue
        if not _INT.match(raw):
            return None
        values[name] = int(raw)
    elsewhere = any(a == f or a.startswith(f + "=") for a in argv for f in _DP_ELSEWHERE)
    elsewhere = elsewhere or _option(argv, ("--data-parallel-backend", "-dpb")) == "ray"
    local = values.get("dpl", 1 if elsewhere else values.get("dp", 1))
    if "--enable-dp-attention" in argv:
        # SGLang's data parallel attention splits the tensor parallel group: `--tp-size 16 --dp-size 4` is 16
        # NPUs, four attention groups of four (shun8686/for_debug, rs-r52, judged false).
        local = 1
    backend = _option(argv, ("--distributed-executor-backend",))
    spans = backend == "ray" or any(a == f or a.startswith(f + "=") for a in argv for f in _SPANS)
    # Pipeline stages are how a model is spread over nodes (tensor parallel within a node, pipeline across): vLLM
    # takes the Ray cluster it finds (`DeepSeek-V3 on Atlas A3 (2 nodes)`: tp 16 x pp 2), without the option. A
    # node then holds one stage: tensor x local data parallel NPUs.
    staged = values.get("pp", 1) > 1
    need = values["tp"] * (1 if staged else values.get("pp", 1)) * local
    shown = " x ".join(
        f"{flag} {values[name]}"
        for name, flag in (("tp", "tp"), ("pp", "pp"), ("dpl", "local dp"), ("dp", "dp"))
        if name in values
        and values[name] > 1
        and not (name == "dp" and ("dpl" in values or elsewhere))
        and not (name == "pp" and staged)
    )
    if staged:
        shown = f"{shown or 'tp ' + str(values['tp'])}, one of its {values['pp']} pipeline stages"
    return Serve(line, need, shown or f"tp {values['tp']}", spans)
