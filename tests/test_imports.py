"""The module graph of linkage has no import circles, counting imports inside functions too
(an import moved into a function to dodge a circle still ties the two modules together), and
the modules of a run on disk, update and match import no private name of another module."""

from __future__ import annotations

import ast
from pathlib import Path

import linkage

ROOT = Path(linkage.__file__).parent
# Left out of the graph: none (the CLI, synth and inject moves of issue 15 are in).
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
