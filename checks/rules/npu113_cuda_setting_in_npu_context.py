"""NPU113: a CUDA habit where the job runs on NPU: an NCCL or CUDA variable with an NPU counterpart, a GPU option
of a device-agnostic tool, a setting that names a GPU-only implementation, a CUDA build of vLLM."""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import ascend, lazyre
from npu_review.checks.analysis.device import ascend_jobs, doc_block_family, npu_reading
from npu_review.checks.analysis.scripts import ShellUnit, doc_is_ascend, doc_units, run_unit, step_unit, unit_shell
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.fastinit import fast_init
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCS, NPU_SCRIPT, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.shell import View
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Workflow

_ASSIGN = lazyre.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", re.S)


@fast_init
@dataclass(frozen=True)
class _Command:
    """A command as this rule reads it: its words as written (`raw`) and unquoted, and its line."""

    words: tuple[str, ...]
    line: int


class CudaSettingInNpuContext(Rule):
    """A CUDA habit where the job runs on NPU: the NCCL or CUDA variable instead of its NPU counterpart, a GPU
    option of a tool that finds NPUs by itself, a setting whose value names a GPU-only implementation, or a CUDA
    build of vLLM.

    Why: on Ascend the collective library is HCCL and the runtime is CANN, so the settings written for a GPU
    cluster do nothing there. `NCCL_SOCKET_IFNAME=eth0` leaves HCCL on its own choice of interface
    (`HCCL_SOCKET_IFNAME` is the one it reads), `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` leaves
    torch_npu's allocator as it was (`PYTORCH_NPU_ALLOC_CONF`), and the run differs from what the script
    claims without any error. `ray start --num-gpus=8` on an NPU node registers eight GPUs that do not exist
    while Ray finds the NPUs itself (vllm-ascend removed it from its multi-node guide); `docker run --gpus all`
    asks for NVIDIA's runtime (NPUs come in with `--device /dev/davinciN`); `VLLM_ATTENTION_BACKEND=XFORMERS`
    (or `vllm serve --attention-backend FLASHINFER`) names a CUDA attention backend that vLLM-Ascend never runs:
    its platform picks its own Ascend backend whatever vLLM is asked for; and `pip install -e .` of a vLLM
    checkout without `VLLM_TARGET_DEVICE=empty` builds vLLM for CUDA and installs CUDA torch over the NPU one
    (the vLLM-Ascend install guide builds it with `VLLM_TARGET_DEVICE=empty`). A build that names another device
    (`VLLM_TARGET_DEVICE=cpu`) is one chosen on purpose, not a CUDA build.

    Bad:
        export NCCL_SOCKET_IFNAME=eth0
        export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
        export VLLM_ATTENTION_BACKEND=XFORMERS
        ray start --head --num-gpus=8

    Good:
        export HCCL_SOCKET_IFNAME=eth0
        export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
        ray start --head

    Fix: set the NPU counterpart the message names (or drop the CUDA one); drop the GPU option and the GPU
    attention backend; build vLLM with `VLLM_TARGET_DEVICE=empty pip install -e .`. The CUDA variables one place
    sets are one cause (a GPU cluster's NCCL block: one comment naming the other lines), as is the same block in
    twin scripts.

    Where: NPU scripts (their NPU branch only: a `case "$DEVICE"` arm for GPUs is left alone), `run:` steps and
    `env:` of Ascend jobs, Ascend Dockerfiles (ENV and RUN) and the shell blocks of Ascend docs (in a doc for
    several devices, the blocks of the parts it gives to the NPU by a heading or a line such as `For Ascend
    users:`, or whose own text is Ascend's; a block that selects a CUDA device is a GPU one). Not reported:
    CUDA variables without an NPU counterpart (Megatron reads `CUDA_DEVICE_MAX_CONNECTIONS` on NPU too; the
    others are inert), a place that sets the NPU counterpart as well (written for both devices on purpose),
    `CUDA_VISIBLE_DEVICES` (NPU106's), `FLASH_ATTN` (vLLM-Ascend's FA3 for training-inference consistency was
    asked for by it), `ASCEND`, and values the rule cannot read. The GPU-only values are the facts'
    `cuda_habits.gpu_values`.
    """

    id = "NPU113"
    name = "cuda-setting-in-npu-context"
    severity = Severity.WARNING
    title = "A CUDA or NCCL habit where the job runs on NPU"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, ASCEND_WORKFLOW, ASCEND_DOCKERFILE})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS in src.kinds and flavor_of(src.path) is not None:
            units = doc_units(ctx, src)
            if units and doc_is_ascend(ctx, src):
                # A doc for several devices: only its NPU blocks (checks.analysis.device.doc_block_family).
                units = [u for u in units if doc_block_family(ctx, src, u.line, u.source.text) == "npu"]
                doc = ctx.document(src)
                sections = [h.line for h in doc.headings] if doc is not None else []
                yield from _place(ctx, src.path, [], [c for u in units for c in _unit_commands(u)], sections)
            return
        if SHELL not in src.kinds and NPU_SCRIPT not in src.kinds:
            return
        view = npu_reading(ctx, src)
        if view is None or _drives_npu_hosts_over_ssh(ctx, view):
            return
        env = [(a.name, a.raw or "", a.line) for a in view.assignments if a.exported or a.kind == "export"]
        calls = [_Command(tuple(_unquote(w) for w in c.words), c.line) for c in view.calls]
        yield from _place(ctx, src.path, env, calls)

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        npu = ascend_jobs(ctx, src.path)
        if npu is not None and job.id not in npu:
            return
        env: list[tuple[str, str, int]] = []
        for mapping in (wf.env, job.env, *(s.env for s in job.steps)):
            env.extend((name, node.value if node.is_scalar else "", node.line) for name, node in mapping.items())
        commands = [c for s in job.steps if (u := step_unit(src.path, s)) is not None for c in _unit_commands(u)]
        yield from _place(ctx, src.path, env, commands)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ASCEND_DOCKERFILE not in src.kinds:
            return
        env = [(p.name, p.value or "", p.line) for i in df.of("ENV") for p in i.pairs]
        commands = [c for i in df.of("RUN") if (u := run_unit(src.path, i)) is not None for c in _unit_commands(u)]
        yield from _place(ctx, src.path, env, commands)


def _drives_npu_hosts_over_ssh(ctx: Context, view: View) -> bool:
    """The script runs its NPU work on other hosts (`ssh host "... npu-smi ..."`) and names nothing of Ascend in
    what it runs itself: a test driver on a scheduler host, whose own commands (`docker run --gpus=all` of an
    evaluation client that queries the served model over HTTP) do not run on an NPU (InfiniTensor/ci, rs-r51,
    judged false)."""
    if not any(c.program == "ssh" for c in view.calls):
        return False
    local = "\n".join(
        [" ".join(c.words) for c in view.calls if c.program != "ssh"]
        + [f"{a.name}={a.raw or ''}" for a in view.assignments]
    )
    return not ascend.has_script_marker(local, ascend.markers(ctx.facts.ascend_content))


def _unquote(raw: str) -> str:
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw


def _unit_commands(unit: ShellUnit) -> list[_Command]:
    return [_Command(tuple(w.unquoted for w in c.words), c.line) for c in unit_shell(unit).commands if c.words]


def _place(
    ctx: Context,
    path: str,
    env: list[tuple[str, str, int]],
    commands: Sequence[_Command],
    sections: Sequence[int] = (),
) -> Iterator[Hit]:
    """The findings of one place (a script, a job, a Dockerfile, a doc): its variables and its commands. A doc's
    `sections` (its headings' lines) bound where a `cd` of one block still holds."""
    settings = list(env)
    for c in commands:
        words = c.words
        start = 1 if words and words[0] in ("export", "env") else 0
        for w in words[start:]:
            m = _ASSIGN.match(w)
            if m is None:
                if start:
                    continue
                break  # the command's name: prefix assignments come before it
            settings.append((m.group(1), m.group(2), c.line))
    yield from _variables(ctx, path, settings)
    yield from _options(ctx, path, commands)
    yield from _gpu_values(ctx, path, settings, commands)
    yield from _vllm_builds(ctx, path, commands, settings, sections)


def _variables(ctx: Context, path: str, settings: list[tuple[str, str, int]]) -> Iterator[Hit]:
    counterparts = ctx.facts.env_cuda.counterparts
    skip = ctx.facts.ascend_values.cuda_visible_env
    names = {name for name, _v, _l in settings}
    seen: set[str] = set()
    found: list[tuple[str, str, int, str]] = []
    for name, value, line in settings:
        npu = counterparts.get(name, "none")
        if npu == "none" or name == skip or npu in names or name in seen:
            continue
        seen.add(name)
        found.append((name, value.strip(), line, npu))
    # The CUDA settings of one place are one cause (a GPU cluster's NCCL block copied into an NPU script, four
    # variables: one comment; mllm-npu, rs-r66, judged noise four times as one cause split by variable), and the
    # same block in twin scripts is the same cause.
    cause = " ".join(sorted(f"{name}={value}" for name, value, _line, _npu in found))
    for name, _value, line, npu in found:
        yield Hit(
            path,
            line,
            f"`{name}` is read by NCCL / CUDA only: where this runs on NPU, `{npu}` does that job and this setting "
            f"does nothing. Set `{npu}` instead (both, if this also runs on GPUs).",
            suggestion=_renamed(ctx, path, line, name, npu),
            cause=cause,
        )


def _renamed(ctx: Context, path: str, line: int, name: str, npu: str) -> str | None:
    src = ctx.source(path)
    text = src.line(line) if src is not None else ""
    return text.replace(name, npu) if len(re.findall(rf"\b{name}\b", text)) == 1 else None


def _options(ctx: Context, path: str, commands: Sequence[_Command]) -> Iterator[Hit]:
    table = ctx.facts.cuda_habits.gpu_options
    for c in commands:
        words = [posixpath.basename(c.words[0]), *c.words[1:]] if c.words else []
        for tool, options in table.items():
            parts = tool.split()
            if words[: len(parts)] != parts:
                continue
            for w in words[len(parts) :]:
                option = w.split("=", 1)[0]
                if option in options:
                    yield Hit(
                        path,
                        c.line,
                        f"`{tool} {option}` asks for GPUs where this runs on NPU: {options[option]}",
                        cause=f"{tool} {option}",
                    )


def _gpu_values(
    ctx: Context, path: str, settings: list[tuple[str, str, int]], commands: Sequence[_Command]
) -> Iterator[Hit]:
    """A variable or a tool's option whose value names a GPU-only implementation (the facts'
    cuda_habits.gpu_values): `VLLM_ATTENTION_BACKEND=XFORMERS`, `vllm serve --attention-backend FLASHINFER`."""
    table = ctx.facts.cuda_habits.gpu_values
    found: list[tuple[str, str, int]] = []  # (setting as written, value, line)
    for name, raw, line in settings:
        if name in table:
            found.append((name, _unquote(raw.strip()), line))
    for key in table:
        tool, _, option = key.rpartition(" ")
        if not tool:
            continue
        parts = tool.split()
        for c in commands:
            words = [posixpath.basename(c.words[0]), *c.words[1:]] if c.words else []
            if words[: len(parts)] != parts:
                continue
            args = words[len(parts) :]
            for i, w in enumerate(args):
                if w == option and i + 1 < len(args):
                    found.append((key, args[i + 1], c.line))
                elif w.startswith(option + "="):
                    found.append((key, w[len(option) + 1 :], c.line))
    seen: set[tuple[str, int]] = set()
    for key, value, line in found:
        facts = table[key]
        if value.upper() not in {v.upper() for v in facts.values} or (key, line) in seen:
            continue
        seen.add((key, line))
        shown = f"{key}={value}" if " " not in key else f"{key} {value}"
        yield Hit(
            path,
            line,
            f"`{shown}` names a GPU-only implementation where this runs on NPU: {facts.why}",
            cause=f"{key}={value.upper()}",
        ).unless_introduced(ctx)  # a line the project already runs with (an audit) is no inline comment


def _vllm_builds(
    ctx: Context,
    path: str,
    commands: Sequence[_Command],
    settings: list[tuple[str, str, int]],
    sections: Sequence[int] = (),
) -> Iterator[Hit]:
    """`pip install [-e] .` (or `python setup.py install|develop`) in a vLLM checkout, without the environment
    under which vLLM builds no CUDA code (the facts' torch_resolvers.no_torch_env)."""
    quiet = ctx.facts.torch_resolvers.no_torch_env
    if not any(c.words and c.words[0] == "cd" for c in commands) and not any(
        "vllm" in w for c in commands for w in c.words
    ):
        return
    exported = {name: value for name, value, _l in settings}
    cwd = ""
    clones: dict[str, str] = {}  # folder -> repository name
    section = 0
    for c in commands:
        here = bisect.bisect_right(sections, c.line)
        if here != section:  # a doc's next section starts where its reader stands, not in the last `cd`
            section, cwd = here, ""
        words = list(c.words)
        prefix = {}
        while words and (m := _ASSIGN.match(words[0])):
            prefix[m.group(1)] = m.group(2)
            words.pop(0)
        if not words:
            continue
        if words[0] == "git" and len(words) > 2 and words[1] == "clone":
            args = [w for w in words[2:] if not w.startswith("-")]
            url = next((a for a in args if "://" in a or a.startswith("git@")), None)
            if url is not None:
                repo = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git").lower()
                rest = args[args.index(url) + 1 :]
                clones[rest[0] if rest else repo] = repo
            continue
        if words[0] == "cd" and len(words) > 1:
            cwd = words[1].rstrip("/").rsplit("/", 1)[-1]
            continue
        target = _build_target(words)
        if target is None:
            continue
        folder = cwd if target == "." else target.rstrip("/").rsplit("/", 1)[-1]
        repo = clones.get(folder, folder).lower()
        need = quiet.get(repo)
        if not need:
            continue
        env = {**exported, **prefix}
        if all(env.get(k) == v for k, v in need.items()):
            continue
        if all(env.get(k, "").strip("'\"").lower() not in ("", "cuda") for k in need):
            continue  # `VLLM_TARGET_DEVICE=cpu`: a build for another device, chosen on purpose, not for CUDA
        shown = " ".join(f"{k}={v}" for k, v in need.items())
        yield Hit(
            path,
            c.line,
            f"This builds {repo} from source for CUDA: without `{shown}` its build compiles CUDA kernels and "
            f"installs the CUDA torch over the NPU one. Prefix the install with `{shown}`.",
            cause=f"{repo} CUDA build",
        )


def _build_target(words: list[str]) -> str | None:
    """The folder a `pip install [-e] X` / `python setup.py install|develop` builds, else None."""
    name = posixpath.basename(words[0])
    if name in ("python", "python3") and len(words) > 2 and words[1] == "setup.py":
        return "." if words[2] in ("install", "develop") else None
    if name in ("python", "python3") and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]
        name = "pip"
    if not re.fullmatch(r"pip3?(?:\.\d+)?|uv", name) or "install" not in words[1:3]:
        return None
    args = words[words.index("install") + 1 :]
    for i, a in enumerate(args):
        if a in ("-e", "--editable") and i + 1 < len(args):
            editable = args[i + 1]
            return None if "://" in editable or editable.startswith("git+") else editable
        if a.startswith("-"):
            continue
        if _is_folder(a):
            return a
    return None


def _is_folder(arg: str) -> bool:
    return arg == "." or arg.startswith(("./", "/", "../")) or (arg.endswith("/") and "://" not in arg)
