"""Explanation reports: one self-contained HTML page and one JSON file per solved problem.

The page shows the six context images of A and of B and the two queries, each with the program the
solver used drawn over it in blue (when a pose for it is known) and the parts where it departs from the
rule in orange (`solver.explaining.report_picture`), zoomed to the drawing; beside each picture the image's `why`
(`solver.explaining.why`): for a set-B image or a rejected query what separates it from A, for the others what puts
it in A. Then the rule in English and in ASP, the facts of every image, the tied alternatives and the
labels. Images are embedded as base64 PNG, so the page opens anywhere without its folder and loads
nothing from the network; every name and text is escaped. The page's skeleton, its sections and the JSON beside
it are `solver.explaining.page`'s; this module draws the pictures.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dsl.syntax import format_image
from dsl.types import ImageProgram, Pose, Shape
from solver.explaining.page import decided_html, explanation_page, legend_html, page_paths, verdict_html, why_html
from solver.explaining.page import write_page
from solver.explaining.report_picture import png_data_uri, to_drawn, why_picture

LEGEND = legend_html("Pictures, zoomed to the drawing:", "the program the solver read, drawn where it fits the image",
                     "where the image departs from the rule (the differing actions, or the look-alike shape)")


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


def render_html(name: str, images: Sequence[ReportImage], solution: dict) -> str:
    """The page for one problem; `images` = 6 of A, 6 of B, then the queries; `solution` from to_dict()."""
    return explanation_page(name, solution, images[:6], images[6:12], images[12:], _figure, LEGEND)


def write_report(out_dir: Path | str, name: str, images: Sequence[ReportImage], solution: dict) -> Path:
    """Write `<out_dir>/<name>.html` and `<out_dir>/<name>.json` (replacing only files this tool wrote); returns
    the HTML path."""
    paths = page_paths(out_dir, name, "report")
    record = dict(solution, name=name, programs=[format_image(i.program) if i.program else None for i in images],
                  poses=[[[p.x, p.y, p.heading, p.scale] for p in i.poses] if i.poses else None for i in images])
    return write_page(paths, record, render_html(name, images, solution))
