"""Explanation reports of problems given as facts: one self-contained HTML page and one JSON file.

The page is built from `solver.explaining.report`'s parts (the rule in English and in ASP, set A, set B, the queries
with their labels and confidences, the tied alternatives), each image shown as its facts instead of a
picture: for every image what the rule says, its `why` (`solver.facts_in.why`) and the facts that decide
each literal. Every name that comes from the problem is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from dsl.dataset import atomic_write_text
from dsl.owned import check_replaceable, marked
from solver.facts_in.problem import FactImage, FactsProblem
from solver.explaining import (alternatives_html, decided_html, page_html, queries_html, rule_html, verdict_html, why_html)
from solver.explaining import DIFFERENCE_HEX, PROGRAM_HEX

FACTS_STYLE = f"""
figure.facts{{width:300px}}
.factlist{{font-family:ui-monospace,monospace;font-size:.75em;background:#fafafa;border:1px solid #eee;
padding:.3em;max-height:240px;overflow:auto;margin:0 0 .3em 0;list-style:none}}
.factlist .match{{color:{PROGRAM_HEX};font-weight:bold}} .factlist .diff{{color:{DIFFERENCE_HEX};font-weight:bold}}
.modes code{{display:inline;margin-right:1em}}
@media (max-width:600px){{figure.facts{{width:100%;box-sizing:border-box}}}}
"""


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


def _legend() -> str:
    return (f'<p class="legend">In each image\'s facts:<br><span style="background:{PROGRAM_HEX}"></span>'
            f'the facts that satisfy the rule, or come nearest to it<br><span style="background:{DIFFERENCE_HEX}">'
            "</span>the facts in the place of what the rule needs</p>")


def render_facts_html(problem: FactsProblem, record: dict) -> str:
    """The page for one problem; `record` from `solver.facts_in.solve.solution_record`."""
    explanation = record["explanation"]
    evidence = {e["image"]: e for e in explanation["evidence"]}
    modes = "".join(f"<code>{html.escape(mode)}</code>" for mode in record["modes"])
    body = [f"<h1>Bongard problem {html.escape(problem.name)}</h1>", rule_html(explanation),
            f'<p class="modes"><b>Modes</b> (the language bias, from the facts): {modes}</p>', _legend()]
    for title, key, side in (("Set A", "a", problem.context_a), ("Set B", "b", problem.context_b)):
        cards = "".join(_card(img, evidence.get(f"{key}({i})"), f"{title[-1]}{i}") for i, img in enumerate(side))
        body.append(f'<h2>{title}</h2><div class="grid">{cards}</div>')
    cards = [_card(image, evidence.get(f"q({i})"), f"query {i} → {'A' if record['labels'][i] else 'B'}")
             for i, image in enumerate(problem.queries)]
    body += queries_html(cards, record["labels"], record["confidence"])
    body.append(alternatives_html(explanation["alternatives"]))
    return page_html(problem.name, body, FACTS_STYLE)


def file_stem(name: str) -> str:
    """A file name for a problem name (anything but letters, digits, '.', '-' and '_' becomes '_')."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "problem"


def report_paths(out_dir: Path | str, problem: FactsProblem) -> tuple[Path, Path]:
    """The report's HTML and JSON paths; an OutputError if either is a file this tool did not write."""
    stem = file_stem(problem.name)
    return (check_replaceable(Path(out_dir) / f"{stem}.html", "--explain"),
            check_replaceable(Path(out_dir) / f"{stem}.json", "--explain"))


def write_facts_report(out_dir: Path | str, problem: FactsProblem, record: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json` (replacing only files this tool wrote);
    returns the HTML path."""
    page, data = report_paths(out_dir, problem)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    atomic_write_text(data, json.dumps(marked(record), indent=1))
    atomic_write_text(page, render_facts_html(problem, record))
    return page
