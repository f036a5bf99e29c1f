"""Explanation reports: one self-contained HTML page and one JSON file per solved problem.

The page shows the six context images of A and of B and the two queries, the program the solver used for
each drawn in red over the image (when a pose for it is known), the rule in English and in ASP, for every
image whether it satisfies the rule and the facts that decide it, the tied alternatives and the labels.
Images are embedded as base64 PNG, so the page opens anywhere without its folder.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from dsl.dataset import atomic_write_text
from dsl.raster import render_program
from dsl.syntax import format_image
from dsl.types import ImageProgram, Pose

THUMBNAIL = 220
OVERLAY_COLOUR = np.array([220, 30, 30], dtype=np.float32)


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


def overlay_picture(image: ReportImage) -> np.ndarray:
    """RGB picture: the image in grey, the program's strokes in red on top (or the program alone)."""
    size = 512
    base = image.pixels if image.pixels is not None else np.full((size, size), 255, np.uint8)
    rgb = np.repeat(base[:, :, None].astype(np.float32), 3, axis=2)
    if image.overlay is not None and image.poses is not None:
        ink = 1.0 - render_program(image.overlay, list(image.poses), size=base.shape[0]) / 255.0
        alpha = 0.75 * ink[:, :, None]
        rgb = rgb * (1 - alpha) + OVERLAY_COLOUR * alpha
    elif image.pixels is None and image.program is not None:
        rgb = np.repeat(render_program(image.program, [Pose()] * len(image.program), size)[:, :, None], 3, axis=2)
    return rgb.clip(0, 255).astype(np.uint8)


def png_data_uri(rgb: np.ndarray, size: int = THUMBNAIL) -> str:
    picture = Image.fromarray(rgb).resize((size, size), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _program_text(program: ImageProgram | None) -> str:
    if program is None:
        return "(no program)"
    return " | ".join(", ".join(shape) for shape in format_image(program))


def _figure(image: ReportImage, evidence: dict | None, caption: str) -> str:
    verdict = ""
    facts = ""
    if evidence is not None:
        says = "A" if evidence["in_a"] else "B"
        ok = evidence["correct"]
        css = "neutral" if ok is None else ("ok" if ok else "wrong")
        verdict = f'<span class="{css}">rule says {says}{"" if ok is None else (" ✓" if ok else " ✗")}</span>'
        facts = "".join(
            f'<li class="{"holds" if lit["holds"] else "fails"}">{html.escape(lit["fact"])}</li>'
            for lit in evidence["literals"]
        )
    return (
        f'<figure><img src="{png_data_uri(overlay_picture(image))}" alt="{html.escape(caption)}">'
        f"<figcaption><b>{html.escape(caption)}</b> {verdict}<ul>{facts}</ul>"
        f'<details><summary>program</summary><code>{html.escape(_program_text(image.program))}</code></details>'
        "</figcaption></figure>"
    )


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1500px}
h1{font-size:1.4em} h2{font-size:1.1em;margin-top:1.4em}
.rule{background:#f4f6fb;border-left:4px solid #3b6fd8;padding:.6em 1em}
.rule code,.alt code{display:block;margin-top:.3em;color:#444;white-space:pre-wrap}
.grid{display:flex;flex-wrap:wrap;gap:10px}
figure{margin:0;width:230px;border:1px solid #ddd;padding:4px;background:#fff}
figure img{width:220px;height:220px;display:block}
figcaption{font-size:.8em} figcaption ul{margin:.2em 0;padding-left:1.1em}
.ok{color:#17803d}.wrong{color:#c0261b;font-weight:bold}.neutral{color:#555}
.holds{color:#17803d}.fails{color:#c0261b}
code{font-size:.75em;word-break:break-all}
table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:.3em .6em}
"""


def render_html(name: str, images: Sequence[ReportImage], solution: dict) -> str:
    """The page for one problem; `images` = 6 of A, 6 of B, then the queries; `solution` from to_dict()."""
    explanation = solution["explanation"]
    evidence = {e["image"]: e for e in explanation["evidence"]}
    n_a = n_b = 6
    sides = [("Set A", "a", images[:n_a]), ("Set B", "b", images[n_a:n_a + n_b])]
    body = [f"<h1>Bongard problem {html.escape(name)}</h1>"]
    body.append(
        f'<div class="rule"><b>Rule</b> ({html.escape(explanation["outcome"])}, '
        f'{explanation["errors"]} context images misclassified): {html.escape(explanation["english"])}'
        f'<code>{html.escape(explanation["asp"])}</code></div>'
    )
    for title, key, side in sides:
        figures = "".join(_figure(img, evidence.get(f"{key}({i})"), f"{title[-1]}{i}") for i, img in enumerate(side))
        body.append(f'<h2>{title}</h2><div class="grid">{figures}</div>')
    rows, figures = [], []
    for i, image in enumerate(images[n_a + n_b:]):
        label = "A" if solution["labels"][i] else "B"
        confidence = solution["confidence"][i]
        figures.append(_figure(image, evidence.get(f"q({i})"), f"query {i} → {label}"))
        rows.append(f"<tr><td>query {i}</td><td>{label}</td><td>{confidence:.2f}</td></tr>")
    body.append(f'<h2>Queries</h2><div class="grid">{"".join(figures)}</div>')
    body.append("<table><tr><th>query</th><th>label</th><th>confidence</th></tr>" + "".join(rows) + "</table>")
    alternatives = explanation["alternatives"]
    if alternatives:
        items = "".join(
            f'<li class="alt">{a.get("score", 0):.3f} {html.escape(a["english"])}<code>{html.escape(a["asp"])}</code></li>' for a in alternatives
        )
        body.append(f"<h2>Tied alternatives ({len(alternatives)})</h2><ol>{items}</ol>")
    else:
        body.append("<h2>Tied alternatives</h2><p>none: the rule is the only optimal one.</p>")
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(name)}</title>'
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>"
    )


def write_report(out_dir: Path | str, name: str, images: Sequence[ReportImage], solution: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json`; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    record = dict(solution, name=name, programs=[format_image(i.program) if i.program else None for i in images])
    atomic_write_text(out / f"{name}.json", json.dumps(record, indent=1))
    page = out / f"{name}.html"
    atomic_write_text(page, render_html(name, images, solution))
    return page
