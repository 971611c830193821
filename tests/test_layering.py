"""How the packages may depend on each other (issue: the core/driver boundary; docs/architecture.md).

* No core imports another core's internals: the startd, negotiator, schedd, collector
  and defrag cores may use one another only through the package itself
  (``htcpool.startd``), never a module inside it; what they say to one another is in
  ``htcpool.protocol``.
* The runtime has no import circle, not even one hidden by an import inside a function.
* Runtime code does not reach into another object's private members (``other._x``):
  what one service needs of another part is public.

Each rule is checked on the sources with ``ast``; a failure names file and line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import htcpool

SRC = Path(htcpool.__file__).parent
CORES = ("startd", "negotiator", "schedd", "collector", "defrag")


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    root = SRC / package
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield "htcpool." + ".".join(parts), path


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _imports(path: Path, module: str) -> Iterator[tuple[str, int]]:
    """Every htcpool module ``path`` imports (``from X import name`` counts X.name when that is a
    module), outside ``if TYPE_CHECKING`` blocks, with its line."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_lines(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).rstrip(".")
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                target = SRC.parent / Path(*candidate.split("."))
                yield (candidate if target.with_suffix(".py").exists() or target.is_dir() else base), node.lineno


def test_no_core_imports_another_cores_internals() -> None:
    problems = []
    for core in CORES:
        if not (SRC / core).is_dir():
            continue
        for module, path in _modules(core):
            for name, line in _imports(path, module):
                parts = name.split(".")
                if len(parts) > 2 and parts[0] == "htcpool" and parts[1] in CORES and parts[1] != core:
                    problems.append(f"{path.relative_to(SRC)}:{line} imports {name}")
    assert not problems, "a core reaches into another core:\n" + "\n".join(problems)


def test_the_runtime_has_no_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    modules = dict(_modules("runtime"))
    for module, path in modules.items():
        edges = graph.setdefault(module, set())
        for name, line in _imports(path, module):
            if name in modules and name != module:
                edges.add(name)
                where[(module, name)] = f"{path.relative_to(SRC)}:{line}"
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for nxt in sorted(graph.get(module, ())):
            if state.get(nxt) == 1:
                return [*path, module, nxt]
            if state.get(nxt) is None:
                found = visit(nxt, [*path, module])
                if found:
                    return found
        state[module] = 2
        return None

    for module in sorted(graph):
        if state.get(module) is None:
            cycle = visit(module, [])
            if cycle:
                start = cycle.index(cycle[-1])
                loop = cycle[start:]
                steps = [where[(a, b)] for a, b in zip(loop, loop[1:], strict=False)]
                raise AssertionError("import circle: " + " -> ".join(loop) + "\n" + "\n".join(steps))


def _members_used_inside_their_class(tree: ast.Module) -> set[int]:
    """Ids of attribute nodes inside a class body that name a private member of that class
    (another instance of the same class, as in a classmethod that builds one)."""
    allowed: set[int] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        members = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        members |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.value.id == "self"}
        allowed |= {id(n) for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr in members}
    return allowed


def test_runtime_code_uses_only_public_members_of_other_objects() -> None:
    problems = []
    for _, path in _modules("runtime"):
        tree = ast.parse(path.read_text())
        own = {"self", "cls", "os"} | {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        inside = _members_used_inside_their_class(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in inside:
                continue
            name = node.attr
            if not name.startswith("_") or name.startswith("__"):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in own:  # its own class (dispatch tables), os._exit
                continue
            problems.append(f"{path.relative_to(SRC)}:{node.lineno} uses {ast.unparse(node)}")
    assert not problems, "private members used from outside:\n" + "\n".join(problems)


def test_no_function_is_over_eighty_lines() -> None:
    """Functions of one step each (STYLE: small functions; the boundary issue split the long ones)."""
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_param_table.py":  # generated data
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 80:
                    problems.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} is {length} lines")
    assert not problems, "\n".join(problems)
