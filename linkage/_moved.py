"""What moved stays importable from where it was, for the scripts that import it from there.

Two kinds of move (issue 15):

- A module that moved whole keeps its old name: `MOVED_MODULES` maps the old name to the new
  one, and a finder on `sys.meta_path` (put there by `linkage/__init__.py`: `install`) answers
  an import of the old name with the new module itself, loaded when the old name is first
  imported and never before, so `import linkage` stays as light as it was. Both names are then
  one module object in `sys.modules` (`linkage.evaluate.score_clusters is
  linkage.measure.evaluate.score_clusters`), and no file is left at the old place. Code in
  linkage imports the new names (`tests/test_imports.py` checks it), so no import edge hides
  behind an old one.
- Names that moved out of a module that stays (the text blockers, from `linkage.text` to
  `linkage.blocking`): the old module gets a module `__getattr__` (PEP 562, `moved_names`)
  that looks a moved name up in its new home when it is first asked for, by the new home's
  dotted name: the old module never imports the new one while it loads. The new one may import
  the old one (the blockers import the algorithms of `linkage.text`), and by the time a moved
  name is asked for, the old module is loaded whole, so no import circle forms at run time.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any

# Old module name -> the module it is now.
MOVED_MODULES = {
    "linkage.calibrate": "linkage.measure.calibrate",
    "linkage.charts": "linkage.report.charts",
    "linkage.evaluate": "linkage.measure.evaluate",
    "linkage.inject": "linkage.measure.recall",
}


class MovedModules:
    """The finder and loader of `MOVED_MODULES`' old names (PEP 451)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a blank module, which `exec_module` swaps for the moved one

    def exec_module(self, module: ModuleType) -> None:
        # The import system returns what `sys.modules` holds under the name once this returns
        # (the way a module replaces itself there), and binds it in the parent package.
        sys.modules[module.__name__] = importlib.import_module(MOVED_MODULES[module.__name__])


FINDER = MovedModules()


def install() -> None:
    """Put the finder of the moved modules first on `sys.meta_path`, once."""
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)


def moved_names(module: str, home: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `module` that finds each of `names` in the module `home`."""
    moved = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name in moved:
            return getattr(importlib.import_module(home), name)
        msg = f"module {module!r} has no attribute {name!r}"
        raise AttributeError(msg)

    return __getattr__
