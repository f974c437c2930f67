"""Engines: what runs the stages up to scoring over its own data. They share everything else:
the rules, the run state and the tail (`linkage.run.finish`), so each writes the same bytes.

An engine is found by name (`--engine NAME`, `engine=` in the Python API) in a registry:
`local` (`linkage.pipeline.run_local`, this machine) and `spark` (`linkage.engines.spark`).
An engine provides:

- `name`, and `projects_columns`: whether it reads only the columns the rules need from a big
  input file (and its whole rows again when writing the kept records);
- `check(rules, labels=..., checkpoint=...)`: raise `linkage.errors.EngineError`, before any
  work, for a rule or option it does not run;
- `run(mode, tables, rules, *, id_column, progress, model, checkpoint, chunk_rows, labels,
  options)`: the run's `Result`. `options` holds the engine's own settings (Spark's `master`).

A new engine is one module with a class like these, registered with `register_engine`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol

from linkage.errors import InputError

if TYPE_CHECKING:
    from linkage.result import Result
    from linkage.run.state import Mode, Table
    from linkage.settings import Rules


class Engine(Protocol):
    """What `linkage.api` asks of an engine (see the module's docstring)."""

    name: str
    projects_columns: bool

    def check(self, rules: Rules, *, labels: Any = None, checkpoint: Any = None) -> None: ...

    def run(self, mode: Mode, tables: list[Table], rules: Rules, *, id_column: str | None,
            progress: bool | None, model: Any, checkpoint: Any, chunk_rows: int | None,
            labels: Any, options: dict[str, Any]) -> Result: ...


# name -> "module:attribute" of the engine class, imported when the engine is first used (so
# that `import linkage` never imports pyspark).
_ENGINES: dict[str, str] = {
    "local": "linkage.pipeline:LocalEngine",
    "spark": "linkage.engines.spark:SparkEngine",
}


def register_engine(name: str, target: str) -> None:
    """Make `target` ("package.module:ClassName", a class with the `Engine` methods) the
    engine called `name`."""
    _ENGINES[name] = target


def unregister_engine(name: str) -> None:
    """Forget the engine called `name` (one registered for a while, as a test does); the
    built-in engines cannot be removed."""
    if name in ("local", "spark"):
        raise InputError(f"engine {name!r} is built in and cannot be unregistered.")
    _ENGINES.pop(name, None)


def engine_names() -> list[str]:
    """The registered engines' names, in the order they were registered."""
    return list(_ENGINES)


def get_engine(name: str) -> Engine:
    """The engine called `name`; `InputError` naming the registered ones otherwise."""
    target = _ENGINES.get(name)
    if target is None:
        raise InputError(f"engine {name!r} is not one of {', '.join(_ENGINES)}.")
    module, _, attribute = target.partition(":")
    try:
        engine_class = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as missing:
        raise InputError(
            f"engine {name!r} is registered as {target!r}, which cannot be imported "
            f"({type(missing).__name__}: {missing}). Register it as \"package.module:Class\" "
            "with `linkage.engines.register_engine`, with the package installed.") from None
    return engine_class()
