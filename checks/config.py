"""The repo config `.github/npu-review.yml`, parsed once into a frozen object; bad input raises ConfigError."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from npu_review.checks.kinds import KNOWN_KINDS
from npu_review.checks.model import Severity

if TYPE_CHECKING:
    from npu_review.checks.facts import Facts

CONFIG_PATH = ".github/npu-review.yml"

_TOP_KEYS = ("rules", "ignore_paths", "paths", "profile", "knowledge", "review")
_REVIEW_KEYS = ("inline_notices", "max_inline_comments")
# The App's inline comments per PR at most (one per cause); the rest go to the review body, most severe first.
DEFAULT_MAX_INLINE_COMMENTS = 10


class ConfigError(ValueError):
    """The config cannot be used; the message is one line meant for the user."""


@dataclass(frozen=True)
class RuleSetting:
    enabled: bool = True
    severity: Severity | None = None


@dataclass(frozen=True)
class Config:
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)
    ignore_paths: tuple[str, ...] = ()
    paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The facts the rules read: the profile's, with the `knowledge:` overrides merged in and validated.
    facts: Facts = field(default_factory=lambda: _default_facts(), repr=False)
    # The App posts inline review comments for errors and warnings only; notices go to the check run
    # (annotations and summary). `review: {inline_notices: true}` posts notices inline too.
    inline_notices: bool = False
    # `review: {max_inline_comments: N}`: the App's inline comments on one PR at most (its earlier ones still on
    # the PR count); the other causes are listed in the review body, most severe first. 0: none inline.
    max_inline_comments: int = DEFAULT_MAX_INLINE_COMMENTS
    # The profile the repo config names; None: the one checks.facts.detect chooses for the tree (for_tree).
    profile: str | None = None
    # The `knowledge:` overrides as written (validated into `facts` at parse time): for_tree applies them to the
    # detected profile's facts.
    knowledge: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def for_tree(self, paths: Iterable[str]) -> Config:
        """This config with the facts of the profile for a tree with these paths: the named one, else the
        detected one (verl's for a repository that looks like verl, the generic one for an unknown layout)."""
        if self.profile is not None:
            return self
        from npu_review.checks import facts as facts_data

        chosen = facts_data.detect(paths)
        if chosen == self.facts.profile:
            return self
        # The overrides were validated against the same schema when the config was parsed.
        return dataclasses.replace(self, facts=facts_data.load(self.knowledge, chosen))

    def enabled(self, rule_id: str, default: bool = True) -> bool:
        setting = self.rules.get(rule_id)
        return default if setting is None else setting.enabled

    def severity(self, rule_id: str, default: Severity) -> Severity:
        setting = self.rules.get(rule_id)
        return default if setting is None or setting.severity is None else setting.severity


def _default_facts() -> Facts:
    # The facts are imported when a config first needs them, not with this module (the CLI's start-up).
    from npu_review.checks.facts import default_facts

    return default_facts()


@functools.cache
def default_config() -> Config:
    """The config of a repository without a config file: built on first use (it reads and checks the facts)."""
    return Config()


def __getattr__(name: str) -> Any:
    if name == "DEFAULT_CONFIG":  # the old constant, built on first use
        return default_config()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _str_list(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return tuple(value)


def _rule_setting(rule_id: str, value: object) -> RuleSetting:
    where = f"rules.{rule_id}"
    if isinstance(value, bool):
        return RuleSetting(enabled=value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("off", "false", "disable", "disabled"):
            return RuleSetting(enabled=False)
        if word in ("on", "true", "enable", "enabled"):
            return RuleSetting(enabled=True)
        try:
            return RuleSetting(severity=Severity.parse(word))
        except ValueError:
            raise ConfigError(f"{where}: expected on, off, error, warning or notice, got {value!r}") from None
    if isinstance(value, dict):
        unknown = set(value) - {"enabled", "severity"}
        if unknown:
            raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: enabled, severity)")
        enabled = value.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{where}.enabled: expected true or false")
        sev = value.get("severity")
        if sev is not None:
            if not isinstance(sev, str):
                raise ConfigError(f"{where}.severity: expected error, warning or notice")
            try:
                return RuleSetting(enabled=enabled, severity=Severity.parse(sev))
            except ValueError as exc:
                raise ConfigError(f"{where}.severity: {exc}") from None
        return RuleSetting(enabled=enabled)
    raise ConfigError(f"{where}: expected on, off, a severity, or a mapping with enabled/severity")


def config_text(data: bytes, source: str = CONFIG_PATH) -> str:
    """A config file's bytes as text: ConfigError for a binary or not UTF-8 one, which would otherwise read as no
    config at all (the lenient decoding of reviewed files drops binaries) or as something else."""
    if b"\0" in data:
        raise ConfigError(f"{source}: a binary file (it holds NUL bytes), not YAML")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text (byte {exc.start + 1})") from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def parse_config(text: str | None, known_rules: frozenset[str], source: str = CONFIG_PATH) -> Config:
    """Parse the YAML text of a repo config. None or an empty file gives the defaults."""
    if text is None or not text.strip():
        return default_config()
    import yaml

    try:
        data = yaml.safe_load(str(text))  # a plain str (decode_blob's CrlfText is a subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}:{where}: {problem}") from None
    if data is None:
        return default_config()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known: {', '.join(_TOP_KEYS)})")

    rules: dict[str, RuleSetting] = {}
    raw_rules = data.get("rules") or {}
    if not isinstance(raw_rules, dict):
        raise ConfigError(f"{source}: rules: expected a mapping from rule id to setting")
    for rule_id, value in raw_rules.items():
        rid = str(rule_id).upper()
        if rid not in known_rules:
            raise ConfigError(f"{source}: rules: unknown rule id {rule_id!r} (see `npu-review rules`)")
        rules[rid] = _rule_setting(rid, value)

    ignore_paths = _str_list(data.get("ignore_paths") or [], f"{source}: ignore_paths")

    paths: dict[str, tuple[str, ...]] = {}
    raw_paths = data.get("paths") or {}
    if not isinstance(raw_paths, dict):
        raise ConfigError(f"{source}: paths: expected a mapping from file kind to globs")
    for kind, value in raw_paths.items():
        if kind not in KNOWN_KINDS:
            raise ConfigError(f"{source}: paths: unknown file kind {kind!r} (known: {', '.join(sorted(KNOWN_KINDS))})")
        paths[str(kind)] = _str_list(value, f"{source}: paths.{kind}")

    from npu_review.checks import facts as facts_data

    profile = data.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise ConfigError(f"{source}: profile: expected a profile name ({', '.join(facts_data.profiles())})")
    knowledge = data.get("knowledge") or {}
    if not isinstance(knowledge, dict):
        raise ConfigError(f"{source}: knowledge: expected a mapping")
    try:
        facts = facts_data.load(knowledge, profile or facts_data.DEFAULT_PROFILE)
    except facts_data.FactsError as exc:
        raise ConfigError(f"{source}: {exc}") from None

    review = data.get("review") or {}
    if not isinstance(review, dict):
        raise ConfigError(f"{source}: review: expected a mapping (known: {', '.join(_REVIEW_KEYS)})")
    unknown = [k for k in review if k not in _REVIEW_KEYS]
    if unknown:
        raise ConfigError(f"{source}: review: unknown key {unknown[0]!r} (known: {', '.join(_REVIEW_KEYS)})")
    inline_notices = review.get("inline_notices", False)
    if not isinstance(inline_notices, bool):
        raise ConfigError(f"{source}: review.inline_notices: expected true or false")
    max_inline = review.get("max_inline_comments", DEFAULT_MAX_INLINE_COMMENTS)
    if isinstance(max_inline, bool) or not isinstance(max_inline, int) or max_inline < 0:
        raise ConfigError(f"{source}: review.max_inline_comments: expected a whole number, 0 or more")

    return Config(
        rules=rules,
        ignore_paths=ignore_paths,
        paths=paths,
        facts=facts,
        inline_notices=inline_notices,
        max_inline_comments=max_inline,
        profile=profile,
        knowledge=knowledge,
    )
