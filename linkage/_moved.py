"""Names that moved to another module and stay importable from their old one, for the scripts
that import them from there (issue 15 moved the text blockers from `linkage.text` to
`linkage.blocking`).

The old module gets a module `__getattr__` (PEP 562) that looks a moved name up in its new
home when it is first asked for, by the new home's dotted name: the old module never imports
the new one while it loads. The new one may import the old one (the blockers import the
algorithms of `linkage.text`), and by the time a moved name is asked for, the old module is
loaded whole, so no import circle forms at run time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any


def moved_names(module: str, home: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `module` that finds each of `names` in the module `home`."""
    moved = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name in moved:
            return getattr(importlib.import_module(home), name)
        msg = f"module {module!r} has no attribute {name!r}"
        raise AttributeError(msg)

    return __getattr__
