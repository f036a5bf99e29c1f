"""The rule chosen for a problem's facts: clingo's optimal rules (`solver.induction.optimal`), weighed by their
posterior under the generators (`solver.induction.posterior`) when an attribute or count rule wins.

    induction = chosen_rules(facts, time_limit, max_rules)     # then classify(induction, query_images(facts))
    induction = chosen_rules(facts, posterior=False)           # an ablation: clingo's optimal rules alone
"""

from __future__ import annotations

from dataclasses import replace

from solver.induction.optimal import ABSTRACT_ENCODINGS, DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT, Induction, induce
from solver.induction.posterior import rank
from solver.induction.rules import Family
from solver.settings import ALL_FITTING_RULES, EXTRA_CATEGORY_ERRORS, EXTRA_ERRORS


def chosen_rules(facts, time_limit: float = DEFAULT_TIME_LIMIT, max_rules: int = DEFAULT_MAX_RULES,
                 posterior: bool = True) -> Induction:
    """The optimal rules of `facts`; when an attribute or count rule wins (`weighed`), every rule that fits the
    context as well is weighed by its posterior (`size_principle`) and the first rule is the most probable one.
    `posterior=False` (the ablation `solver.reading.Switches.posterior`): clingo's optimal rules as they are, plain
    minimum description length (fewest misclassified context images, then the shortest rule)."""
    induction = induce(facts, time_limit=time_limit, max_rules=max_rules)
    if posterior and weighed(induction):
        induction = size_principle(induction, facts, time_limit)
    return induction


ABSTRACT_FAMILIES = {Family.ATTRIBUTE, Family.COUNT}
CATEGORY_FAMILIES = {Family.CATEGORY, Family.CATEGORIES}
CATEGORY_ENCODINGS = ("rule.lp", "category.lp")


def weighed(induction: Induction) -> bool:
    """The winner is a rule the posterior weighs: attributes or counts, possibly with categories (a
    conjunction of both is no generator's concept; the posterior ranks the pure rules instead)."""
    families = induction.rules[0].rule.families() if induction.rules else set()
    return bool(families & ABSTRACT_FAMILIES) and families <= ABSTRACT_FAMILIES | CATEGORY_FAMILIES


def size_principle(induction: Induction, facts, time_limit: float, extra_errors: int = EXTRA_ERRORS) -> Induction:
    """An abstract rule won: weigh every attribute and count rule that fits the context as well, or with
    at most `extra_errors` more misclassified context images, and every rule of shape categories with at
    most EXTRA_CATEGORY_ERRORS more, by its posterior under the generators (`solver.induction.posterior`, where a
    misclassified image is noise: a context image whose attribute the features read otherwise than the
    concept's labels, or whose shape perception misread); the first rule is then the most probable one.
    A winner that mixes categories with attributes is replaced by the most probable pure rule."""
    remaining = max(0.5, time_limit - induction.seconds)
    errors = induction.cost[0] if induction.cost else None
    fitting = induce(facts, time_limit=remaining, max_rules=ALL_FITTING_RULES, encodings=ABSTRACT_ENCODINGS,
                     all_fitting=True, max_errors=None if errors is None else errors + extra_errors)
    pure = induction.rules[0].rule.families() <= ABSTRACT_FAMILIES
    if pure and fitting.cost[:1] != induction.cost[:1]:
        return induction
    shapes = induce(facts, time_limit=remaining, max_rules=ALL_FITTING_RULES, encodings=CATEGORY_ENCODINGS,
                    all_fitting=True, max_errors=None if errors is None else errors + EXTRA_CATEGORY_ERRORS)
    candidates = replace(fitting, rules=fitting.rules + shapes.rules)
    ranked = rank(candidates, facts) if candidates.rules else None
    if ranked is None:
        return induction
    return replace(ranked, seconds=induction.seconds + fitting.seconds + shapes.seconds)
