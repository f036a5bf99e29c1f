"""Problem generation as the official Bongard-LOGO generators do it (spec §3), plus pose sampling (§2.6).

Three kinds of problem, each 7 positive and 7 negative image programs with one pose per shape:
  free-form (`ff`)  random shapes built from a move library; negatives change exactly one action;
  basic (`bd`)      one or two human-designed shapes; a negative replaces one by a shape of its super class;
  abstract (`hd`)   one library shape per image; the concept is one attribute or a pair of attributes.

Randomness comes from a `numpy.random.Generator` per problem, seeded by (seed, kind, index), so a dataset
is the same whatever the number of workers. The RNG call order differs from the official (legacy NumPy)
one: the distributions are the official ones, the images are not byte-identical (spec §3.5).
"""

from __future__ import annotations

import enum
import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from dsl.free_form import (FREE_FORM_SETTINGS, free_form_negative, free_form_negative_change,
                           sample_free_form_shape)
from dsl.library import ATTRIBUTES, load_library, look_alikes
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, ImageProgram, Pose, Shape, StrokeType

IMAGES_PER_SIDE = 7
PLACEMENT_TRIALS = 300
BASIC_PROBLEMS = 4000
BASIC_PAIR_SEED = 123
ABSTRACT_POOL_MIN = 10


class ProblemKind(enum.Enum):
    """The three problem types and the folder / name prefix of each (spec §3.1, §4.1)."""

    FREE_FORM = "ff"
    BASIC = "bd"
    ABSTRACT = "hd"

    @property
    def scale_range(self) -> tuple[float, float]:
        """Painter scaling-factor range per shape (spec §2.6)."""
        return {"ff": (80.0, 140.0), "bd": (150.0, 260.0), "hd": (150.0, 320.0)}[self.value]

    @property
    def seed_code(self) -> int:
        return {"ff": 1, "bd": 2, "hd": 3}[self.value]


@dataclass(frozen=True, slots=True)
class GeneratedProblem:
    """One generated problem: image programs and the pose of every shape of every image."""

    name: str
    kind: ProblemKind
    positives: tuple[ImageProgram, ...]
    negatives: tuple[ImageProgram, ...]
    positive_poses: tuple[tuple[Pose, ...], ...]
    negative_poses: tuple[tuple[Pose, ...], ...]
    concept: tuple = ()  # ff: action counts per shape; bd: shape names; hd: attribute names
    changes: tuple = ()  # per negative, what makes it one: ActionChange, ShapeSwap or AttributeLoss


@dataclass(frozen=True, slots=True)
class ShapeSwap:
    """A basic negative: the concept's shape `original` (slot `slot` of the concept) drawn as `replacement`,
    another shape of its super class."""

    slot: int
    original: str
    replacement: str


@dataclass(frozen=True, slots=True)
class AttributeLoss:
    """An abstract negative: the library shape drawn, and the concept attributes it lacks (value 0)."""

    shape: str
    lacks: tuple[str, ...]


def problem_rng(seed: int, kind: ProblemKind, index: int) -> np.random.Generator:
    """The generator of problem `index` of `kind` in a dataset made with `seed`."""
    return np.random.default_rng(np.random.SeedSequence([seed, kind.seed_code, index]))


def problem_name(kind: ProblemKind, concept: tuple, number: int) -> str:
    """`ff_nact4_0000`, `ff_nact2_5_0000`, `bd_<s>-<s>_0000`, `hd_<a>-<a>_0000` (spec §3.1)."""
    if kind is ProblemKind.FREE_FORM:
        body = "nact" + "_".join(str(k) for k in concept)
    else:
        body = "-".join(concept)
    return f"{kind.value}_{body}_{number:04d}"


# --------------------------------------------------------------------------------------------------
# Pose sampling and placement (spec §2.6)


def sample_pose(rng: np.random.Generator, n_shapes: int, scale_range: tuple[float, float]) -> tuple[Pose, ...]:
    """One trial of the official auto-placement: start points and headings, then one scale per shape."""
    if n_shapes == 1:
        rho, q = rng.uniform(0.0, 360.0), rng.uniform(1.0, 250.0)
        starts = [(q * math.cos(math.radians(rho)), q * math.sin(math.radians(rho)), rho)]
    elif n_shapes == 2:
        starts = _two_starts(rng)
    else:
        raise ValueError(f"the painter places 1 or 2 shapes, got {n_shapes}")
    scales = rng.uniform(scale_range[0], scale_range[1], size=n_shapes)
    return tuple(Pose(float(x), float(y), float(h), float(s)) for (x, y, h), s in zip(starts, scales))


def _two_starts(rng: np.random.Generator) -> list[tuple[float, float, float]]:
    rho = rng.uniform(0.0, 360.0)
    q = rng.uniform(125.0, 250.0)
    x1, y1 = q * math.cos(math.radians(rho)), q * math.sin(math.radians(rho))
    while True:
        x2, y2 = rng.uniform(-300.0, 300.0, size=2)
        if math.hypot(x2 - x1, y2 - y1) >= 300.0 and abs(x2 - x1) >= 45.0 and abs(y2 - y1) >= 45.0:
            break
    return [(x1, y1, rho), (float(x2), float(y2), rng.uniform(rho - 60.0, rho + 60.0))]


def place(
    rng: np.random.Generator, program: ImageProgram, scale_range: tuple[float, float], trials: int = PLACEMENT_TRIALS
) -> tuple[Pose, ...]:
    """Poses of the first valid trial (every checkpoint inside ±360); the last trial if none is valid.
    The checkpoints do not depend on stroke types, so the trials draw the program with normal strokes."""
    skeleton = program.with_strokes(StrokeType.NORMAL)
    for _ in range(trials):
        poses = sample_pose(rng, len(program.shapes), scale_range)
        if execute_image(skeleton, poses).valid:
            return poses
    warnings.warn(f"no valid placement in {trials} trials; using the last one", RuntimeWarning, stacklevel=2)
    return poses


def _place_all(rng: np.random.Generator, programs: list[ImageProgram], kind: ProblemKind) -> tuple:
    return tuple(place(rng, p, kind.scale_range) for p in programs)


def _assemble(
    rng: np.random.Generator, kind: ProblemKind, concept: tuple, number: int,
    positives: list[ImageProgram], negatives: list[ImageProgram], changes: tuple = (),
) -> GeneratedProblem:
    """Name the problem and place every image (positives first, then negatives)."""
    return GeneratedProblem(
        name=problem_name(kind, concept, number),
        kind=kind,
        positives=tuple(positives),
        negatives=tuple(negatives),
        positive_poses=_place_all(rng, positives, kind),
        negative_poses=_place_all(rng, negatives, kind),
        concept=tuple(concept),
        changes=tuple(changes),
    )


def random_strokes(rng: np.random.Generator, shape: Shape, allowed: tuple[StrokeType, ...]) -> Shape:
    picks = rng.integers(len(allowed), size=len(shape))
    return Shape(tuple(a.with_stroke(allowed[i]) for a, i in zip(shape.actions, picks)))


# --------------------------------------------------------------------------------------------------
# Free-form problems (spec §3.2): shapes and their one-action negatives in `dsl.free_form`

def generate_free_form(rng: np.random.Generator, setting: tuple[int, ...] = (4,), number: int = 0) -> GeneratedProblem:
    """Free-form problem: 7 identical positive programs, 7 one-action perturbations of it."""
    if tuple(setting) not in FREE_FORM_SETTINGS:
        raise ValueError(f"unknown free-form setting {setting}; known: {FREE_FORM_SETTINGS}")
    positive = ImageProgram(tuple(sample_free_form_shape(rng, k) for k in setting))
    negatives, changes = zip(*(free_form_negative_change(rng, positive) for _ in range(IMAGES_PER_SIDE)))
    return _assemble(rng, ProblemKind.FREE_FORM, setting, number, [positive] * IMAGES_PER_SIDE, list(negatives),
                     changes)


# --------------------------------------------------------------------------------------------------
# Basic-shape problems (spec §3.3)


@functools.cache
def basic_concepts(pair_seed: int = BASIC_PAIR_SEED) -> tuple[tuple[str, ...], ...]:
    """The 4000 basic concepts: the 627 library shapes in file order, then 3373 distinct unordered pairs
    (i < j in file order) drawn without replacement."""
    names = list(load_library())
    first, second = np.triu_indices(len(names), k=1)
    picks = np.random.default_rng(pair_seed).choice(first.size, size=BASIC_PROBLEMS - len(names), replace=False)
    pairs = [(names[first[p]], names[second[p]]) for p in picks]
    return tuple((n,) for n in names) + tuple(pairs)


def _replacement(rng: np.random.Generator, name: str) -> str:
    family = look_alikes(name)
    if not family:
        raise ValueError(f"shape {name!r} is alone in its super class; it cannot be replaced")
    return family[rng.integers(len(family))]


def _basic_turned_off(rng: np.random.Generator, n: int) -> list[int]:
    """Which shape each negative turns off: k' = 7 - (7 mod n) in equal blocks, the rest at random."""
    blocks = IMAGES_PER_SIDE - IMAGES_PER_SIDE % n
    fixed = [i // (blocks // n) for i in range(blocks)]
    return fixed + [int(rng.integers(n)) for _ in range(IMAGES_PER_SIDE - blocks)]


def _basic_image(rng: np.random.Generator, slots: tuple[str, ...], drawn: list[str]) -> ImageProgram:
    library = load_library()
    shapes = []
    for original, name in zip(slots, drawn):
        stampable = library[original].if_stamp and library[name].if_stamp
        allowed = DATASET_STROKE_TYPES if stampable else (StrokeType.NORMAL,)
        shapes.append(random_strokes(rng, library[name].shape, allowed))
    return ImageProgram(tuple(shapes))


def generate_basic(rng: np.random.Generator, shapes: tuple[str, ...], number: int = 0) -> GeneratedProblem:
    """Basic problem: positives draw every shape of the concept; each negative replaces one of them by
    another shape of the same super class."""
    shapes = tuple(shapes)
    unknown = [s for s in shapes if s not in load_library()]
    if unknown or not 1 <= len(shapes) <= 2:
        raise ValueError(f"a basic concept is 1 or 2 library shapes, got {shapes} (unknown: {unknown})")
    drawn_negatives, swaps = [], []
    for off in _basic_turned_off(rng, len(shapes)):
        drawn = list(shapes)
        drawn[off] = _replacement(rng, shapes[off])
        drawn_negatives.append(drawn)
        swaps.append(ShapeSwap(off, shapes[off], drawn[off]))
    order = rng.permutation(IMAGES_PER_SIDE)
    drawn_negatives = [drawn_negatives[i] for i in order]
    positives = [_basic_image(rng, shapes, list(shapes)) for _ in range(IMAGES_PER_SIDE)]
    negatives = [_basic_image(rng, shapes, drawn) for drawn in drawn_negatives]
    return _assemble(rng, ProblemKind.BASIC, shapes, number, positives, negatives, [swaps[i] for i in order])


# --------------------------------------------------------------------------------------------------
# Abstract-shape problems (spec §3.4)


def attribute_pool(values: dict[str, int]) -> list[str]:
    """Library shapes whose attributes equal `values` (1 or 0 each; -1 and stray values match neither)."""
    return [s.name for s in load_library().values() if all(s.attributes[a] == v for a, v in values.items())]


@functools.cache
def abstract_concepts() -> list[tuple[str, ...]]:
    """The 220 abstract concepts: 26 single attributes, then the 194 pairs (i < j in column order) whose
    pools {1,1}, {1,0} and {0,1} each hold at least 10 shapes."""
    singles = [(a,) for a in ATTRIBUTES]
    table = np.array([[s.attributes[a] for a in ATTRIBUTES] for s in load_library().values()])  # (shapes, attributes)
    has = {v: (table == v).astype(np.int64) for v in (0, 1)}  # a shape's attribute equal to v (as attribute_pool)
    pool = {(x, y): has[x].T @ has[y] for x, y in ((1, 1), (1, 0), (0, 1))}  # pool sizes of {a: x, b: y}, (a, b)
    pairs = [
        (a, b)
        for i, a in enumerate(ATTRIBUTES)
        for j, b in enumerate(ATTRIBUTES[i + 1 :], i + 1)
        if all(pool[x, y][i, j] >= ABSTRACT_POOL_MIN for x, y in ((1, 1), (1, 0), (0, 1)))
    ]
    return singles + pairs


def abstract_strokes(attributes: tuple[str, ...]) -> tuple[StrokeType, ...]:
    """Stroke types allowed in an abstract problem: stamps that would read as a regular polygon, a triangle
    or a quadrangle are withheld when the concept is about one."""
    triangle, quadrangle = "exist_triangle" in attributes, "exist_quadrangle" in attributes
    if not (triangle or quadrangle or "exist_regular" in attributes):
        return DATASET_STROKE_TYPES
    allowed = [StrokeType.NORMAL, StrokeType.ZIGZAG]
    if triangle and quadrangle:
        allowed += [StrokeType.CIRCLE]
    elif triangle:
        allowed += [StrokeType.CIRCLE, StrokeType.SQUARE]
    elif quadrangle:
        allowed += [StrokeType.CIRCLE, StrokeType.TRIANGLE]
    return tuple(allowed)


def _distinct(rng: np.random.Generator, pool: list[str], count: int) -> list[str]:
    if len(pool) < count:
        raise ValueError(f"pool of {len(pool)} shapes, {count} distinct needed")
    return [pool[i] for i in rng.choice(len(pool), size=count, replace=False)]


def _abstract_negative_names(rng: np.random.Generator, attributes: tuple[str, ...]) -> list[str]:
    if len(attributes) == 1:
        return _distinct(rng, attribute_pool({attributes[0]: 0}), IMAGES_PER_SIDE)
    a, b = attributes
    first_violated = 3 + int(rng.integers(2))
    names = _distinct(rng, attribute_pool({a: 0, b: 1}), first_violated)
    names += _distinct(rng, attribute_pool({a: 1, b: 0}), IMAGES_PER_SIDE - first_violated)
    return [names[i] for i in rng.permutation(IMAGES_PER_SIDE)]


def _abstract_image(rng: np.random.Generator, name: str, allowed: tuple[StrokeType, ...]) -> ImageProgram:
    shape = load_library()[name]
    return ImageProgram((random_strokes(rng, shape.shape, allowed if shape.if_stamp else (StrokeType.NORMAL,)),))


def generate_abstract(rng: np.random.Generator, attributes: tuple[str, ...], number: int = 0) -> GeneratedProblem:
    """Abstract problem: one library shape per image; positives have every attribute of the concept,
    negatives lack exactly one (pairs: 3 or 4 negatives per violated attribute)."""
    attributes = tuple(attributes)
    if attributes not in abstract_concepts():
        raise ValueError(f"{attributes} is not one of the 220 abstract concepts")
    positive_names = _distinct(rng, attribute_pool({a: 1 for a in attributes}), IMAGES_PER_SIDE)
    negative_names = _abstract_negative_names(rng, attributes)
    allowed = abstract_strokes(attributes)
    positives = [_abstract_image(rng, n, allowed) for n in positive_names]
    negatives = [_abstract_image(rng, n, allowed) for n in negative_names]
    library = load_library()
    losses = [AttributeLoss(n, tuple(a for a in attributes if library[n].attributes[a] == 0)) for n in negative_names]
    return _assemble(rng, ProblemKind.ABSTRACT, attributes, number, positives, negatives, losses)


# --------------------------------------------------------------------------------------------------
# Datasets of problems and training images


@dataclass(frozen=True, slots=True)
class ProblemSpec:
    """Problem `index` of `kind` in a dataset: its concept and its number (the 4-digit id of its name)."""

    kind: ProblemKind
    index: int
    concept: tuple
    number: int

    @property
    def name(self) -> str:
        return problem_name(self.kind, self.concept, self.number)


def concepts(kind: ProblemKind) -> tuple[tuple, ...]:
    if kind is ProblemKind.FREE_FORM:
        return FREE_FORM_SETTINGS
    return basic_concepts() if kind is ProblemKind.BASIC else tuple(abstract_concepts())


def plan_problems(kind: ProblemKind, count: int, seed: int) -> list[ProblemSpec]:
    """The first `count` problems of `kind`: free-form cycles through the 12 settings; basic and abstract
    walk a seeded permutation of their concepts (so a small dataset mixes singles and pairs). Each pass over
    the concepts increments the number in the name."""
    pool = concepts(kind)
    order = np.arange(len(pool))
    if kind is not ProblemKind.FREE_FORM:
        order = np.random.default_rng([seed, kind.seed_code]).permutation(len(pool))
    return [ProblemSpec(kind, i, pool[order[i % len(pool)]], i // len(pool)) for i in range(count)]


PAPER_SPLITS = {"test_ff": 600, "test_bd": 480, "test_hd_comb": 400, "test_hd_novel": 320}  # the released test
# splits and their sizes (spec §4.3)
NOVEL_ATTRIBUTE = "has_eight_straight_lines"  # the attribute test_hd_novel holds out (spec §4.3: 16 concepts x 20)
PER_ABSTRACT_CONCEPT = 20  # problems per abstract concept in the abstract test splits (the generator's 20 processes)


def paper_split_plan(seed: int) -> dict[str, list[ProblemSpec]]:
    """A stand-in for the released test splits (spec §4.3), split name -> its problems: `test_ff` the first 600
    free-form problems (50 per action setting), `test_bd` the first 480 basic ones (`plan_problems`), `test_hd_novel`
    PER_ABSTRACT_CONCEPT problems of each of the 16 concepts with NOVEL_ATTRIBUTE (the attribute alone and its 15
    pairs: 320), `test_hd_comb` PER_ABSTRACT_CONCEPT problems of each of 20 attribute pairs without it, drawn with
    `seed` (400; which pairs the paper held out is only in its released split file)."""
    sizes = PAPER_SPLITS
    novel = [c for c in abstract_concepts() if NOVEL_ATTRIBUTE in c]
    pairs = [c for c in abstract_concepts() if len(c) == 2 and NOVEL_ATTRIBUTE not in c]
    chosen = np.random.default_rng([seed, ProblemKind.ABSTRACT.seed_code, 4]).choice(
        len(pairs), size=sizes["test_hd_comb"] // PER_ABSTRACT_CONCEPT, replace=False)
    combined = [pairs[k] for k in sorted(chosen)]
    if len(novel) * PER_ABSTRACT_CONCEPT != sizes["test_hd_novel"]:
        raise ValueError(f"{len(novel)} concepts hold {NOVEL_ATTRIBUTE}; the novel split needs "
                         f"{sizes['test_hd_novel'] // PER_ABSTRACT_CONCEPT}")
    abstract = [(split, concept, number) for split, concepts_of in (("test_hd_novel", novel), ("test_hd_comb", combined))
                for concept in concepts_of for number in range(PER_ABSTRACT_CONCEPT)]
    plan = {"test_ff": plan_problems(ProblemKind.FREE_FORM, sizes["test_ff"], seed),
            "test_bd": plan_problems(ProblemKind.BASIC, sizes["test_bd"], seed), "test_hd_comb": [], "test_hd_novel": []}
    for index, (split, concept, number) in enumerate(abstract):
        plan[split].append(ProblemSpec(ProblemKind.ABSTRACT, index, concept, number))
    return plan


def generate_problem(spec: ProblemSpec, seed: int) -> GeneratedProblem:
    rng = problem_rng(seed, spec.kind, spec.index)
    generator = {
        ProblemKind.FREE_FORM: generate_free_form,
        ProblemKind.BASIC: generate_basic,
        ProblemKind.ABSTRACT: generate_abstract,
    }[spec.kind]
    return generator(rng, spec.concept, spec.number)


def _training_free_form(rng: np.random.Generator) -> ImageProgram:
    """One or two shapes, 1-10 actions in all; half the images get one negative-style perturbation."""
    if rng.random() < 0.5:
        counts = [int(rng.integers(1, 11))]
    else:
        counts = [int(rng.integers(1, 6)), int(rng.integers(1, 6))]
    program = ImageProgram(tuple(sample_free_form_shape(rng, k) for k in counts))
    return free_form_negative(rng, program) if rng.random() < 0.5 else program


def sample_training_image(rng: np.random.Generator, kind: ProblemKind | str) -> tuple[ImageProgram, tuple[Pose, ...]]:
    """One image program of `kind` with a valid placement, as the generators would draw it (for training
    the decoder): free-form over a wider length range, one or two random library shapes (basic), or one
    library shape with the stroke types of a random abstract concept (abstract)."""
    kind = ProblemKind(kind)
    names = list(load_library())
    if kind is ProblemKind.FREE_FORM:
        program = _training_free_form(rng)
    elif kind is ProblemKind.BASIC:
        chosen = tuple(names[i] for i in rng.choice(len(names), size=int(rng.integers(1, 3)), replace=False))
        program = _basic_image(rng, chosen, list(chosen))
    else:
        concept = abstract_concepts()[rng.integers(len(abstract_concepts()))]
        program = _abstract_image(rng, names[rng.integers(len(names))], abstract_strokes(concept))
    return program, place(rng, program, kind.scale_range)
