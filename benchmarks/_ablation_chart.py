"""The chart of `bench ablations`: one group of bars per column of the paper (FF / BA / CM / NV), one bar per system
with its 95 % interval as a whisker, then the published baselines and the human experts (no whiskers: the paper
gives none), drawn with Pillow."""

from __future__ import annotations

import os
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

from dsl.owned import PNG_TEXT
from solver.app.paper_table import BASELINES, COLUMN_NAMES, COLUMNS

SYSTEM_COLOURS = ((31, 119, 180), (44, 160, 44), (255, 127, 14), (214, 39, 40), (148, 103, 189), (140, 86, 75),
                  (227, 119, 194), (188, 189, 34), (23, 190, 207), (174, 199, 232), (255, 187, 120), (152, 223, 138),
                  (0, 0, 128))  # no greys: those are the published figures
PUBLISHED_COLOURS = ((200, 200, 200), (160, 160, 160), (90, 90, 90))
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 1280, 680, 70, 20, 80, 190
FLOOR = 40.0  # % at the foot of the axis: every system and baseline lies above it, and the intervals show


def draw(table: dict, columns: dict[str, str], planned: dict[str, int], description: str, path) -> None:
    """`table`: system -> split -> summary (`benchmarks.ablations.summaries`); the PNG written to `path`."""
    shown = [c for c in COLUMNS if c in columns] + [c for c in columns if c not in COLUMNS]
    bars = [(name, SYSTEM_COLOURS[k % len(SYSTEM_COLOURS)], {c: per_split.get(columns[c]) for c in shown})
            for k, (name, per_split) in enumerate(table.items())]
    bars += [(f"{b.name} (published)", PUBLISHED_COLOURS[k % len(PUBLISHED_COLOURS)],
              {c: dict(zip(COLUMNS, b.accuracy)).get(c) for c in shown}) for k, b in enumerate(BASELINES)]
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    pen = ImageDraw.Draw(image)
    small, label, title = (ImageFont.load_default(size=s) for s in (12, 15, 18))
    plot_h, plot_w = HEIGHT - TOP - BOTTOM, WIDTH - LEFT - RIGHT

    def y_of(value: float) -> float:
        return TOP + plot_h * (1 - (max(value, FLOOR) - FLOOR) / (100 - FLOOR))

    for tick in range(int(FLOOR), 101, 10):
        pen.line([(LEFT, y_of(tick)), (WIDTH - RIGHT, y_of(tick))], fill=(228, 228, 228))
        pen.text((LEFT - 8, y_of(tick)), str(tick), fill="black", font=small, anchor="rm")
    pen.text((LEFT - 8, TOP - 22), f"accuracy (% of queries; axis from {FLOOR:.0f})", fill="black", font=small,
             anchor="lm")
    group_w = plot_w / max(1, len(shown))
    bar_w = group_w * 0.86 / len(bars)
    for g, column in enumerate(shown):
        x0 = LEFT + g * group_w + group_w * 0.07
        for k, (_, colour, values) in enumerate(bars):
            _bar(pen, x0 + k * bar_w, bar_w, values[column], colour, y_of, small)
        split = columns[column]
        name = COLUMN_NAMES.get(column, column)
        if column == "CM" and not split.startswith("test_"):
            name = "abstract (stands in for CM)"
        centre = x0 + group_w * 0.43
        pen.text((centre, y_of(FLOOR) + 8), column, fill="black", font=label, anchor="mt")
        pen.text((centre, y_of(FLOOR) + 27), name, fill=(90, 90, 90), font=small, anchor="mt")
        pen.text((centre, y_of(FLOOR) + 43), f"{split}, {planned[split]} problems", fill=(90, 90, 90), font=small,
                 anchor="mt")
    pen.line([(LEFT, y_of(FLOOR)), (WIDTH - RIGHT, y_of(FLOOR))], fill="black")
    pen.text((WIDTH / 2, 18), "What each part of the solver buys: ablations beside the published figures", fill="black",
             font=title, anchor="mm")
    pen.text((WIDTH / 2, 42), f"on the {description}; whiskers: Wilson 95 % intervals", fill=(60, 60, 60), font=label,
             anchor="mm")
    _legend(pen, [(name, colour) for name, colour, _ in bars], small)
    pen.text((LEFT, HEIGHT - 12), "Published rows are the released test splits' figures (600 / 480 / 400 / 320 "
             "problems), not these problems; human experts: one figure for CM and NV", fill=(90, 90, 90), font=small,
             anchor="lm")
    info = PngImagePlugin.PngInfo()
    for key, value in PNG_TEXT.items():
        info.add_text(key, value)
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    image.save(temporary, format="PNG", pnginfo=info)
    os.replace(temporary, path)  # the chart under its name is whole


def _bar(pen: ImageDraw.ImageDraw, left: float, width: float, value, colour, y_of, font) -> None:
    """One bar: a system's summary (accuracy, its interval) or a published figure (a number), or nothing."""
    if value is None:
        return
    if isinstance(value, dict):
        accuracy, (low, high) = 100 * value["accuracy"], (100 * v for v in value["accuracy_95"])
    else:
        accuracy, low, high = value, None, None
    pen.rectangle([left + 1, y_of(accuracy), left + width - 1, y_of(FLOOR)], fill=colour)
    if low is not None:
        middle = left + width / 2
        pen.line([(middle, y_of(low)), (middle, y_of(high))], fill="black", width=1)
        for y in (y_of(low), y_of(high)):
            pen.line([(middle - width / 4, y), (middle + width / 4, y)], fill="black", width=1)


def _legend(pen: ImageDraw.ImageDraw, entries: list[tuple[str, tuple]], font) -> None:
    x, y = LEFT, HEIGHT - BOTTOM + 70
    for name, colour in entries:
        width = 30 + pen.textlength(name, font=font)
        if x + width > WIDTH - RIGHT:
            x, y = LEFT, y + 20
        pen.rectangle([x, y, x + 13, y + 13], fill=colour)
        pen.text((x + 18, y + 7), name, fill="black", font=font, anchor="lm")
        x += width
