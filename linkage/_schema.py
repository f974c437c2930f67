"""One schema for Python and YAML.

Every configurable part of `linkage` (normalizers, blockers, comparisons, scorers, the rules
themselves) subclasses `Configurable`. Its constructor arguments are its YAML keys, so the same
type hints validate a Python call and a rules file, and `to_dict()` writes back what `from_dict()`
reads. Errors name the place: `rules/customers.yaml: blocking[1].keys[0] must be ... Got ...`.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import inspect
import math
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal, Union

from linkage.errors import RulesError

# Inside `explicit_defaults()`, `to_dict()` writes every argument, defaults too.
EXPLICIT: contextvars.ContextVar[bool] = contextvars.ContextVar("explicit", default=False)


@contextlib.contextmanager
def explicit_defaults() -> Iterator[None]:
    """Make `to_dict()` write every argument, so that the rules a run wrote mean the same to
    a version of `linkage` whose defaults differ."""
    token = EXPLICIT.set(True)
    try:
        yield
    finally:
        EXPLICIT.reset(token)


def is_default(param: inspect.Parameter, value: Any) -> bool:
    """Whether `to_dict()` leaves this argument out: it holds its default, and defaults are
    not being written (`explicit_defaults`)."""
    return (not EXPLICIT.get() and param.default is not inspect.Parameter.empty
            and plain(value) == plain(param.default))


class SchemaViolation(RulesError):
    """A constructor argument broke its constraint; `from_dict` adds the path in the file."""

    def __init__(self, field: str, expected: str, got: Any, owner: str = ""):
        self.field = field
        self.expected = expected
        self.got = got
        where = f"`{owner}.{field}`" if owner else f"`{field}`"
        super().__init__(f"{where} {expected}. Got {got!r} instead.")


def check(condition: bool, owner: object, field: str, expected: str, got: Any) -> None:
    """Raise `SchemaViolation` unless `condition` holds; `expected` reads "must be ..."."""
    if not condition:
        raise SchemaViolation(field, expected, got, type(owner).__name__)


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if hint is Any:
        return "any value"
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(hint))
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if origin in (list, Sequence, tuple):
        args = typing.get_args(hint)
        return f"a list of {_describe(args[0])}" if args else "a list"
    if origin in (dict, Mapping):
        args = typing.get_args(hint)
        return f"a mapping of {_describe(args[1])}" if args else "a mapping"
    if hint is type(None):
        return "null"
    if isinstance(hint, type) and issubclass(hint, Configurable):
        return f"a {hint.__name__} mapping"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        hint, getattr(hint, "__name__", str(hint))
    )


class _Mismatch(Exception):
    def __init__(self, path: str, expected: str, got: Any):
        self.path, self.expected, self.got = path, expected, got


def coerce(value: Any, hint: Any, path: str) -> Any:
    """Check `value` against a type hint and convert YAML shapes (lists, dicts) to Python ones."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return coerce(value, option, path)
            except _Mismatch as err:
                errors.append(err)
            except SchemaViolation:
                raise
        deepest = max(errors, key=lambda e: len(e.path))
        if deepest.path != path:
            raise deepest
        raise _Mismatch(path, _describe(hint), value)
    if origin is Literal:
        if value in typing.get_args(hint):
            return value
        raise _Mismatch(path, _describe(hint), value)
    if origin in (list, Sequence, tuple):
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise _Mismatch(path, _describe(hint), value)
        (item,) = typing.get_args(hint)[:1] or (Any,)
        return [coerce(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise _Mismatch(path, _describe(hint), value)
        _, item = typing.get_args(hint) or (str, Any)
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Mismatch(f"{path}.{k}", "a string key", k)
            out[k] = coerce(v, item, f"{path}.{k}")
        return out
    if isinstance(hint, type) and issubclass(hint, Configurable):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise _Mismatch(path, _describe(hint), value)
        return hint._from_mapping(value, path)
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            # .nan and .inf are floats to YAML, but compare false or beyond every score.
            if not math.isfinite(value):
                raise _Mismatch(path, "a finite number (not .nan or .inf)", value)
            return float(value)
        raise _Mismatch(path, "a number", value)
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Mismatch(path, "an integer", value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch(path, "true or false", value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Mismatch(path, "a string", value)
    raise TypeError(f"unsupported schema type {hint!r} at {path}")


def did_you_mean(word: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


class Configurable:
    """Base of every part that can be written in a rules file.

    Subclasses take their settings as constructor arguments, store each under the same name,
    and validate with `check`. Polymorphic families set `family` on their base class and
    `kind` (the YAML `type:` value) on each registered subclass.
    """

    family: ClassVar[str | None] = None
    kind: ClassVar[str | None] = None
    default_kind: ClassVar[str | None] = None
    _registry: ClassVar[dict[str, type[Configurable]]]
    # Extra keyword options that are not constructor arguments (see `Normalize`).
    open_options: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            cls._registry = {}
        kind = cls.__dict__.get("kind")
        if kind is not None:
            cls._registry[kind] = cls

    @classmethod
    def _params(cls) -> dict[str, inspect.Parameter]:
        sig = inspect.signature(cls.__init__)
        return {
            n: p
            for n, p in sig.parameters.items()
            if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        }

    @classmethod
    def _hints(cls) -> dict[str, Any]:
        return typing.get_type_hints(cls.__init__)

    @classmethod
    def _from_mapping(cls, data: Mapping[str, Any], path: str) -> Configurable:
        target = cls
        if cls.kind is None and hasattr(cls, "_registry"):
            kind = data.get("type", cls.default_kind)
            if kind is None:
                raise _Mismatch(f"{path}.type", "one of " + ", ".join(sorted(cls._registry)), None)
            if kind not in cls._registry:
                hint = did_you_mean(str(kind), sorted(cls._registry))
                raise _Mismatch(
                    f"{path}.type",
                    "one of " + ", ".join(repr(k) for k in sorted(cls._registry)) + "." + hint,
                    kind,
                )
            target = cls._registry[kind]
        params = target._params()
        hints = target._hints()
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key == "type" and target.kind is not None:
                continue
            if key not in params:
                if target.open_options:
                    extra[key] = value
                    continue
                allowed = ", ".join(sorted(params))
                raise _Mismatch(
                    f"{path}.{key}",
                    f"is not a known key; allowed keys are {allowed}.{did_you_mean(key, params)}",
                    key,
                )
            kwargs[key] = coerce(value, hints.get(key, Any), f"{path}.{key}")
        missing = [
            n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in kwargs
        ]
        if missing:
            raise _Mismatch(f"{path}.{missing[0]}", "is required (it is missing)", None)
        try:
            return target(**kwargs, **extra)
        except SchemaViolation as err:
            raise _Mismatch(f"{path}.{err.field}", err.expected, err.got) from None
        except _Mismatch:
            raise
        except RulesError as err:
            raise _Mismatch(path, str(err), data) from None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "rules") -> Configurable:
        """Build from a mapping (parsed YAML/JSON); errors name `source` and the key path."""
        try:
            return cls._from_mapping(data, "") if isinstance(data, Mapping) else _fail(cls, data)
        except _Mismatch as err:
            path = err.path.lstrip(".") or "(top level)"
            expected = err.expected
            if not expected.startswith(("must", "is ", "required")):
                expected = f"must be {expected}"
            if not expected.endswith((".", "?", "!")):
                expected += "."
            got = "" if err.got is None and "missing" in expected else f" Got {err.got!r} instead."
            raise RulesError(f"{source}: {path} {expected}{got}") from None

    def to_dict(self) -> dict[str, Any]:
        """The arguments that differ from their defaults, as plain YAML-ready values."""
        out: dict[str, Any] = {}
        if self.kind is not None:
            out["type"] = self.kind
        for name, param in self._params().items():
            value = self._param_value(name)
            if is_default(param, value):
                continue
            out[name] = plain(value)
        return out

    def _param_value(self, name: str) -> Any:
        """The value `to_dict` writes for the argument `name`: the attribute, unless a
        subclass keeps learned state under that name (see FellegiSunter.move_threshold)."""
        return getattr(self, name)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "type")
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(repr(self))


def _fail(cls: type, data: Any) -> Any:
    raise _Mismatch("", f"a mapping of {cls.__name__} settings", data)


def plain(value: Any) -> Any:
    if isinstance(value, Configurable):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value
