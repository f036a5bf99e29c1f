"""The explanation page of a solved problem and the JSON file beside it: the scaffolding both report writers
build on, the LOGO one (`solver.explaining.report`: each image a picture) and the one of problems given as facts
(`solver.facts_in.report`: each image its facts).

    <name>.html  the problem's name, the rule in English and in ASP, notes (the facts path: its modes), a
                 legend of the colours, set A, set B, the queries with their labels and confidences, the tied
                 alternatives; each image a figure the report draws (`Figure`) from its evidence entry
                 (`solver.explaining.explanation.ImageEvidence.to_dict`: what the rule says, whether that is
                 right, the facts that decide each literal, the `why`)
    <name>.json  the record the page was drawn from, with the tool's mark (`written_by`) as its first key

The page is self-contained (style inline, no network) and escapes every text it shows. Both files replace only
files this tool wrote; the page is drawn before either is written.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path

from dsl.dataset import atomic_write_text
from dsl.owned import HTML_MARK, check_replaceable, marked_json
from solver.explaining.report_picture import DIFFERENCE_HEX, PROGRAM_HEX

Figure = Callable[[object, dict | None, str], str]  # (image, its evidence entry or None, caption) -> HTML

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1500px}
h1{font-size:1.4em;overflow-wrap:anywhere} h2{font-size:1.1em;margin-top:1.4em}
.rule{background:#f4f6fb;border-left:4px solid #3b6fd8;padding:.6em 1em;overflow-wrap:anywhere}
.rule code,.alt code{display:block;margin-top:.3em;color:#444;white-space:pre-wrap}
.legend{font-size:.85em;margin:.6em 0} .legend span{display:inline-block;width:1.6em;height:.5em;
 margin:0 .3em 0 .8em;vertical-align:middle;border-radius:2px}
.grid{display:flex;flex-wrap:wrap;gap:10px}
figure{margin:0;width:250px;border:1px solid #ddd;padding:4px;background:#fff}
figure img{width:240px;height:240px;display:block}
figcaption{font-size:.8em} figcaption ul{margin:.2em 0;padding-left:1.1em}
.why{margin:.3em 0;font-size:1.05em;line-height:1.3}.mark{margin:.2em 0;color:#b35a00}
.pose{margin:.2em 0;color:#666;font-size:.9em}
.ok{color:#17803d}.wrong{color:#c0261b;font-weight:bold}.neutral{color:#555}
.holds{color:#17803d}.fails{color:#c0261b}
code{font-size:.75em;word-break:break-all}
table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:.3em .6em}
@media (max-width:600px){body{margin:.6em}.grid{gap:6px}figure{width:calc(50% - 13px)}
 figure img{width:100%;height:auto}}
"""


def page_html(name: str, body: Sequence[str], style: str = "") -> str:
    """A self-contained page: the mark of this tool, the viewport for phones, the style inline."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{HTML_MARK}'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{html.escape(name)}</title>'
        f"<style>{STYLE}{style}</style></head><body>{''.join(body)}</body></html>"
    )


def rule_html(explanation: dict) -> str:
    return (f'<div class="rule"><b>Rule</b> ({html.escape(explanation["outcome"])}, '
            f'{explanation["errors"]} context images misclassified): {html.escape(explanation["english"])}'
            f'<code>{html.escape(explanation["asp"])}</code></div>')


def legend_html(intro: str, matches: str, differs: str) -> str:
    """The legend of the two colours (texts of this tool, not escaped): what is drawn in the program's colour
    (`matches`), what in the difference colour (`differs`)."""
    return (f'<p class="legend">{intro}<br><span style="background:{PROGRAM_HEX}"></span>{matches}'
            f'<br><span style="background:{DIFFERENCE_HEX}"></span>{differs}</p>')


def verdict_html(evidence: dict) -> str:
    """What the rule says of the image, marked right or wrong for a context image."""
    says = "A" if evidence["in_a"] else "B"
    ok = evidence["correct"]
    css = "neutral" if ok is None else ("ok" if ok else "wrong")
    return f'<span class="{css}">rule says {says}{"" if ok is None else (" ✓" if ok else " ✗")}</span>'


def decided_html(evidence: dict) -> str:
    """The image's facts that decide each literal, as list items (green: holds, red: fails)."""
    return "".join(f'<li class="{"holds" if lit["holds"] else "fails"}">{html.escape(lit["fact"])}</li>'
                   for lit in evidence["literals"])


def why_html(why: dict) -> str:
    return f'<p class="why">{html.escape(why.get("sentence", ""))}</p>'


def queries_html(figures: Sequence[str], labels: Sequence[bool], confidence: Sequence[float]) -> list[str]:
    """The queries' figures and the table of their labels and confidences (nothing without queries)."""
    rows = [f"<tr><td>query {i}</td><td>{'A' if label else 'B'}</td><td>{c:.2f}</td></tr>"
            for i, (label, c) in enumerate(zip(labels, confidence))]
    if not figures:
        return []
    return [f'<h2>Queries</h2><div class="grid">{"".join(figures)}</div>',
            "<table><tr><th>query</th><th>label</th><th>confidence</th></tr>" + "".join(rows) + "</table>"]


def alternatives_html(alternatives: Sequence[dict]) -> str:
    if not alternatives:
        return "<h2>Tied alternatives</h2><p>none: the rule is the only optimal one.</p>"
    items = "".join(f'<li class="alt">{a.get("score", 0):.3f} {html.escape(a["english"])}'
                    f'<code>{html.escape(a["asp"])}</code></li>' for a in alternatives)
    return f"<h2>Tied alternatives ({len(alternatives)})</h2><ol>{items}</ol>"


def explanation_page(name: str, record: dict, set_a: Sequence, set_b: Sequence, queries: Sequence, figure: Figure,
                     legend: str, notes: Sequence[str] = (), style: str = "") -> str:
    """The page of one solved problem; `record`: its JSON record (`explanation`, `labels`, `confidence`); each
    image drawn by `figure`; `notes`: sections between the rule and the legend; `style`: CSS added to STYLE."""
    explanation = record["explanation"]
    evidence = {e["image"]: e for e in explanation["evidence"]}
    body = [f"<h1>Bongard problem {html.escape(name)}</h1>", rule_html(explanation), *notes, legend]
    for title, key, side in (("Set A", "a", set_a), ("Set B", "b", set_b)):
        figures = "".join(figure(image, evidence.get(f"{key}({i})"), f"{title[-1]}{i}") for i, image in enumerate(side))
        body.append(f'<h2>{title}</h2><div class="grid">{figures}</div>')
    labels = ["A" if label else "B" for label in record["labels"]]
    figures = [figure(image, evidence.get(f"q({i})"), f"query {i} → {labels[i]}") for i, image in enumerate(queries)]
    body += queries_html(figures, record["labels"], record["confidence"])
    body.append(alternatives_html(explanation["alternatives"]))
    return page_html(name, body, style)


def page_paths(out_dir: Path | str, stem: str, option: str) -> tuple[Path, Path]:
    """`<out_dir>/<stem>.html` and `<out_dir>/<stem>.json`; an OutputError naming `option` if either is a file this
    tool did not write."""
    out = Path(out_dir)
    return check_replaceable(out / f"{stem}.html", option), check_replaceable(out / f"{stem}.json", option)


def write_page(paths: tuple[Path, Path], record: dict, page: str) -> Path:
    """Write the JSON `record` (with the tool's mark) and the `page` at `paths` (from `page_paths`), creating
    their folder; returns the page's path."""
    page_path, data_path = paths
    page_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(data_path, marked_json(record))
    atomic_write_text(page_path, page)
    return page_path
