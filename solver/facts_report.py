"""Explanation reports of problems given as facts: one self-contained HTML page and one JSON file.

The page is laid out and styled as `solver.report`'s (the rule in English and in ASP, set A, set B, the
queries with their labels and confidences, the tied alternatives), each image shown as its facts instead
of a picture: for every image whether it satisfies the rule, and the facts that decide each literal.
Every name that comes from the problem is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from dsl.dataset import atomic_write_text
from solver.facts_in import FactImage, FactsProblem
from solver.report import STYLE

FACTS_STYLE = """
figure.facts{width:300px} figure.facts img{display:none}
.factlist{font-family:ui-monospace,monospace;font-size:.75em;background:#fafafa;border:1px solid #eee;
padding:.3em;max-height:240px;overflow:auto;margin:0 0 .3em 0;list-style:none}
.modes code{display:inline;margin-right:1em}
"""


def _card(image: FactImage, evidence: dict | None, caption: str) -> str:
    verdict, decided = "", ""
    if evidence is not None:
        says = "A" if evidence["in_a"] else "B"
        ok = evidence["correct"]
        css = "neutral" if ok is None else ("ok" if ok else "wrong")
        verdict = f'<span class="{css}">rule says {says}{"" if ok is None else (" ✓" if ok else " ✗")}</span>'
        decided = "".join(
            f'<li class="{"holds" if lit["holds"] else "fails"}">{html.escape(lit["fact"])}</li>'
            for lit in evidence["literals"]
        )
    facts = "".join(f"<li>{html.escape(text)}</li>" for text in sorted(image.texts))
    return (
        f'<figure class="facts"><ul class="factlist">{facts}</ul>'
        f"<figcaption><b>{html.escape(caption)}</b> {verdict}<ul>{decided}</ul></figcaption></figure>"
    )


def render_facts_html(problem: FactsProblem, record: dict) -> str:
    """The page for one problem; `record` from `solver.facts_solve.solution_record`."""
    explanation = record["explanation"]
    evidence = {e["image"]: e for e in explanation["evidence"]}
    body = [f"<h1>Bongard problem {html.escape(problem.name)}</h1>"]
    body.append(
        f'<div class="rule"><b>Rule</b> ({html.escape(explanation["outcome"])}, '
        f'{explanation["errors"]} context images misclassified): {html.escape(explanation["english"])}'
        f'<code>{html.escape(explanation["asp"])}</code></div>'
    )
    modes = "".join(f"<code>{html.escape(mode)}</code>" for mode in record["modes"])
    body.append(f'<p class="modes"><b>Modes</b> (the language bias, from the facts): {modes}</p>')
    for title, key, side in (("Set A", "a", problem.context_a), ("Set B", "b", problem.context_b)):
        cards = "".join(_card(img, evidence.get(f"{key}({i})"), f"{title[-1]}{i}") for i, img in enumerate(side))
        body.append(f'<h2>{title}</h2><div class="grid">{cards}</div>')
    rows, cards = [], []
    for i, image in enumerate(problem.queries):
        label = "A" if record["labels"][i] else "B"
        confidence = record["confidence"][i]
        cards.append(_card(image, evidence.get(f"q({i})"), f"query {i} → {label}"))
        rows.append(f"<tr><td>query {i}</td><td>{label}</td><td>{confidence:.2f}</td></tr>")
    if cards:
        body.append(f'<h2>Queries</h2><div class="grid">{"".join(cards)}</div>')
        body.append("<table><tr><th>query</th><th>label</th><th>confidence</th></tr>" + "".join(rows) + "</table>")
    alternatives = record["alternatives"]
    if alternatives:
        items = "".join(f'<li class="alt">{html.escape(a["english"])}<code>{html.escape(a["rule"])}</code></li>'
                        for a in alternatives)
        body.append(f"<h2>Tied alternatives ({len(alternatives)})</h2><ol>{items}</ol>")
    else:
        body.append("<h2>Tied alternatives</h2><p>none: the rule is the only optimal one.</p>")
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(problem.name)}</title>'
        f"<style>{STYLE}{FACTS_STYLE}</style></head><body>{''.join(body)}</body></html>"
    )


def file_stem(name: str) -> str:
    """A file name for a problem name (anything but letters, digits, '.', '-' and '_' becomes '_')."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "problem"


def write_facts_report(out_dir: Path | str, problem: FactsProblem, record: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json`; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = file_stem(problem.name)
    atomic_write_text(out / f"{stem}.json", json.dumps(record, indent=1))
    page = out / f"{stem}.html"
    atomic_write_text(page, render_facts_html(problem, record))
    return page
