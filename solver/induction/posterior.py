"""Bayesian rule selection with the size principle, for rules on attributes and counts, and on shape categories.

Under the abstract generator (spec §3.4) the six context images of A are distinct shapes drawn from the
library shapes that satisfy the concept; those of B from the shapes that violate it (value 0: a shape to
which the attribute does not apply is in neither pool, `solver.induction.pools.failing_pool`), and for a two-attribute
concept 3 or 4 of its seven negatives from the shapes with only the first attribute, the rest from those with
only the second. So for a rule R with pools P(R) (`solver.induction.pools`), the likelihood of the context is

    set A:  1 / (|P(L1 and L2)|)_6       ((N)_k = N (N-1) ... (N-k+1): ordered draws without replacement)
    set B:  1 / (|F(L)|)_6                                         (one literal; F = failing pool)
            q(n1, n2) / C(6, n1) / (|F(L1) and P(L2)|)_n1 / (|P(L1) and F(L2)|)_n2   (two literals)

where q is the generator's chance of the split (3/3: 4/7; 4/2 and 2/4: 3/14 each; a split of 5/1 or 6/0 needs
images whose attributes were misread, NOISE each: `group_split_probability`, `_pair_split`),
and an image outside every pool the rule allows (a misclassified one, for a pair a B image that violates both
literals or violates one while the other does not apply, or an image of more than one shape: the generator draws
one) has the small probability NOISE / |library| of a misperceived or mislabelled image (`noise_rate`: NOISE for
programs read from pixels, NOISE_TRUE_PROGRAMS for true ones). The prior prefers short rules of the generator's
kind: log P(R) = -LENGTH_PENALTY * length (literal costs of the encodings), - NEGATION_PENALTY per negated literal
(the generator's concepts are what the images of A have, never what they lack), - NOT_A_CONCEPT_PENALTY for a rule
of attributes and counts that names none of the generator's 220 concepts
(`solver.induction.concepts.generator_concept`: a negation, a threshold, a count equality no attribute names, a pair
the generator never pairs because one of its pools holds fewer than ten shapes, spec §3.4; such a rule otherwise
wins by explaining one image of B through a pool of two or three shapes, or by a coincidence of the context, though
it stays expressible). The likelihood also weighs the images' stroke types
(`solver.induction.concepts.stroke_log_likelihood`): under a concept about a regular polygon, a triangle or a
quadrangle the generator withholds the stamps that would draw one.
Among the rules that fit the context best (the objective's first priority, found by
clingo with all_fitting=1) or misfit at most EXTRA_ERRORS (two) more context images (max_errors; `solver.solving.api`), the
posterior ranks the rules and weighs their votes on the queries. A context image whose computed
attribute disagrees with the concept's labels then costs the true concept a noise term instead of
handing the win to a rule that fits all twelve images by chance.

Rules of shape categories are weighed under the basic generator (spec §3.3): an image of A shows the rule's
n shapes and no other (probability 1: the concept names its shapes), an image of B shows all of them but
one, which another shape of the same super class replaces (1 / (n |super class - 1|)); any other image
(another number of shapes, too few of the rule's) is noise as above (`category_log_likelihood`). From pixels a basic problem whose shapes perception
misread in one or two images of A is then still read as its shapes: four images of A that show exactly
two library shapes, and six of B that show one of them with a look-alike, are no coincidence, whereas a
conjunction of attributes that happens to fit the misread images draws each image from a pool of
hundreds of shapes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

from dsl.dataset import IMAGES_PER_SIDE
from dsl.library import load_library, look_alikes
from solver.induction.facts import ImageFacts, ProblemFacts, Role
from solver.induction.optimal import Induction, InducedRule
from solver.induction.pools import failing_pool, library_size, literal_pool
from solver.induction.concepts import generator_concept, stroke_log_likelihood
from solver.induction.rules import Family, Literal, Rule
from solver.settings import KEEP, LENGTH_PENALTY, NEGATION_PENALTY, NOISE, NOISE_TRUE_PROGRAMS, NOT_A_CONCEPT_PENALTY

CATEGORY_FAMILIES = frozenset({Family.CATEGORY, Family.CATEGORIES})


def noise_rate(facts: ProblemFacts) -> float:
    """The chance that a context image lies outside the pools of the concept: a misread image for programs read
    from pixels (`tolerant`), next to none for true programs, whose library shapes take the table's labels."""
    return NOISE if facts.tolerant else NOISE_TRUE_PROGRAMS


@functools.cache
def _look_alikes(name: str) -> int:
    """How many other library shapes share the super class of library shape `name` (at least 1)."""
    return max(1, len(look_alikes(name))) if name in load_library() else 1


def category_log_likelihood(induced: InducedRule, facts: ProblemFacts) -> float | None:
    """log P(context | rule) under the basic generator for a rule of plain category literals; None otherwise."""
    literals = induced.rule.literals
    if not literals or any(lit.negated or lit.family not in CATEGORY_FAMILIES for lit in literals):
        return None
    shapes = {name for lit in literals for name in lit.names}
    noise = math.log(noise_rate(facts) / library_size())
    total = sum(0.0 if (Role.A.value, k) in induced.covered and len(image.shapes) == len(shapes) else noise
                for k, image in enumerate(facts.context_a))
    for index, image in enumerate(facts.context_b):
        missing = shapes - set(image.categories)
        if (Role.B.value, index) in induced.covered or len(missing) != 1 or len(image.shapes) != len(shapes):
            total += noise
        else:
            total += -math.log(len(shapes)) - math.log(_look_alikes(next(iter(missing))))
    return total


def _draws(pool: int, images: int, noise: float) -> float:
    """log P of `images` distinct library shapes drawn in order from `pool` (the generator draws without
    replacement); an image beyond the pool's size is noise."""
    size = pool.bit_count()
    return -sum(math.log(size - k) for k in range(min(images, size))) + noise * max(0, images - size)


def group_split_probability(first: int, second: int) -> float:
    """P that the context of set B shows `first` images violating only the first literal and `second`
    violating only the second, under the pair generator (spec §3.4): of its seven negatives, 3 or 4 (even
    odds) violate the first attribute, the rest the second; the context is a random subset of the seven
    (six images: the seventh is the query)."""
    shown = first + second
    if shown > IMAGES_PER_SIDE:
        return 0.0
    return sum(0.5 * math.comb(violated, first) * math.comb(IMAGES_PER_SIDE - violated, second)
               for violated in (3, 4)) / math.comb(IMAGES_PER_SIDE, shown)


def _fails(literal: Literal, shown: ImageFacts, true: frozenset[Literal]) -> bool:
    """The image violates the literal as the generator's negatives do: an attribute literal by the
    attribute's other value (not by being not applicable), any other literal by not holding."""
    if literal in true:
        return False
    if literal.family is Family.ATTRIBUTE:
        return shown.attribute_values(literal.name) == ((1,) if literal.negated else (0,))
    return True


def _pair_groups(induced: InducedRule, facts: ProblemFacts) -> tuple[int, int, int]:
    """Images of set B violating the first literal and holding the second, violating the second and holding the
    first, and any other (noise: violating both, or one literal violated while the other does not apply, as
    `balanced_two` does not to a shape of one part; the generator draws a pair's negatives from the pools
    {0, 1} and {1, 0}, spec §3.4)."""
    first_literal, second_literal = induced.rule.literals
    groups = [0, 0, 0]
    for index, shown in enumerate(facts.context_b):
        image = (Role.B.value, index)
        true = induced.evidence.get(image, frozenset())
        first, second = (_fails(lit, shown, true) for lit in (first_literal, second_literal))
        if image in induced.covered or len(shown.shapes) != 1:
            groups[2] += 1
        elif first and second_literal in true:
            groups[0] += 1
        elif second and first_literal in true:
            groups[1] += 1
        else:
            groups[2] += 1
    return groups[0], groups[1], groups[2]


def _pair_split(first: int, second: int, noise_images: int, noise: float = NOISE) -> float:
    """log P of the split of set B into the two groups, each noise image drawn from either of them (the
    images' order: one labelling of the positions among comb(n, first)). A split the generator cannot
    make (five or six images in one group) needs images whose attributes were misread: each one `noise`."""
    shown = first + second + noise_images
    total = sum(math.comb(noise_images, j) * group_split_probability(first + j, second + noise_images - j)
                / math.comb(shown, first + j) for j in range(noise_images + 1))
    if total > 0:
        return math.log(total)
    larger = max(first, second)
    return math.log(noise) + _pair_split(larger - 1 if first == larger else first,
                                         larger - 1 if second == larger else second, noise_images + 1, noise)


def log_likelihood(induced: InducedRule, facts: ProblemFacts) -> float | None:
    """log P(context | rule) under the generator; None when a literal has no library pool or the rule has no
    literal (or, for a rule of categories, `category_log_likelihood`)."""
    literals = induced.rule.literals
    if literals and all(lit.family in CATEGORY_FAMILIES for lit in literals):
        return category_log_likelihood(induced, facts)
    pools = [literal_pool(lit) for lit in literals]
    if not literals or any(p is None for p in pools) or len(literals) > 2:
        return None
    failing = [failing_pool(lit) for lit in literals]
    noise = math.log(noise_rate(facts) / library_size())
    positive = (1 << library_size()) - 1
    for pool in pools:
        positive &= pool
    drawn = sum((Role.A.value, k) in induced.covered and len(shown.shapes) == 1
                for k, shown in enumerate(facts.context_a))
    total = _draws(positive, drawn, noise) + noise * (len(facts.context_a) - drawn) + stroke_log_likelihood(
        induced.rule, facts)
    if len(literals) == 1:
        drawn = sum((Role.B.value, k) not in induced.covered and len(shown.shapes) == 1
                    and _fails(literals[0], shown, induced.evidence.get((Role.B.value, k), frozenset()))
                    for k, shown in enumerate(facts.context_b))
        return total + _draws(failing[0], drawn, noise) + noise * (len(facts.context_b) - drawn)
    first, second, noise_images = _pair_groups(induced, facts)
    total += _draws(failing[0] & pools[1], first, noise) + _draws(pools[0] & failing[1], second, noise)
    return total + noise * noise_images + _pair_split(first, second, noise_images, noise_rate(facts))


def log_prior(rule: Rule, length_penalty: float = LENGTH_PENALTY) -> float:
    """Short rules, plain literals: a negated literal costs more than its length says; a rule of attributes and
    counts that names none of the generator's concepts (spec §3.4) costs more still."""
    prior = -length_penalty * rule.length - NEGATION_PENALTY * sum(lit.negated for lit in rule.literals)
    if not rule.families() & CATEGORY_FAMILIES and generator_concept(rule) is None:
        prior -= NOT_A_CONCEPT_PENALTY
    return prior


def rank(induction: Induction, facts: ProblemFacts, length_penalty: float = LENGTH_PENALTY) -> Induction | None:
    """The induction's rules ordered by posterior, with normalised posterior weights (None if some rule
    is outside the attribute and count families)."""
    scored = []
    for induced in induction.rules:
        likelihood = log_likelihood(induced, facts)
        if likelihood is None:
            return None
        scored.append((likelihood + log_prior(induced.rule, length_penalty), induced))
    if not scored:
        return None
    best = max(score for score, _ in scored)
    kept = sorted(((math.exp(score - best), induced) for score, induced in scored if score - best >= math.log(KEEP)),
                  key=lambda item: (-item[0], item[1].rule.sort_key))
    total = sum(weight for weight, _ in kept)
    return replace(induction, rules=tuple(induced for _, induced in kept),
                   cost=kept[0][1].cost, weights=tuple(weight / total for weight, _ in kept))
