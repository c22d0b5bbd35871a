"""Device context: which Ascend device a file, an image or a setting is for (A2 / A3 by file name, FROM tag,
SOC_VERSION), from the facts' device vocabulary."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks.context import Context
from npu_review.checks.facts.schema import DockerfileNames, SocVersions


@dataclass(frozen=True)
class Devices:
    """The device vocabulary of the facts' `soc_versions` and `dockerfile_names`."""

    soc: dict[str, frozenset[str]]
    default: dict[str, str]
    from_tokens: dict[str, frozenset[str]]
    file_tokens: dict[str, frozenset[str]]
    ops: dict[str, str]

    @classmethod
    def load(cls, soc: SocVersions, names: DockerfileNames) -> Devices:
        def lower_set(value: Iterable[str]) -> frozenset[str]:
            return frozenset(v.lower() for v in value)

        return cls(
            soc={"a2": lower_set(soc.a2), "a3": lower_set(soc.a3)},
            default=dict(soc.default),
            from_tokens={d: lower_set(soc.from_tokens.get(d, ())) for d in ("a2", "a3")},
            file_tokens={d: lower_set(names.device_tokens.get(d, ())) for d in ("a2", "a3")},
            ops=dict(soc.ops_packages),
        )

    def of_file(self, path: str) -> str | None:
        """The device a file name declares (`Dockerfile.ascend_9.1.0_a3` -> a3); None when none or both."""
        tokens = set(re.split(r"[._-]", posixpath.basename(path).lower()))
        found = {d for d, toks in self.file_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_tag(self, tag: str) -> str | None:
        tokens = set(tag.lower().split("-"))
        found = {d for d, toks in self.from_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_soc(self, value: str) -> str | None:
        found = {d for d, vals in self.soc.items() if value.lower() in vals}
        return found.pop() if len(found) == 1 else None


def devices(ctx: Context) -> Devices:
    facts = ctx.facts
    return ctx.memo(("facts", "devices", ""), lambda: Devices.load(facts.soc_versions, facts.dockerfile_names))


def dockerfile_device(ctx: Context, path: str, dev: Devices) -> str | None:
    """The one device of the file's FROM tags (ARG defaults substituted); None when none or several."""
    src = ctx.source(path)
    if src is None:
        return None
    found = set()
    for instr in ctx.dockerfile(src).of("FROM"):
        tag = instr.image.tag if instr.image is not None else None
        device = dev.of_tag(tag) if tag else None
        if device is not None:
            found.add(device)
    return found.pop() if len(found) == 1 else None
