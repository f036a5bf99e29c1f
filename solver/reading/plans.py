"""Library plans: how the shape classifier's names become the search's starting programs and priors.

An image of two separate ink parts is planned part by part, each part from its own best groups; else the whole
image's best groups, and their pairs when the decoder reads two shapes (`library_plan`, `decoded_plan`). Every library
shape the search reaches pays the classifier's log-probability of it (`ClassifierPrior`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from dsl.library import load_library
from dsl.types import Action, ImageProgram, Shape
from search.refine import Proposal
from solver.reading.readings import Perceived
from solver.settings import (
    LIBRARY_LOGP_SCALE,
    LIBRARY_TOP,
    PAIR_TOP,
    SEED_LIBRARY_SHAPES,
    SPLIT_BELOW_CONFIDENCE,
    SPLIT_READINGS,
    SPLIT_TOUCHING,
)


def seed_proposals() -> list[Proposal]:
    """Generic starting points for the enumerator when no decoder is used."""
    library = load_library()
    seeds = [Shape((Action.line(1.0),)), Shape((Action.arc(0.5, 90.0),))]
    seeds += [library[name].shape for name in SEED_LIBRARY_SHAPES if name in library]
    singles = [Proposal(ImageProgram((s,)), 0.0) for s in seeds]
    pairs = [Proposal(ImageProgram((seeds[0], s)), 0.0) for s in seeds[:4]]
    return singles + pairs


def scaled_logp(p: float) -> float:
    return LIBRARY_LOGP_SCALE * math.log(max(p, 1e-9))


def library_proposals(guesses: list, pair_guesses: list | None = None) -> list[Proposal]:
    """Programs of library shapes from the shape classifier's guesses ([(group names, probability), ...],
    best first, from `perception.shapes.library_guesses`): one shape per top group; and with
    `pair_guesses` (when the decoder reads two touching shapes), pairs of their top groups. Log-probabilities
    are the classifier's (summed over a pair) times LIBRARY_LOGP_SCALE, most probable first."""
    library = load_library()

    def shape(group) -> Shape:
        return library[group[0]].shape

    def logp(*ps: float) -> float:
        return float(sum(scaled_logp(p) for p in ps))

    out = [Proposal(ImageProgram((shape(g),)), logp(p)) for g, p in guesses[:LIBRARY_TOP]]
    if pair_guesses:
        pairs = itertools.combinations(pair_guesses[:PAIR_TOP], 2)
        out += [Proposal(ImageProgram((shape(a), shape(b))), logp(pa, pb)) for (a, pa), (b, pb) in pairs]
    return sorted(out, key=lambda p: -p.logp)


@dataclass(frozen=True)
class ClassifierPrior:
    """The shape classifier's log-probability (times LIBRARY_LOGP_SCALE, as its proposals carry) of the
    library shape a shape draws, None for a shape that is no library shape: `refine_image`'s `shape_logp`,
    so that a library shape the search reaches by an edit pays what the classifier thinks of it."""

    logp: dict  # library name -> LIBRARY_LOGP_SCALE x log-probability of its group

    @classmethod
    def from_guesses(cls, ranked: list) -> "ClassifierPrior":
        logp: dict = {}
        for group, p in ranked:
            logp |= dict.fromkeys(group, scaled_logp(p))
        return cls(logp)

    def __call__(self, shape: Shape) -> float | None:
        from dsl.categories import exact_shape_categories  # memoised; the classifier's groups are its names

        names = exact_shape_categories(shape)
        return self.logp.get(names[0], scaled_logp(0.0)) if names else None


@dataclass(frozen=True)
class LibraryPlan:
    """The classifier's proposals for one image: programs for the whole image or, when the image has two
    separate ink parts, one-shape programs for each part (each part is then searched alone, on an image
    holding only its ink, and the two programs are joined). Both for touching shapes split by the
    decoder's reading (`split_plan`): the reading that draws the image better is kept."""

    whole: tuple = ()
    parts: tuple = ()  # ((part image, proposals), (part image, proposals))
    confidence: float = 1.0  # the classifier's top probability for the whole image, or for its less sure part
    whole_prior: ClassifierPrior | None = None  # the classifier's belief in each library shape, whole image
    part_priors: tuple = ()  # ... per part


def classifier_confidence(guesses: dict) -> float:
    """The classifier's top probability for the whole image, or for its less sure part when the image has two
    separate ink parts and that is higher (`LibraryPlan.confidence`, without making the plan)."""
    whole = guesses["whole"][0][1] if guesses["whole"] else 0.0
    if len(guesses["parts"]) == 2:
        return max(whole, min(part[0][1] if part else 0.0 for part in guesses["parts"]))
    return whole


def library_plan(guesses: dict, shapes_read: int) -> LibraryPlan:
    """A `LibraryPlan` from `perception.shapes.library_guesses` (with part images) and the number of
    shapes the decoder reads."""
    confidence = classifier_confidence(guesses)
    if len(guesses["parts"]) == 2:
        parts = tuple((image, tuple(library_proposals(part))) for image, part in zip(guesses["part_images"], guesses["parts"]))
        priors = tuple(ClassifierPrior.from_guesses(part) for part in guesses["parts"])
        return LibraryPlan(parts=parts, confidence=confidence, part_priors=priors)
    pairs = guesses["whole"] if shapes_read == 2 else None
    return LibraryPlan(
        tuple(library_proposals(guesses["whole"], pairs)), confidence=confidence,
        whole_prior=ClassifierPrior.from_guesses(guesses["whole"]),
    )


def split_plan(plan: LibraryPlan, guesses: dict, model, image: np.ndarray, readings: list) -> LibraryPlan:
    """`plan` with parts from the ink split among the two shapes of the decoder's best reading of two
    shapes that splits it (`search.split`): touching shapes, which the classifier is unsure of together.
    The whole image's proposals stay: both are searched and the reading that draws the image better is
    kept (`refine_perceived`). `guesses`: the classifier's on the whole image (`plan` came from them)."""
    from perception.shapes import ranked_groups
    from search.split import touching_parts

    parts = next((found for found in (touching_parts(image, reading) for reading in readings) if found), None)
    if not parts:
        return plan
    ranked = ranked_groups(model, parts, top=model.classes)
    split = library_plan(dict(guesses, parts=ranked, part_images=parts), shapes_read=2)
    return replace(split, whole=plan.whole, whole_prior=plan.whole_prior, confidence=plan.confidence)


@dataclass(frozen=True)
class LibraryRead:
    """One image of a library problem as `library_one` left it: read as library shapes (`reading`), or not
    read, with what the caller needs to go on: the classifier's `guesses` and why (`unsure`: the classifier is
    unsure of it in a problem where free-form programs were seen, it is read in full; `touching`: one ink blob
    the classifier is unsure of, decoded first so that its plan can split the ink)."""

    plan: LibraryPlan
    reading: Perceived | None = None
    guesses: dict | None = None
    unsure: bool = False
    touching: bool = False
    features: tuple = ()  # the reading's shapes' features, computed in the job (`dsl.features.shape_features`)


def may_be_touching(plan: LibraryPlan) -> bool:
    """One ink blob the classifier is unsure of (under SPLIT_BELOW_CONFIDENCE): touching shapes, maybe, whose
    plan the decoder's reading of two shapes can split (`PixelPerception.plan`)."""
    return SPLIT_TOUCHING and not plan.parts and plan.confidence < SPLIT_BELOW_CONFIDENCE


def decoded_plan(image: np.ndarray, guesses: dict, props: tuple, classifier) -> LibraryPlan:
    """One image's `LibraryPlan` from the classifier's `guesses` and the decoder's proposals `props` (none: the
    image was not decoded, and is taken for one shape); one ink blob the classifier is unsure of is split among
    the two shapes of the decoder's readings (`split_plan`)."""
    shapes_read = len(props[0].program.shapes) if props else 1
    plan = library_plan(guesses, shapes_read)
    if props and may_be_touching(plan):
        readings = [p.program for p in props if len(p.program.shapes) == 2][:SPLIT_READINGS]
        plan = split_plan(plan, guesses, classifier, image, readings)
    return plan
