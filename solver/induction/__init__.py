"""Rule induction: a problem's programs as ASP facts, clingo's optimal rules over the rule language, the rules
weighed by their posterior under the generators, and the queries labelled by the rules' vote.

    facts = problem_facts(a, b, queries, CategorySource.EXACT)
    induction = chosen_rules(facts)
    votes = classify(induction, query_images(facts))

May import: dsl, search, solver.settings.
"""

from solver import face

FACE = {
    "classify": "vote", "AttributeSource": "facts", "attribute_source": "facts",
    "current_attribute_source": "facts", "CategorySource": "facts", "ImageFacts": "facts", "ProblemFacts": "facts",
    "Role": "facts", "ShapeFacts": "facts", "image_symbol": "facts", "problem_facts": "facts",
    "DEFAULT_MAX_RULES": "optimal", "DEFAULT_TIME_LIMIT": "optimal", "InducedRule": "optimal", "Induction": "optimal",
    "Outcome": "optimal", "induce": "optimal", "induce_with": "optimal", "load_encodings": "optimal",
    "query_images": "optimal", "AT_LEAST_ONE": "rules", "Comparison": "rules", "Family": "rules", "Literal": "rules",
    "Rule": "rules", "chosen_rules": "weighing",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
