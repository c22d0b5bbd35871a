"""NPU228: a launch asks for more NPUs than its environment has."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import device_at, doc_regions, docker_npus, npu_project, npu_reading
from npu_review.checks.analysis.launch import Serve, Size, World, model_groups, parallel_sizes, serve_of, world
from npu_review.checks.analysis.vllm_launches import ascend_text, doc_command_blocks
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, SHELL
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.codeblocks import SHELL_LANGUAGES, Block, console_commands
from npu_review.checks.parsers.sh import Command, Source, commands
from npu_review.checks.parsers.shell import View
from npu_review.checks.rule import Hit, Rule

_VISIBLE = "ASCEND_RT_VISIBLE_DEVICES"
_ID_LIST = lazyre.compile(r"\d+(?:,\d+)*\Z")


@dataclass(frozen=True)
class _Docker:
    first: int
    last: int
    npus: int


class DeviceCountExceeded(Rule):
    """A launch asks for more NPUs than its node, its container or its visible devices give it.

    Why: a parallel group cannot be larger than the processes that form it, and a server cannot use NPUs it
    does not see. The launch then fails at start-up (`world size 1 is not divisible by sp 2`, no free NPU for the
    next worker), or a guide's reader copies a command that can never run on the hardware it names:
    * verl moved its SFT test with `ulysses_sequence_parallel_size=2` to `torchrun --nproc_per_node=1` on a
      1-NPU runner (fixed in 5a2e0b1);
    * vllm-ascend's GLM-5.2 guide started `launch_online_dp.py --tp-size 16 --dp-size-local 2` (32 NPUs) on each
      16-NPU A3 node (fixed in 17f14dd), and its GLM-5 guide served with `--tensor-parallel-size 16` in a
      container started with `--device /dev/davinci0` ... `davinci7` only (fixed in 052cc4e).

    Checked:
    * a training launch in an NPU script (torchrun's `--nproc_per_node` x `--nnodes`, or a Hydra trainer's
      `trainer.n_gpus_per_node` x `trainer.nnodes`) against the parallel sizes it sets: a tensor x pipeline x
      context parallel group of one config (one model replica), and each Ulysses sequence or expert parallel
      size, must fit in the processes it starts; and its NPUs per node against an `ASCEND_RT_VISIBLE_DEVICES`
      list the script exports;
    * a serving command in an NPU script or an Ascend doc's code blocks (`vllm serve`, a data parallel launcher
      with `--tp-size` / `--dp-size-local`) asks tensor x pipeline x local data parallel NPUs of its node: at
      most the node's NPUs (16 on an A3 node, 8 on an A2 node when the doc's section, tab or label names the
      device; 16 on any node), the NPUs an `ASCEND_RT_VISIBLE_DEVICES` list before it shows, and (a warning)
      the NPUs the doc's `docker run` maps (`--device /dev/davinciN`).

    Not reported: values that are not literal or resolvable numbers, scripts that pass `"$@"` on (a caller may
    change the sizes), engines that spread one model over nodes (`--distributed-executor-backend ray`, or `_`,
    `--nnodes`; with pipeline stages, `--pipeline-parallel-size 2`, a node holds one stage), data parallel ranks
    placed on other nodes (`--headless`, `--data-parallel-start-rank` without a local size), checkpoint conversion
    tools (`convert_pt2ckpt.py --tp-size 8 --pp-size 4` reshards offline: its sizes are the checkpoint's),
    containers whose devices cannot be counted (`--privileged`, `/dev/davinci$i`).
    The runner's NPU count is NPU211's.

    Bad (`tests/special_npu/run_sft_sp2.sh`):
        torchrun --standalone --nnodes=1 --nproc_per_node=1 \\
            -m verl.trainer.fsdp_sft_trainer \\
            ulysses_sequence_parallel_size=2 \\
            trainer.device=npu

    Good:
        torchrun --standalone --nnodes=1 --nproc_per_node=2 \\
            -m verl.trainer.fsdp_sft_trainer \\
            ulysses_sequence_parallel_size=2 \\
            trainer.device=npu

    Fix: start as many processes (or map as many devices) as the parallel sizes need, or lower the sizes.
    """

    id = "NPU228"
    name = "device-count-exceeded"
    severity = Severity.ERROR
    title = "Launch asks for more NPUs than its node, container or visible devices give"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS in src.kinds:
            if not any(f in src.text for f in ("-tp", "--tp", "parallel-size")):
                return  # the quick no: no serving command here sets a parallel size
            if not ("/dev/davinci" in src.text or npu_project(ctx) or ascend_text(ctx, src.text)):
                return
            blocks = [b if b.language in SHELL_LANGUAGES else console_commands(b) for b in doc_command_blocks(ctx, src)]
            yield from _once(ctx, list(_serving(ctx, src, blocks, doc_regions(ctx, src))))
            return
        if not any(w in src.text for w in ("parallel", "davinci", "-tp", "--tp", "nproc")):
            return
        view = npu_reading(ctx, src)
        if view is None:
            return
        yield from _training(ctx, src, view)
        if "-tp" in src.text or "--tp" in src.text or "parallel-size" in src.text:
            block = Block("bash", tuple(enumerate(src.lines, 1)))
            yield from _serving(ctx, src, [block], [], doc=False)


def _once(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """One finding for the same command copied in a doc (one per node of a multi-node setup): on a changed line
    when there is one, naming the others."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.message, []).append(hit)
    out = []
    for same in groups.values():
        first = next((h for h in same if ctx.is_added_line(h.path, h.line)), same[0])
        others = tuple(Related(h.path, h.line, "the same command") for h in same if h is not first)
        out.append(replace(first, related=first.related + others) if others else first)
    return out


# -- training launches ------------------------------------------------------------------------------------------


def _training(ctx: Context, src: SourceFile, view: View) -> Iterator[Hit]:
    visible = _script_visible(src)
    for inv in view.invocations:
        if inv.passes_args:
            continue
        w = world(ctx, view, inv)
        if w is None:
            continue
        groups = model_groups(ctx, parallel_sizes(ctx, view, inv))
        over = [(need, members) for need, members in groups if need > w.value]
        if over:
            need, members = max(over, key=lambda g: g[0])
            yield _too_large(ctx, src, w, need, members)
            continue
        if visible is not None and w.per_node > visible[0]:
            yield Hit(
                src.path,
                ctx.first_added(src.path, [w.line, visible[1]]),
                f"This launch starts {w.per_node} processes per node ({w.how}), but `{_VISIBLE}` (line "
                f"{visible[1]}) shows only {visible[0]} NPUs: the processes beyond those find no NPU. Start as "
                f"many processes as the visible devices, or make more devices visible.",
                related=(Related(src.path, visible[1], _VISIBLE),),
            )


def _too_large(ctx: Context, src: SourceFile, w: World, need: int, members: list[Size]) -> Hit:
    if len(members) == 1:
        what = f"`{members[0].key}={members[0].value}` needs {need} ranks in one group"
    else:
        parts = " x ".join(f"`{s.key.rsplit('.', 1)[-1]}={s.value}`" for s in members)
        what = f"{parts} need {need} NPUs for one model replica"
    line = ctx.first_added(src.path, [*sorted(s.line for s in members), w.line])
    return Hit(
        src.path,
        line,
        f"This launch starts {w.value} process{'es' if w.value != 1 else ''} ({w.how}), but {what}: the "
        "parallel group is larger than the world, and the launch fails at start-up. Start at least "
        f"{need} processes, or lower the parallel size.",
        related=tuple(
            Related(src.path, n, "") for n in dict.fromkeys([w.line, *(s.line for s in members)]) if n != line
        ),
    )


def _script_visible(src: SourceFile) -> tuple[int, int] | None:
    """(count, line) of a literal `ASCEND_RT_VISIBLE_DEVICES=0,1,...` the script exports."""
    if _VISIBLE not in src.text:
        return None
    found = None
    for n, line in enumerate(src.lines, 1):
        m = re.match(rf"\s*(?:export\s+)?{_VISIBLE}=[\"']?([\d,]+)[\"']?\s*(?:#.*)?$", line)
        if m and _ID_LIST.match(m.group(1)):
            found = (len(set(m.group(1).split(","))), n)
    return found


# -- serving commands ---------------------------------------------------------------------------------------------


def _serving(
    ctx: Context, src: SourceFile, blocks: list[Block], regions: list[tuple[int, int, str]], doc: bool = True
) -> Iterator[Hit]:
    """Serving commands against the node, the visible devices and (in a doc, where the reader goes on inside
    the container it starts) the devices a `docker run` maps. In a script, what follows `docker run` runs on
    the host."""
    devices = ctx.facts.ascend_devices
    dockers: list[_Docker] = []
    serves: list[tuple[Serve, tuple[int, int] | None]] = []
    for block in blocks:
        visible: tuple[int, int] | None = None
        for cmd in _commands(block):
            argv = cmd.argv
            for w in cmd.words[: cmd.start]:
                name, _, value = w.unquoted.partition("=")
                if name == _VISIBLE:
                    value = value.strip("\"'")
                    visible = (len(set(value.split(","))), w.line) if _ID_LIST.match(value) else None
            if argv[:1] == ("export",):
                for a in argv[1:]:
                    name, _, value = a.partition("=")
                    if name == _VISIBLE:
                        visible = (len(set(value.split(","))), cmd.line) if _ID_LIST.match(value) else None
                continue
            npus = docker_npus(argv) if doc else None
            if npus is not None:
                lines = [w.line for w in cmd.words if "/dev/davinci" in w.unquoted and "manager" not in w.unquoted]
                dockers.append(_Docker(min(lines, default=cmd.line), max(lines, default=cmd.line), npus))
                continue
            serve = serve_of(argv, cmd.line)
            if serve is not None and not serve.spans_nodes:
                serves.append((serve, visible))
    short: list[Serve] = []
    # Containers bound the commands only when every one of them maps a countable set of NPUs.
    biggest = max(dockers, key=lambda d: d.npus) if dockers and all(d.npus for d in dockers) else None
    for serve, visible in serves:
        device = device_at(regions, serve.line)
        node = devices.node_npus.get(device or "", devices.max_node_npus)
        if serve.need > node:
            known = device is not None and device in devices.node_npus
            on = f"an {str(device).upper()} node has {node}" if known else f"no Ascend server node has more than {node}"
            yield Hit(
                src.path,
                serve.line,
                f"This command asks one node for {serve.need} NPUs ({serve.shown}), but {on}: the workers beyond "
                "that find no NPU. Lower the sizes per node (fewer local data parallel ranks, or spread them over "
                "more nodes).",
            )
        elif visible is not None and serve.need > visible[0]:
            yield Hit(
                src.path,
                ctx.first_added(src.path, [serve.line, visible[1]]),
                f"This command needs {serve.need} NPUs ({serve.shown}), but `{_VISIBLE}` (line {visible[1]}) "
                f"shows only {visible[0]}: the server cannot start. Make {serve.need} devices visible, or lower "
                "the sizes.",
                related=(Related(src.path, visible[1], _VISIBLE),),
            )
        elif biggest is not None and serve.need > biggest.npus:
            short.append(serve)
    if short and biggest is not None:
        places = [(biggest.first, biggest.last), *((s.line, s.line) for s in short)]
        first, last = next(((a, b) for a, b in places if ctx.is_added_line(src.path, a)), places[0])
        listed = ", ".join(f"line {s.line} ({s.shown})" for s in short[:3])
        many = len(short) > 1
        yield Hit(
            src.path,
            first,
            f"The container here maps {biggest.npus} NPUs (`--device /dev/davinci…`, lines {biggest.first}-"
            f"{biggest.last}), but the command{'s' if many else ''} at {listed} need{'' if many else 's'} "
            f"{max(s.need for s in short)}: {'they' if many else 'it'} cannot start inside it. Map every NPU the "
            "commands use (`--device /dev/davinciN` for each; 16 on an A3 node).",
            end_line=last,
            related=tuple(Related(src.path, a, "") for a, _ in places if a != first),
            # A reader can map more devices than the doc shows; the node's and the visible devices' limits are hard.
            severity=Severity.WARNING,
        )


def _commands(block: Block) -> list[Command]:
    try:
        return [c for c in commands(Source.lines(block.lines)) if c.argv]
    except (RecursionError, ValueError):  # pragma: no cover - defensive
        return []
