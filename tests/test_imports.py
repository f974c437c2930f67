"""The module graph of linkage has no import circles, counting imports inside functions too
(an import moved into a function to dodge a circle still ties the two modules together), and
the modules of a run on disk, update and match import no private name of another module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import linkage
from linkage._moved import MOVED_MODULES

ROOT = Path(linkage.__file__).parent
# Left out of the graph: none (the CLI, synth and measure moves of issue 15 are in).
ELSEWHERE: tuple[str, ...] = ()
OWN = ("linkage.run.disk", "linkage.update", "linkage.match", "linkage.forget",
       "linkage.result", "linkage.explain", "linkage.run.compare", "linkage.incremental")


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _target(name: str, modules: dict[str, Path]) -> str | None:
    for old, new in MOVED_MODULES.items():  # an old name is an edge to the module it now is
        if name == old or name.startswith(old + "."):
            name = new + name[len(old):]
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every `import linkage...` and `from linkage... import name`, at any
    depth, except under `if TYPE_CHECKING:` (no import at run time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for part in node.body for n in ast.walk(part)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "linkage" or node.module.startswith("linkage.")):
            out += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(alias.name, "") for alias in node.names
                    if alias.name == "linkage" or alias.name.startswith("linkage.")]
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules if not m.startswith(ELSEWHERE)}
    for module in graph:
        for source, name in _imports(modules[module]):
            full = f"{source}.{name}"
            target = _target(full if full in modules else source, modules)
            if target and target != module and target in graph:
                graph[module].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (a list of modules), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_graph_sees_imports_inside_functions():
    graph = _graph()
    # result.py reads its explanations lazily (inside `Result.explain`): still an edge.
    assert "linkage.explain" in graph["linkage.result"]
    assert "linkage.run.disk" in graph["linkage.result"]
    assert {"linkage.run.disk", "linkage.run.finish", "linkage.result"} <= graph["linkage.update"]


def test_no_import_circles():
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_a_circle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_run_on_disk_update_and_match_import_no_private_names():
    modules = _modules()
    private = [(module, source, name) for module in OWN
               for source, name in _imports(modules[module])
               if name.startswith("_") and not name.startswith("__")
               and name != "_neighbours"]  # blocking's sub-block pairing: issue 15, item 2
    assert private == []


def test_the_old_names_still_import():
    """`linkage.incremental` (the CLI's `update` verb, older scripts) and the local engine's
    module keep the names that moved, as the same objects."""
    import linkage.incremental as incremental
    import linkage.match
    import linkage.pipeline as pipeline
    import linkage.run.compare as compare
    import linkage.run.disk as disk
    import linkage.update

    assert incremental.update is linkage.update.update
    assert incremental.block_new is linkage.update.block_new
    assert incremental.match is linkage.match.match
    assert incremental.assign_ids is disk.assign_ids
    assert pipeline.compare_pairs is compare.compare_pairs
    assert pipeline.weights_of is compare.weights_of
    assert pipeline.run_fingerprint is disk.run_fingerprint
    assert linkage.Result.load.__func__.__qualname__ == "Result.load"


def test_code_imports_moved_modules_by_their_new_names():
    """The old names (`linkage/_moved.py`) are for scripts; linkage, its tests and benchmarks
    import the new ones (but for this file, which checks the old ones), so the graph above
    reads the edges in the files as they are. Hidden folders (the other tools' environments
    under bench/, `bench/.venv-*`) are not the project's code."""
    root = ROOT.parent
    here = Path(__file__).resolve()
    old = [(path.relative_to(root).as_posix(), source, name)
           for folder in ("linkage", "tests", "bench")
           for path in sorted((root / folder).rglob("*.py")) if path.resolve() != here
           and not any(part.startswith(".") for part in path.relative_to(root).parts)
           for source, name in _imports(path)
           for moved in MOVED_MODULES
           if moved in (source, f"{source}.{name}") or source.startswith(moved + ".")]
    assert old == []


@pytest.mark.parametrize("first", ["old", "new"])
def test_moved_modules_keep_their_old_names(first):
    """In a fresh interpreter, whichever name is imported first, each old name of
    `MOVED_MODULES` is the new module object itself (under both names in `sys.modules`, and as
    the attribute of `linkage`), and `import linkage` loads neither."""
    script = f"""
import sys
import linkage
moved = {MOVED_MODULES!r}
loaded = [name for pair in moved.items() for name in pair if name in sys.modules]
assert not loaded, f"loaded by import linkage: {{loaded}}"
for old, new in moved.items():
    child = old.rpartition(".")[2]
    if {first == "old"}:
        exec(f"from linkage import {{child}} as first; import {{new}} as second")
    else:
        exec(f"import {{new}} as first; import {{old}} as second")
    assert first is second is sys.modules[old] is sys.modules[new], old
    assert first.__name__ == first.__spec__.name == new, old
    assert getattr(linkage, child) is first, old
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT.parent, check=False)
    assert done.returncode == 0, done.stderr


def test_the_old_names_of_measure_keep_their_names():
    """`linkage.evaluate`, `linkage.calibrate` and `linkage.inject` give the same functions
    as `linkage.measure`'s modules and the package's exports."""
    import linkage.calibrate
    import linkage.evaluate
    import linkage.inject
    from linkage.inject import inject, measure_recall

    import linkage.measure
    from linkage.measure import calibrate, evaluate, recall

    assert linkage.evaluate.score_clusters is evaluate.score_clusters
    assert linkage.calibrate.calibrate is calibrate.calibrate
    assert (inject, measure_recall) == (recall.inject, recall.measure_recall)
    assert linkage.inject.KINDS is recall.KINDS
    assert {"calibrate", "evaluate", "recall", "wilson", "inject"} <= set(dir(linkage.measure))
    for name in linkage.measure.__all__:
        found = [m for m in (evaluate, calibrate, recall) if hasattr(m, name)]
        assert getattr(linkage.measure, name) is getattr(found[0], name), name
