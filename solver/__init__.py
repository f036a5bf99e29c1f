"""Rule induction with clingo, query classification, explanations and the public API."""
