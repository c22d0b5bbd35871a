"""checks.fastinit: a frozen dataclass's `__init__` that sets its fields directly, the class otherwise the dataclass's
own (frozen, equality, hash, repr, replace, pickling), for slotted classes and classes with a `__dict__` alike."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.sh.words import Word


@dataclass(frozen=True, slots=True)
class SlotsPlain:
    raw: str
    line: int
    offset: int = 0
    marks: tuple[tuple[int, int], ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class SlotsFast:
    raw: str
    line: int
    offset: int = 0
    marks: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class DictPlain:
    name: str
    value: str | None = None
    line: int = 1


@fast_init
@dataclass(frozen=True)
class DictFast:
    name: str
    value: str | None = None
    line: int = 1


def _fields(obj: object) -> tuple[object, ...]:
    return tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fast", "plain", "args", "kwargs"),
    [
        (SlotsFast, SlotsPlain, ("a", 3), {}),
        (SlotsFast, SlotsPlain, ("a", 3, 7), {}),
        (SlotsFast, SlotsPlain, ("a",), {"line": 2, "marks": ((0, 2), (5, 3))}),
        (SlotsFast, SlotsPlain, (), {"raw": "x", "line": 9, "offset": 4}),
        (DictFast, DictPlain, ("X",), {}),
        (DictFast, DictPlain, ("X", "1", 5), {}),
        (DictFast, DictPlain, ("X",), {"line": 4}),
    ],
)
def test_fields_set_as_the_dataclass_sets_them(fast: type, plain: type, args: tuple, kwargs: dict) -> None:
    made, expected = fast(*args, **kwargs), plain(*args, **kwargs)
    assert _fields(made) == _fields(expected)
    assert repr(made).split("(", 1)[1] == repr(expected).split("(", 1)[1]
    assert made == fast(*_fields(expected)) and hash(made) == hash(fast(*_fields(expected)))
    assert dataclasses.replace(made, line=42).line == 42 and dataclasses.replace(made, line=42) != made
    assert pickle.loads(pickle.dumps(made)) == made


@pytest.mark.parametrize("cls", [SlotsFast, DictFast])
def test_still_frozen(cls: type) -> None:
    obj = cls("a", 1) if cls is SlotsFast else cls("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.line = 2  # type: ignore[misc]


@pytest.mark.parametrize(("fast", "plain"), [(SlotsFast, SlotsPlain), (DictFast, DictPlain)])
def test_same_parameters_and_the_same_errors(fast: type, plain: type) -> None:
    assert list(inspect.signature(fast).parameters) == list(inspect.signature(plain).parameters)
    assert [p.default for p in inspect.signature(fast).parameters.values()] == [
        p.default for p in inspect.signature(plain).parameters.values()
    ]
    for args, kwargs in [((), {}), (("a", 1, 2, (), "extra"), {}), (("a",), {"nope": 1})]:
        with pytest.raises(TypeError):
            plain(*args, **kwargs)
        with pytest.raises(TypeError):
            fast(*args, **kwargs)


def test_a_parser_class_keeps_its_value_semantics() -> None:
    assert Word("a", 1) == Word("a", 1, 0, ())
    assert {Word("a", 1), Word("a", 1)} == {Word("a", 1)}
    assert Word("a", 1).__init__.__qualname__ == "Word.__init__"


def test_what_it_cannot_do_is_refused() -> None:
    @dataclass
    class NotFrozen:
        a: int

    @dataclass(frozen=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, kw_only=True)
    class KeywordOnly:
        a: int

    @dataclass(frozen=True)
    class NotInInit:
        a: int
        b: int = field(default=0, init=False)

    class NoDataclass:
        pass

    for cls in (NotFrozen, PostInit, Factory, KeywordOnly, NotInInit, NoDataclass):
        with pytest.raises(TypeError, match="fast_init"):
            fast_init(cls)
