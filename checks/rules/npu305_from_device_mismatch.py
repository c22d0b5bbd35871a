"""NPU305: an `_a2`/`_a3` Dockerfile whose base image, SOC_VERSION or CANN ops package is for the other device."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks.analysis.device import Devices, devices
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile, build_args, expand, steps
from npu_review.checks.rule import Hit, Rule

_NAMES = {"a2": "A2 (910b)", "a3": "A3"}


@dataclass(frozen=True)
class _Fact:
    kind: str  # "from", "soc", "ops"
    device: str
    line: int
    text: str  # what is shown in the message (the tag, the value, the package)
    old: str | None = None  # exact text on `line` to replace for the fix (None: no exact fix)
    new: dict[str, str] | None = None  # device -> replacement of `old`


class FromDeviceMismatch(Rule):
    """An `_a2` or `_a3` Dockerfile builds on the other device's base image, SOC_VERSION or CANN ops package.

    Why: the file name says which device the image is for; the FROM tag (`cann:9.0.0-910b-…` for A2,
    `cann:9.0.0-a3-…` for A3), `ARG SOC_VERSION` (`ascend910b1` for A2, `ascend910_9392` for A3; the custom
    kernels of vllm-ascend are compiled for it) and the CANN ops installer (`Ascend-cann-910b-ops` /
    `Ascend-cann-A3-ops`) must agree with it. In the era when the build derived the pushed tag from the FROM
    line, an A3 file on a 910b base produced an image tagged as the A2 one and overwrote it (#6466, fixed
    in #6517). Without a device suffix in the name, the FROM device and SOC_VERSION must still agree. A build
    that sets SOC_VERSION for several devices picks one by its target (an `if` on the target device): its
    SOC_VERSION values are not judged.

    Bad (`Dockerfile.ascend_9.0.0_a3`):
        FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.0.0-910b-ubuntu22.04-py3.11
        ARG SOC_VERSION="ascend910_9392"

    Good:
        FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.0.0-a3-ubuntu22.04-py3.11
        ARG SOC_VERSION="ascend910_9392"

    Fix: use the base image tag, SOC_VERSION value and ops package of the file's device (the suggestion
    replaces the device token or the value). Tags or values that come from an unresolved `${VAR}` are not
    judged.
    """

    id = "NPU305"
    name = "from-device-mismatch"
    severity = Severity.ERROR
    title = "FROM tag, SOC_VERSION or ops package is for the other device than the file name"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        dev = devices(ctx)
        facts = list(_facts(df, src, dev))
        if len({f.device for f in facts if f.kind == "soc"}) > 1:
            # SOC_VERSION set for several devices: the build picks one by its target (`if [[ "$CANN_ARCHS" ==
            # "a3" ]]; then export SOC_VERSION=Ascend910_9382; else ...`), none of them is the image's for certain.
            facts = [f for f in facts if f.kind != "soc"]
        declared = dev.of_file(src.path)
        base = src.path.rsplit("/", 1)[-1]
        if declared is not None:
            for fact in facts:
                if fact.device != declared:
                    yield self._hit(src, fact, declared, f"`{base}` is an {_NAMES[declared]} image (file name)")
            return
        # No device in the name: the base image decides what SOC_VERSION and the ops package must be.
        from_devs = {f.device for f in facts if f.kind == "from"}
        if len(from_devs) != 1:
            return
        (from_dev,) = from_devs
        tag = next(f.text for f in facts if f.kind == "from")
        for fact in facts:
            if fact.kind != "from" and fact.device != from_dev:
                yield self._hit(src, fact, from_dev, f"The base image `{tag}` is for {_NAMES[from_dev]}")

    def _hit(self, src: SourceFile, fact: _Fact, want: str, reason: str) -> Hit:
        what = {
            "from": f"its base image tag `{fact.text}` is for {_NAMES[fact.device]}",
            "soc": f"`SOC_VERSION={fact.text}` compiles the kernels for {_NAMES[fact.device]}",
            "ops": f"it installs `{fact.old}`, the {_NAMES[fact.device]} CANN ops package{_tail(fact)}",
        }[fact.kind]
        extra = ""
        if fact.kind == "from":
            extra = (
                " An image built on it runs the wrong CANN device libraries, and a tag derived from the FROM line "
                "overwrites the other device's image."
            )
        suggestion = None
        line = src.line(fact.line)
        if fact.old is not None and fact.new is not None and want in fact.new and line.count(fact.old) == 1:
            suggestion = line.replace(fact.old, fact.new[want])
        fix = f" Use `{fact.new[want]}`." if fact.new is not None and want in fact.new else ""
        return Hit(src.path, fact.line, f"{reason}, but {what}.{extra}{fix}", suggestion=suggestion)


def _facts(df: Dockerfile, src: SourceFile, dev: Devices) -> Iterator[_Fact]:
    defs = build_args(df)
    for instr in df.of("FROM"):
        image = instr.image
        if image is None or image.tag is None:
            continue
        tag, _used = expand(image.tag, defs, instr.line)
        if "$" in tag:
            continue
        device = dev.of_tag(tag)
        if device is None:
            continue
        tokens = tag.split("-")
        new: dict[str, str] = {}
        if "$" not in image.tag:
            for want, toks in dev.from_tokens.items():
                if want == device or len(toks) != 1:
                    continue
                (tok,) = toks
                new[want] = "-".join(tok if t.lower() in dev.from_tokens[device] else t for t in tokens)
        yield _Fact("from", device, instr.line, tag, image.tag if new else None, new or None)
    for instr in df.of("ARG", "ENV"):
        for pair in instr.pairs:
            if pair.name == "SOC_VERSION" and pair.value and "$" not in pair.value:
                yield from _soc(pair.value, pair.line, dev)
    for step in steps(df):
        for name, value, word in step.cmd.assignments():
            if name == "SOC_VERSION" and value and "$" not in value:
                yield from _soc(value, word.line, dev)
        argv = step.cmd.argv
        if argv and argv[0] == "export":
            for w in step.cmd.words[step.cmd.start + 1 :]:
                name, eq, value = w.unquoted.partition("=")
                if eq and name == "SOC_VERSION" and value and "$" not in value:
                    yield from _soc(value, w.line, dev)
    # The ops package: one fact per device at its first line (wget, COPY, bash and rm name the same file).
    for device, package in dev.ops.items():
        lines = [
            n
            for n, text in enumerate(src.lines, start=1)
            if package.lower() in text.lower() and not text.lstrip().startswith("#")
        ]
        if lines:
            others = {d: p for d, p in dev.ops.items() if d != device}
            more = f" (also on {_lines(lines[1:])})" if len(lines) > 1 else ""
            yield _Fact("ops", device, lines[0], package + more, package, others)


def _tail(fact: _Fact) -> str:
    """What the fact's text adds after the package name (`" (also on line 10)"`)."""
    return fact.text[len(fact.old or "") :]


def _lines(numbers: list[int]) -> str:
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(str(n) for n in numbers)


def _soc(value: str, line: int, dev: Devices) -> Iterator[_Fact]:
    device = dev.of_soc(value)
    if device is None:
        return
    new = {d: v for d, v in dev.default.items() if d != device}
    yield _Fact("soc", device, line, value, value, new)
