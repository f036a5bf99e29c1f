"""Explanation reports: one self-contained HTML page and one JSON file per solved problem.

The page shows the six context images of A and of B and the two queries, each with the program the
solver used drawn over it in blue (when a pose for it is known) and the parts where it departs from the
rule in orange (`solver.explaining.report_picture`), zoomed to the drawing; beside each picture the image's `why`
(`solver.explaining.why`): for a set-B image or a rejected query what separates it from A, for the others what puts
it in A. Then the rule in English and in ASP, the facts of every image, the tied alternatives and the
labels. Images are embedded as base64 PNG, so the page opens anywhere without its folder and loads
nothing from the network; every name and text is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dsl.dataset import atomic_write_text
from dsl.owned import HTML_MARK, check_replaceable, marked
from dsl.syntax import format_image
from dsl.types import ImageProgram, Pose, Shape
from solver.explaining.report_picture import DIFFERENCE_HEX, PROGRAM_HEX, png_data_uri, to_drawn, why_picture


@dataclass(frozen=True, slots=True)
class ReportImage:
    """One image of the problem as the report shows it."""

    pixels: np.ndarray | None  # uint8 greyscale, None when the problem was given as programs only
    program: ImageProgram | None  # the program the solver reasoned with (shown as text)
    poses: tuple[Pose, ...] | None = None  # where it is drawn on the image, if known
    drawn: ImageProgram | None = None  # the program the poses belong to, if not `program` (its fitted twin)

    @property
    def overlay(self) -> ImageProgram | None:
        return self.drawn if self.drawn is not None else self.program


def overlay_picture(image: ReportImage, marked: Sequence = (), zoom: bool = False) -> np.ndarray:
    """RGB picture: the image in grey, the program in blue on top, the `marked` parts of the program
    (`Why.marked`, indices into `image.program`) in orange."""
    drawn = to_drawn(image.program, image.drawn, marked) if image.program is not None else []
    poses = tuple(image.poses) if image.poses is not None else None
    return why_picture(image.pixels, _with_program_strokes(image.overlay, image.program), poses, drawn, zoom=zoom)


def _with_program_strokes(drawn: ImageProgram | None, program: ImageProgram | None) -> ImageProgram | None:
    """The fitted twin drawn with the strokes of the program the solver reasoned with, action for action
    where their shapes have the same numbers of actions (the picture then shows what the solver read)."""
    if drawn is None or program is None or drawn is program or len(drawn.shapes) != len(program.shapes):
        return drawn
    if any(len(d) != len(p) for d, p in zip(drawn.shapes, program.shapes)):
        return drawn
    return ImageProgram(tuple(Shape(tuple(a.with_stroke(b.stroke) for a, b in zip(d.actions, p.actions)))
                              for d, p in zip(drawn.shapes, program.shapes)))


def _program_text(program: ImageProgram | None) -> str:
    if program is None:
        return "(no program)"
    return " | ".join(", ".join(shape) for shape in format_image(program))


def _pose_text(poses: tuple[Pose, ...] | None) -> str:
    if not poses:
        return ""
    shown = "; ".join(f"at ({p.x:.0f}, {p.y:.0f}), heading {p.heading:.0f}°, scale {p.scale:.0f}" for p in poses)
    return f"pose found: {shown}"


def _marked_text(why: dict) -> str:
    """What the orange marks on the picture are, for its caption."""
    if why.get("differs_at"):
        actions = sorted({(d.get("shape"), d["action"]) for d in why["differs_at"] if "missing" not in d["fields"]})
        names = ", ".join(f"{a}" if s is None else f"{a} (shape {s})" for s, a in actions)
        return f"orange: the rule's action{'s' if len(actions) > 1 else ''} {names}" if actions else ""
    return "orange: the shape in the missing one's place" if why.get("marked") else ""


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


def _figure(image: ReportImage, evidence: dict | None, caption: str) -> str:
    verdict = facts = why_text = ""
    marked: list = []
    if evidence is not None:
        verdict, facts = verdict_html(evidence), decided_html(evidence)
        why = evidence.get("why") or {}
        marked = why.get("marked", [])
        note = _marked_text(why)
        why_text = why_html(why) + (f'<p class="mark">{html.escape(note)}</p>' if note else "")
    pose = _pose_text(image.poses)
    picture = overlay_picture(image, marked, zoom=True)
    return (
        f'<figure><img src="{png_data_uri(picture)}" alt="{html.escape(caption)}">'
        f"<figcaption><b>{html.escape(caption)}</b> {verdict}{why_text}"
        f'{f"<p class=pose>{html.escape(pose)}</p>" if pose else ""}'
        f'<details><summary>facts and program</summary><ul>{facts}</ul>'
        f'<code>{html.escape(_program_text(image.program))}</code></details>'
        "</figcaption></figure>"
    )


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


def _legend() -> str:
    return (
        f'<p class="legend">Pictures, zoomed to the drawing:<br><span style="background:{PROGRAM_HEX}"></span>'
        f'the program the solver read, drawn where it fits the image<br><span style="background:{DIFFERENCE_HEX}">'
        "</span>where the image departs from the rule (the differing actions, or the look-alike shape)</p>"
    )


def rule_html(explanation: dict) -> str:
    return (f'<div class="rule"><b>Rule</b> ({html.escape(explanation["outcome"])}, '
            f'{explanation["errors"]} context images misclassified): {html.escape(explanation["english"])}'
            f'<code>{html.escape(explanation["asp"])}</code></div>')


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


def page_html(name: str, body: Sequence[str], style: str = "") -> str:
    """A self-contained page: the mark of this tool, the viewport for phones, the style inline."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{HTML_MARK}'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{html.escape(name)}</title>'
        f"<style>{STYLE}{style}</style></head><body>{''.join(body)}</body></html>"
    )


def render_html(name: str, images: Sequence[ReportImage], solution: dict) -> str:
    """The page for one problem; `images` = 6 of A, 6 of B, then the queries; `solution` from to_dict()."""
    explanation = solution["explanation"]
    evidence = {e["image"]: e for e in explanation["evidence"]}
    n_a = n_b = 6
    sides = [("Set A", "a", images[:n_a]), ("Set B", "b", images[n_a:n_a + n_b])]
    body = [f"<h1>Bongard problem {html.escape(name)}</h1>", rule_html(explanation), _legend()]
    for title, key, side in sides:
        figures = "".join(_figure(img, evidence.get(f"{key}({i})"), f"{title[-1]}{i}") for i, img in enumerate(side))
        body.append(f'<h2>{title}</h2><div class="grid">{figures}</div>')
    labels = ["A" if label else "B" for label in solution["labels"]]
    figures = [_figure(image, evidence.get(f"q({i})"), f"query {i} → {labels[i]}")
               for i, image in enumerate(images[n_a + n_b:])]
    body += queries_html(figures, solution["labels"], solution["confidence"])
    body.append(alternatives_html(explanation["alternatives"]))
    return page_html(name, body)


def write_report(out_dir: Path | str, name: str, images: Sequence[ReportImage], solution: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json`; returns the HTML path."""
    out = Path(out_dir)
    page = check_replaceable(out / f"{name}.html", "report")
    data = check_replaceable(out / f"{name}.json", "report")
    out.mkdir(parents=True, exist_ok=True)
    record = marked(dict(solution, name=name, programs=[format_image(i.program) if i.program else None for i in images],
                         poses=[[[p.x, p.y, p.heading, p.scale] for p in i.poses] if i.poses else None for i in images]))
    atomic_write_text(data, json.dumps(record, indent=1))
    atomic_write_text(page, render_html(name, images, solution))
    return page
