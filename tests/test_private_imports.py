"""No module of linkage reaches into another's privates (issue 15).

A name used by another module is public in its module; a package exports in its `__init__.py`
what other packages use of its private (`_x.py`) modules. Read with `ast`, so imports inside
functions count too, as does `module._name` through an imported linkage module.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Crossings in files other work was rewriting when this test was written (issue 15: the CLI
# package, the run on disk, `update` and `match`). Each entry is (importing file, module, name).
# Remove an entry when its file stops importing it; the list should end empty.
ALLOWED: set[tuple[str, str, str]] = set()  # nothing reaches into another module's privates

# Private attributes read on objects of another module, (file, attribute): as above.
ALLOWED_ATTRIBUTES: set[tuple[str, str]] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path) -> tuple[str, str]:
    """The dotted name of the module in `path`, and of the package it belongs to."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _outside(module: str, package: str) -> bool:
    """Whether `module` is, or lies in, a private module or package that `package` is not in."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            return not (package == owner or package.startswith(owner + "."))
    return False


def crossings(path: Path, text: str | None = None) -> set[tuple[str, str, str]]:
    """(file, module, name) for each private name or private module the module at `path`
    (with the source `text`, default the file's) reaches into."""
    module, package = _module_of(path)
    where = path.relative_to(ROOT).as_posix()
    found = set()
    imported = {}  # local name -> linkage module it is bound to
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "linkage":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _is_module(full):
                    imported[alias.asname or alias.name] = full
                    if _outside(full, package):
                        found.add((where, source, alias.name))
                    continue
                if _outside(source, package) or (_private(alias.name) and source != module):
                    found.add((where, source, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "linkage":
                    if alias.asname:
                        imported[alias.asname] = alias.name
                    if _outside(alias.name, package):
                        found.add((where, alias.name, ""))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in imported
                and imported[node.value.id] != module):
            found.add((where, imported[node.value.id], node.attr))
    return found


@functools.cache
def _all_crossings() -> frozenset[tuple[str, str, str]]:
    found = set()
    for path in sorted((ROOT / "linkage").rglob("*.py")):
        found |= crossings(path)
    return frozenset(found)


def test_no_module_imports_a_private_name_or_module_of_another():
    unexpected = sorted(_all_crossings() - ALLOWED)
    assert not unexpected, (
        "These reach into another module's privates: make the name public in its module (and "
        "export it from the package's __init__.py when it lives in a private module), then "
        "import it from there:\n" + "\n".join(f"  {f}: from {m} import {n}"
                                                for f, m, n in unexpected))


def test_the_allow_list_holds_only_crossings_that_still_exist():
    stale = sorted(ALLOWED - _all_crossings())
    assert not stale, ("These no longer happen: remove them from ALLOWED in "
                       "tests/test_private_imports.py:\n" + "\n".join(map(str, stale)))


def foreign_attributes(path: Path, text: str | None = None) -> set[tuple[str, str]]:
    """(file, attribute) for each private attribute that the module at `path` reads on an
    object other than `self` or `cls` and that nothing in the module defines: a name the
    object's own module keeps to itself (`scorer._bias()`, `column._cache`)."""
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    where = path.relative_to(ROOT).as_posix()
    return {(where, node.attr) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and _private(node.attr)
            and node.attr not in defined
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))}


@functools.cache
def _all_foreign_attributes() -> frozenset[tuple[str, str]]:
    found = set()
    for path in sorted((ROOT / "linkage").rglob("*.py")):
        found |= foreign_attributes(path)
    return frozenset(found)


def test_no_module_reads_a_private_attribute_of_another_modules_objects():
    unexpected = sorted(_all_foreign_attributes() - ALLOWED_ATTRIBUTES)
    assert not unexpected, (
        "These read a private attribute of an object from another module: give its class a "
        "public method or property for it:\n" + "\n".join(f"  {f}: .{a}" for f, a in unexpected))
    stale = sorted(ALLOWED_ATTRIBUTES - _all_foreign_attributes())
    assert not stale, f"remove from ALLOWED_ATTRIBUTES: {stale}"


def test_the_scan_sees_each_kind_of_crossing():
    """The scan itself: a private name, a private module from outside its package, a relative
    import, an import inside a function and `module._name` are each found; a private module
    from inside its own package and a public name are not."""
    source = (
        "from linkage.keep import _blank, date_key\n"
        "from linkage.normalize._encoded import EncodedColumn\n"
        "from ._blockers import Blocker\n"
        "from . import _union\n"
        "from linkage import api\n"
        "def f():\n"
        "    from ..text.minhash import _chunks\n"
        "    return api._native\n"
    )
    where = "linkage/blocking/_probe.py"  # a module that is not there: only its place counts
    found = crossings(ROOT / where, source)
    assert found == {
        (where, "linkage.keep", "_blank"),
        (where, "linkage.normalize._encoded", "EncodedColumn"),
        (where, "linkage.text.minhash", "_chunks"),
        (where, "linkage.api", "_native"),
    }
    attributes = (
        "class A:\n"
        "    def __init__(self):\n"
        "        self._own = 1\n"
        "    def f(self, other, scorer):\n"
        "        return self._own + other._own + scorer._bias() + self._inherited\n"
    )
    assert foreign_attributes(ROOT / where, attributes) == {(where, "_bias")}
