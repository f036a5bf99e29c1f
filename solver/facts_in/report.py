"""Explanation reports of problems given as facts: one self-contained HTML page and one JSON file.

The page and its JSON are `solver.explaining.page`'s (the rule in English and in ASP, set A, set B, the queries with
their labels and confidences, the tied alternatives), with the modes after the rule and each image shown as its
facts instead of a picture: for every image what the rule says, its `why` (`solver.facts_in.why`), with the facts
it names coloured, and the facts that decide each literal. Every name that comes from the problem is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from solver.explaining import DIFFERENCE_HEX, PROGRAM_HEX, decided_html, explanation_page, legend_html, page_paths
from solver.explaining import verdict_html, why_html, write_page
from solver.facts_in.problem import FactImage, FactsProblem

FACTS_STYLE = f"""
figure.facts{{width:300px}}
.factlist{{font-family:ui-monospace,monospace;font-size:.75em;background:#fafafa;border:1px solid #eee;
padding:.3em;max-height:240px;overflow:auto;margin:0 0 .3em 0;list-style:none}}
.factlist .match{{color:{PROGRAM_HEX};font-weight:bold}} .factlist .diff{{color:{DIFFERENCE_HEX};font-weight:bold}}
.modes code{{display:inline;margin-right:1em}}
@media (max-width:600px){{figure.facts{{width:100%;box-sizing:border-box}}}}
"""

LEGEND = legend_html("In each image's facts:", "the facts that satisfy the rule, or come nearest to it",
                     "the facts in the place of what the rule needs")


def marked_facts(why: dict) -> tuple[set[str], set[str]]:
    """The facts the `why` sentence names: those that match the rule (found, and the first nearest match
    of each failing literal) and those in the place of what the rule needs."""
    match, diff = set(why.get("found", ())), set()
    for failing in why.get("failing", ()):
        nearest = failing["measured"]
        if isinstance(nearest, list) and nearest:
            match |= set(nearest[0]["has"])
            diff |= set(nearest[0]["instead"])
    return match, diff


def _card(image: FactImage, evidence: dict | None, caption: str) -> str:
    verdict = decided = why = ""
    match, diff = set(), set()
    if evidence is not None:
        verdict, why = verdict_html(evidence), why_html(evidence.get("why") or {})
        decided = f"<details><summary>facts per literal</summary><ul>{decided_html(evidence)}</ul></details>"
        match, diff = marked_facts(evidence.get("why") or {})
    css = {**{text: ' class="match"' for text in match}, **{text: ' class="diff"' for text in diff}}
    facts = "".join(f"<li{css.get(text, '')}>{html.escape(text)}</li>" for text in sorted(image.texts))
    return (f'<figure class="facts"><ul class="factlist">{facts}</ul>'
            f"<figcaption><b>{html.escape(caption)}</b> {verdict}{why}{decided}</figcaption></figure>")


def render_facts_html(problem: FactsProblem, record: dict) -> str:
    """The page for one problem; `record` from `solver.facts_in.solve.solution_record`."""
    modes = "".join(f"<code>{html.escape(mode)}</code>" for mode in record["modes"])
    notes = [f'<p class="modes"><b>Modes</b> (the language bias, from the facts): {modes}</p>']
    return explanation_page(problem.name, record, problem.context_a, problem.context_b, problem.queries, _card,
                            LEGEND, notes, FACTS_STYLE)


def file_stem(name: str) -> str:
    """A file name for a problem name (anything but letters, digits, '.', '-' and '_' becomes '_')."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "problem"


def report_paths(out_dir: Path | str, problem: FactsProblem) -> tuple[Path, Path]:
    """The report's HTML and JSON paths; an OutputError if either is a file this tool did not write."""
    return page_paths(out_dir, file_stem(problem.name), "--explain")


def write_facts_report(out_dir: Path | str, problem: FactsProblem, record: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json` (replacing only files this tool wrote);
    returns the HTML path."""
    return write_page(report_paths(out_dir, problem), record, render_facts_html(problem, record))
