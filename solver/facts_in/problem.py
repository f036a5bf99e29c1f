"""Bongard problems given as facts: loading, validation, the language bias, and the facts for clingo.

A problem is `{"name": ..., "A": [image, ...], "B": [image, ...], "queries": [image, ...]}`; an image is a
list of ground ASP facts as strings (`"cls(o1,person)"`, `"rel(o1,ride,o2)"`), any predicates of arity
0 to 3. Object ids are local to an image: `o1` in one image has nothing to do with `o1` in another.

Objects: the arguments of `obj/1` facts when the problem has any; otherwise every value that is the first
argument of a fact of arity 2 or 3 in its image (declare objects with `obj/1` to be sure).

The language bias is derived from the facts, as mode declarations in the style of Popper's and ILASP's:
a `Mode` per predicate and arity says which argument positions hold objects (a position where some image
has one of its objects: a rule puts a variable there) and which hold constants (a rule names the value).
The induction's literals (solver/encodings/facts_features.lp) are built only from these modes.

Python writes only facts (`write_problem`): images are named by role as for LOGO problems (a(0..),
b(0..), q(0..)); per image its objects, and each fact reified as `fact(I, F, P, N)` with its arguments
`arg(I, F, K, V)`; per mode `objpos(P, N, K)`; `declares_objects(obj)`; and each image's bit in the
masks that name sets of images, `image_bit(I, C, W)`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import clingo

from dsl.limits import LimitError, loads_limited
from solver.induction import Role, image_symbol

MAX_ARITY = 3
OBJECT_PREDICATE = "obj"
CHUNK_BITS = 30  # images per bit mask (clingo's numbers are 32-bit)
NUMBERS = tuple(clingo.Number(n) for n in range(64))  # made once: clingo symbols are slow to make


class FactsError(ValueError):
    """A problem given as facts that cannot be read (the message names the file and the fault)."""


@dataclass(frozen=True, slots=True)
class Mode:
    """A mode declaration: predicate/arity, and the (1-based) argument positions that hold objects."""

    predicate: str
    arity: int
    objects: tuple[int, ...]

    @property
    def text(self) -> str:
        """Popper / ILASP style: `rel(+obj, #const, +obj)`."""
        args = ", ".join("+obj" if k in self.objects else "#const" for k in range(1, self.arity + 1))
        return f"{self.predicate}({args})" if self.arity else self.predicate


@dataclass(frozen=True, slots=True)
class Fact:
    """One ground fact, its parts read once from its clingo symbol."""

    symbol: clingo.Symbol
    name: str
    arguments: tuple[clingo.Symbol, ...]
    text: str

    @staticmethod
    def of(symbol: clingo.Symbol) -> "Fact":
        return Fact(symbol, symbol.name, tuple(symbol.arguments), str(symbol))


@dataclass(frozen=True, slots=True)
class FactImage:
    """One image: its facts (parsed) and its objects."""

    facts: tuple[Fact, ...]
    objects: frozenset[clingo.Symbol]

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(f.text for f in self.facts)


@dataclass(frozen=True, slots=True)
class FactsProblem:
    name: str
    context_a: tuple[FactImage, ...]
    context_b: tuple[FactImage, ...]
    queries: tuple[FactImage, ...]
    modes: tuple[Mode, ...]

    def images(self) -> list[tuple[Role, int, FactImage]]:
        groups = ((Role.A, self.context_a), (Role.B, self.context_b), (Role.QUERY, self.queries))
        return [(role, index, image) for role, group in groups for index, image in enumerate(group)]

    def image(self, key: tuple[str, int]) -> FactImage:
        group = {Role.A.value: self.context_a, Role.B.value: self.context_b, Role.QUERY.value: self.queries}
        return group[key[0]][key[1]]


def _quiet(code, message) -> None:
    """clingo's parser messages: the error raised says what is wrong."""


def _checked(symbol: clingo.Symbol, text: str, where: str) -> Fact:
    if symbol.type is not clingo.SymbolType.Function or not symbol.name:
        raise FactsError(f"{where}: {_shown(text)} is not a predicate (a number, a string or a tuple)")
    fact = Fact.of(symbol)
    if len(fact.arguments) > MAX_ARITY:
        raise FactsError(f"{where}: {_shown(text)} has {len(fact.arguments)} arguments; at most {MAX_ARITY} are read")
    return fact


def _shown(text: str, limit: int = 80) -> str:
    """A fact in a message: its repr, cut to `limit` characters."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def parse_fact(text, where: str) -> Fact:
    """One ground fact: a predicate with 0..3 arguments, e.g. `rel(o1,ride,o2)`."""
    if not isinstance(text, str):
        raise FactsError(f"{where}: a fact must be a string, got {type(text).__name__}")
    try:
        symbol = clingo.parse_term(text.strip().removesuffix("."), logger=_quiet)
    except (RuntimeError, UnicodeError):  # clingo's parser fails; its message can be cut inside a character
        raise FactsError(f"{where}: {_shown(text)} does not parse as a ground fact") from None
    return _checked(symbol, text, where)


def _one_term(text: str) -> bool:
    """The text has balanced brackets and no comma outside them (outside strings): it cannot run into
    its neighbours when the facts of an image are parsed as one tuple."""
    depth, quoted, escaped = 0, False, False
    for char in text:
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
        elif char == "," and depth == 0:
            return False
    return depth == 0 and not quoted


def parse_image(texts: list, where: str) -> list[Fact]:
    """An image's facts, parsed in one go as a tuple (fast); fact by fact when that fails, to name the
    fault."""
    if texts and all(isinstance(text, str) and _one_term(text) for text in texts):
        try:
            whole = clingo.parse_term("(" + ",".join(t.strip().removesuffix(".") for t in texts) + ",)", logger=_quiet)
        except (RuntimeError, UnicodeError):
            whole = None
        if whole is not None and len(whole.arguments) == len(texts):
            return [_checked(symbol, text, f"{where}, fact {k}")
                    for k, (symbol, text) in enumerate(zip(whole.arguments, texts))]
    return [parse_fact(text, f"{where}, fact {k}") for k, text in enumerate(texts)]


def _objects(facts: Sequence[Fact], declared: bool) -> frozenset[clingo.Symbol]:
    if declared:
        return frozenset(f.arguments[0] for f in facts if f.name == OBJECT_PREDICATE and len(f.arguments) == 1)
    return frozenset(f.arguments[0] for f in facts if len(f.arguments) >= 2)


def derive_modes(images: Sequence[FactImage]) -> tuple[Mode, ...]:
    """A mode per predicate/arity: a position holds objects if some image has one of its objects there."""
    positions: dict[tuple[str, int], set[int]] = {}
    for image in images:
        for fact in image.facts:
            seen = positions.setdefault((fact.name, len(fact.arguments)), set())
            seen.update(k for k, arg in enumerate(fact.arguments, 1) if arg in image.objects)
    return tuple(Mode(name, arity, tuple(sorted(objects))) for (name, arity), objects in sorted(positions.items()))


def _side(data: dict, key: str, source: str, required: bool) -> list[list[Fact]]:
    images = data.get(key, [] if not required else None)
    if not isinstance(images, list):
        raise FactsError(f"{source}: {key!r} must be a list of images (lists of fact strings)")
    if required and not images:
        raise FactsError(f"{source}: {key!r} needs at least one image")
    parsed = []
    for index, image in enumerate(images):
        if not isinstance(image, list):
            raise FactsError(f"{source}: {key} image {index} must be a list of fact strings")
        parsed.append(parse_image(image, f"{source}: {key} image {index}"))
    return parsed


def problem_from_dict(data, source: str = "<problem>") -> FactsProblem:
    """Validate and read a problem given as a dict (the JSON format); errors name `source`."""
    if not isinstance(data, dict):
        raise FactsError(f"{source}: expected a JSON object with keys A, B and queries")
    sides = [_side(data, key, source, required) for key, required in (("A", True), ("B", True), ("queries", False))]
    declared = any(f.name == OBJECT_PREDICATE and len(f.arguments) == 1 for side in sides for img in side for f in img)
    built = [tuple(FactImage(tuple({f.symbol: f for f in img}.values()), _objects(img, declared)) for img in side)
             for side in sides]
    name = data.get("name", Path(source).stem)
    modes = derive_modes([image for side in built for image in side])
    return FactsProblem(str(name), built[0], built[1], built[2], modes)


def load_problem(path: Path | str) -> FactsProblem:
    path = Path(path)
    try:
        data = loads_limited(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise FactsError(f"{path}: cannot read: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FactsError(f"{path}: not JSON: {error}") from None
    except LimitError as error:  # nested too deep to read without running out of stack
        raise FactsError(f"{path}: {error}") from None
    return problem_from_dict(data, str(path))


def as_problem(problem) -> FactsProblem:
    """A FactsProblem from itself, a dict of the JSON format, or the path of a JSON file."""
    if isinstance(problem, FactsProblem):
        return problem
    if isinstance(problem, dict):
        return problem_from_dict(problem)
    if isinstance(problem, (str, Path)):
        return load_problem(problem)
    raise FactsError(f"cannot read a problem given as facts from {type(problem).__name__}")


def _image_atoms(role: Role, index: int, image: FactImage) -> list[clingo.Symbol]:
    name = image_symbol(role, index)
    membership = {Role.A: "in_a", Role.B: "in_b", Role.QUERY: "query"}[role]
    atoms = [clingo.Function("image", [name]), clingo.Function(membership, [name])]
    atoms += [clingo.Function("object", [name, obj]) for obj in sorted(image.objects)]
    for number, fact in enumerate(image.facts):
        fid = NUMBERS[number] if number < len(NUMBERS) else clingo.Number(number)
        predicate = clingo.Function(fact.name)
        atoms.append(clingo.Function("fact", [name, fid, predicate, NUMBERS[len(fact.arguments)]]))
        atoms += [clingo.Function("arg", [name, fid, NUMBERS[k], value]) for k, value in enumerate(fact.arguments, 1)]
    return atoms


def image_bits(problem: FactsProblem) -> dict[clingo.Symbol, tuple[int, int]]:
    """Each image's place in the images' bit masks: (chunk, bit), CHUNK_BITS images to a chunk."""
    return {image_symbol(role, index): divmod(k, CHUNK_BITS) for k, (role, index, _) in enumerate(problem.images())}


def bit_atoms(problem: FactsProblem) -> list[clingo.Symbol]:
    return [clingo.Function("image_bit", [name, clingo.Number(chunk), clingo.Number(1 << bit)])
            for name, (chunk, bit) in image_bits(problem).items()]


def write_problem(control: clingo.Control, problem: FactsProblem) -> int:
    """Add the problem's facts to `control` through its backend (before grounding); returns their number."""
    atoms = [clingo.Function("objpos", [clingo.Function(m.predicate), clingo.Number(m.arity), clingo.Number(k)])
             for m in problem.modes for k in m.objects]
    atoms.append(clingo.Function("declares_objects", [clingo.Function(OBJECT_PREDICATE)]))
    atoms += bit_atoms(problem)
    for role, index, image in problem.images():
        atoms += _image_atoms(role, index, image)
    with control.backend() as backend:
        for atom in atoms:
            backend.add_rule([backend.add_atom(atom)])
    return len(atoms)
