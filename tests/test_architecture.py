"""docs/ARCHITECTURE.md names only code that exists, and the layering it states holds."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("dsl", "perception", "search", "solver", "benchmarks")
DOTTED = re.compile(r"`((?:%s)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`" % "|".join(PACKAGES))


def documented_names() -> list[str]:
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return sorted({m.group(1) for m in DOTTED.finditer(text) if "." in m.group(1)})


def resolve(name: str):
    """The module or attribute a dotted name points at: the longest importable prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise ModuleNotFoundError(name)


def test_the_page_names_code():
    assert len(documented_names()) >= 30  # the page's path through the code is there to be checked


@pytest.mark.parametrize("name", documented_names())
def test_every_documented_name_resolves(name):
    resolve(name)


def test_a_missing_name_is_caught():
    with pytest.raises(AttributeError):
        resolve("solver.solving.api.no_such_function")
    with pytest.raises((AttributeError, ModuleNotFoundError)):
        resolve("solver.no_such_module")


def _imports(path: Path) -> list[str]:
    """The project modules `path` imports, at its top and inside its functions (a relative import resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in names if name.split(".")[0] in PACKAGES]


def _imported_packages(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _imports(path)}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


@pytest.mark.parametrize("package,forbidden", [
    ("dsl", {"perception", "search", "solver", "benchmarks"}),
    ("perception", {"search", "solver", "benchmarks"}),
    ("search", {"perception", "solver", "benchmarks"}),
    ("solver", {"benchmarks"}),
])
def test_packages_import_only_those_below(package, forbidden):
    for path in sorted((REPO / package).rglob("*.py")):
        wrong = _imported_packages(path) & forbidden
        assert not wrong, f"{path.relative_to(REPO)} imports {sorted(wrong)}"


# The rooms of `solver` (its __init__ says what each owns) and the rooms each may import; `solver.settings` and the
# package's own face are open to all.
ROOMS = {
    "induction": set(),
    "reading": set(),
    "explaining": {"induction"},
    "solving": {"reading", "induction", "explaining"},
    "facts_in": {"induction", "explaining", "solving"},
    "app": {"reading", "induction", "explaining", "solving", "facts_in"},
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "solver" and parts[1] in ROOMS else None


def test_every_solver_module_lives_in_a_room():
    loose = [name for name in _modules() if name.startswith("solver.") and _room(name + ".x") is None
             and name not in {f"solver.{room}" for room in ROOMS} | {"solver.settings"}]
    assert not loose, f"modules outside the rooms of solver: {loose}"


def test_rooms_import_only_the_rooms_below_them_through_their_faces():
    for name, path in _modules().items():
        room = _room(name) or (name.split(".")[1] if name.count(".") == 1 and name.split(".")[1] in ROOMS else None)
        if room is None:
            continue
        for imported in _imports(path):
            other = _room(imported)
            if other is None or other == room:
                continue
            assert other in ROOMS[room], f"{name} imports {imported}: room {room} may import only {sorted(ROOMS[room])}"
            face = importlib.import_module(f"solver.{other}")
            target = imported.split(".")
            assert len(target) == 3 or target[3] in face.__all__, (
                f"{name} imports {imported}: another room is imported through its face (solver.{other})")


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_every_room_says_what_it_owns_and_shows_a_face(room):
    package = importlib.import_module(f"solver.{room}")
    assert package.__doc__ and "May import" in package.__doc__
    assert package.__all__
    for name in package.__all__:
        getattr(package, name)  # the face's names exist


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        found = set()
        for imported in _imports(path):
            while imported and imported not in modules:  # `from package import name`: the package, or its module
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                found.add(imported)
        graph[name] = found
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), a face and its own room's modules left out:
    a face imports its modules only when a name is asked for (`solver.face`)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles():
    graph = _graph()
    faces = {f"solver.{room}" for room in ROOMS} | {"solver"}
    graph = {name: {other for other in found if not (other in faces and name.startswith(other + "."))}
             for name, found in graph.items()}  # a module importing its own package's face: the package is loaded
    assert not _cycles(graph), _cycles(graph)


def test_a_circle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


MAX_LINES = 500  # a module a reader can hold: split one that grows past it


def test_no_module_over_500_lines():
    long = [f"{path.relative_to(REPO)} ({n})" for path in sorted(REPO.rglob("*.py"))
            if not SKIPPED & set(path.relative_to(REPO).parts)
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, f"modules over {MAX_LINES} lines: {long}"


SETTINGS_PACKAGES = ("dsl", "perception", "search", "solver")


def _top_level_assignments(path: Path) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each module-level UPPER_CASE assignment."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                found += [(e.id, node.lineno, node.end_lineno) for e in elements
                          if isinstance(e, ast.Name) and e.id.isupper()]
    return found


@pytest.mark.parametrize("package", SETTINGS_PACKAGES)
def test_every_setting_says_what_it_is(package):
    path = REPO / package / "settings.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    settings = _top_level_assignments(path)
    assert settings
    for name, first, last in settings:
        commented = any("#" in line for line in lines[first - 1:last]) or lines[first - 2].startswith("#")
        assert commented, f"{package}/settings.py: {name} has no comment"


@pytest.mark.parametrize("package", SETTINGS_PACKAGES)
def test_settings_are_defined_once(package):
    """A module imports a setting from its package's settings module; it does not define its own copy."""
    names = {name for name, _, _ in _top_level_assignments(REPO / package / "settings.py")}
    for path in sorted((REPO / package).rglob("*.py")):
        if path.name != "settings.py":
            again = names & {name for name, _, _ in _top_level_assignments(path)}
            assert not again, f"{path.relative_to(REPO)} defines {sorted(again)} (they live in {package}/settings.py)"


# A path of one machine, e.g. under /work, /home, /tmp or /root (spelt in pieces so that this file passes).
MACHINE_PATH = re.compile(rb"/(?:" + b"|".join([b"wo" + b"rk", b"ho" + b"me", b"tm" + b"p", b"ro" + b"ot"]) + rb")/")
SKIPPED = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}


def test_no_path_of_a_particular_machine():
    found = [str(path.relative_to(REPO)) for path in sorted(REPO.rglob("*"))
             if path.is_file() and not SKIPPED & set(path.relative_to(REPO).parts)
             and not path.name.endswith((".pyc", ".nbi", ".nbc")) and MACHINE_PATH.search(path.read_bytes())]
    assert not found, f"paths of a particular machine in {found}"
