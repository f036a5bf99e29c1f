"""`eval --split all`: the Bongard-LOGO paper's table (FF / BA / CM / NV) beside the published baselines.

Which splits stand for the four columns depends on the dataset root (the first family found wins):

| root | FF | BA | CM | NV |
|---|---|---|---|---|
| the released dataset | `test_ff` | `test_bd` | `test_hd_comb` | `test_hd_novel` |
| `official_dev`-shaped (`dev_*`) | `dev_ff` | `dev_bd` | `dev_hd` | — |
| generated (`bongard-solver generate`) | `ff` | `bd` | `hd` | — |

`dev_hd` and a generated root's `hd` hold abstract problems of single attributes and pairs of them, all
seen in training (the official_dev sample leaves out the novel attribute): they stand in for CM, and NV
has no problems there. The table says which splits ran. Accuracy is the share of queries labelled
right (`solver.app.commands.summarise`).

    bongard-solver eval --data ROOT --split all --json OUT.json [--ray local] ...

runs each split as `eval --split NAME` would, into OUT.<split>.json (each resumable through its own
OUT.<split>.json.jsonl), then writes OUT.json (the table and each split's figures), OUT.md (the table)
and OUT.png (the bar chart), and prints the table.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

from dsl.dataset import SPLIT_FILE, DatasetError, atomic_write_text, read_splits
from dsl.owned import PNG_TEXT, write_atomically

COLUMNS = ("FF", "BA", "CM", "NV")
COLUMN_NAMES = {"FF": "free-form", "BA": "basic", "CM": "combinatorial abstract", "NV": "novel abstract"}
SPLIT_FAMILIES = (
    ("released test splits", ("test_ff", "test_bd", "test_hd_comb", "test_hd_novel")),
    ("official_dev-shaped dev splits", ("dev_ff", "dev_bd", "dev_hd", None)),
    ("generated splits", ("ff", "bd", "hd", None)),
)


@dataclass(frozen=True)
class Baseline:
    name: str
    accuracy: tuple  # FF, BA, CM, NV (%); None where the paper gives no figure
    note: str = ""


BASELINES = (
    Baseline("Meta-Baseline-PS", (68.2, 75.7, 67.4, 71.5)),
    Baseline("SVM-Mimic (2023)", (73.3, 83.9, 69.8, 74.5)),
    Baseline("Human experts", (92.1, 99.3, 90.7, 90.7), "one figure for CM and NV together"),
)
OURS = "bongard-solver"


def benchmark_splits(available: dict) -> tuple[str, dict[str, str]]:
    """(the family's description, column -> split name) for the splits of a split file (`available`:
    name -> problem names). A column without a split in the family is left out."""
    for description, names in SPLIT_FAMILIES:
        if any(name in available for name in names if name):
            return description, {c: n for c, n in zip(COLUMNS, names) if n and n in available}
    wanted = " / ".join(", ".join(n for n in names if n) for _, names in SPLIT_FAMILIES)
    raise ValueError(f"no benchmark splits (looked for {wanted}; found {', '.join(sorted(available)) or 'none'})")


def table_rows(summaries: dict[str, dict], columns: dict[str, str], method: str = OURS) -> list[dict]:
    """Rows of the table: ours (`method`; from the per-split summaries, keyed by split name), then the
    baselines."""
    ours = {c: 100 * summaries[s]["accuracy"] for c, s in columns.items() if summaries[s]["n_queries"]}
    rows = [{"method": method, **{c: ours.get(c) for c in COLUMNS},
             "problems": {c: summaries[s]["n_problems"] for c, s in columns.items()}}]
    rows += [{"method": b.name, **dict(zip(COLUMNS, b.accuracy)), "note": b.note} for b in BASELINES]
    return rows


def markdown(rows: list[dict], columns: dict[str, str], description: str) -> str:
    def cell(value) -> str:
        return "—" if value is None else f"{value:.1f}"

    problems = rows[0]["problems"]
    lines = [
        f"Accuracy (% of queries) on the {description}: "
        + ", ".join(f"{c} = `{s}` ({problems[c]} problems)" for c, s in columns.items())
        + "".join(f", {c}: no split" for c in COLUMNS if c not in columns) + ".",
        "",
        "| method | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for row in rows:
        name = f"**{row['method']}**" if row is rows[0] else row["method"]
        lines.append(f"| {name} | " + " | ".join(cell(row[c]) for c in COLUMNS) + " |")
    notes = [f"{row['method']}: {row['note']}." for row in rows if row.get("note")]
    lines += ["", "Published figures: Meta-Baseline-PS from the Bongard-LOGO paper (Nie et al., 2020), SVM-Mimic "
              "(2023); " + " ".join(notes)]
    return "\n".join(lines) + "\n"


PALETTE = ((31, 119, 180), (160, 160, 160), (110, 110, 110), (230, 140, 40))
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 960, 610, 70, 20, 90, 160


def _font(size: int):
    return ImageFont.load_default(size=size)


def draw_chart(rows: list[dict], columns: dict[str, str], description: str, path) -> None:
    """A grouped bar chart (one group per column, one bar per method) as a PNG, drawn with Pillow."""
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    pen = ImageDraw.Draw(image)
    small, label, title = _font(13), _font(15), _font(18)
    plot_h, plot_w = HEIGHT - TOP - BOTTOM, WIDTH - LEFT - RIGHT

    def y_of(value: float) -> float:
        return TOP + plot_h * (1 - value / 100)

    for tick in range(0, 101, 20):
        pen.line([(LEFT, y_of(tick)), (WIDTH - RIGHT, y_of(tick))], fill=(225, 225, 225))
        pen.text((LEFT - 8, y_of(tick)), str(tick), fill="black", font=small, anchor="rm")
    pen.text((LEFT - 8, TOP - 30), "accuracy (% of queries)", fill="black", font=small, anchor="lm")
    group_w = plot_w / len(COLUMNS)
    bar_w = group_w * 0.8 / len(rows)
    for g, column in enumerate(COLUMNS):
        x0 = LEFT + g * group_w + group_w * 0.1
        for k, row in enumerate(rows):
            value = row[column]
            left = x0 + k * bar_w
            if value is None:
                pen.text((left + bar_w / 2, y_of(0) - 4), "n/a", fill=PALETTE[k], font=small, anchor="mb")
                continue
            pen.rectangle([left + 1, y_of(value), left + bar_w - 2, y_of(0)], fill=PALETTE[k % len(PALETTE)])
            pen.text((left + bar_w / 2, y_of(value) - 3), f"{value:.1f}", fill="black", font=small, anchor="mb")
        split = columns.get(column)
        name = COLUMN_NAMES[column] if column != "CM" or str(split).startswith("test_") else "abstract (stands in for CM)"
        where = f"{split}, {rows[0]['problems'][column]} problems" if split else "no split"
        pen.text((x0 + group_w * 0.4, y_of(0) + 8), column, fill="black", font=label, anchor="mt")
        pen.text((x0 + group_w * 0.4, y_of(0) + 28), name, fill=(90, 90, 90), font=small, anchor="mt")
        pen.text((x0 + group_w * 0.4, y_of(0) + 44), where, fill=(90, 90, 90), font=small, anchor="mt")
    pen.line([(LEFT, y_of(0)), (WIDTH - RIGHT, y_of(0))], fill="black")
    pen.text((WIDTH / 2, 18), "Bongard-LOGO accuracy beside published figures", fill="black", font=title, anchor="mm")
    pen.text((WIDTH / 2, 40), f"{rows[0]['method']} on the {description}", fill=(60, 60, 60), font=label, anchor="mm")
    _legend(pen, rows, small)
    pen.text((LEFT, HEIGHT - 14), "The other rows are published figures for the released test splits (600 / 480 / 400 / 320 "
             "problems), not on these problems", fill=(90, 90, 90), font=small, anchor="lm")
    buffer = io.BytesIO()
    info = PngImagePlugin.PngInfo()
    for key, value in PNG_TEXT.items():
        info.add_text(key, value)
    image.save(buffer, format="PNG", pnginfo=info)
    write_atomically(path, buffer.getvalue())  # the chart under its name is whole, even on a full disk


def _legend(pen: ImageDraw.ImageDraw, rows: list[dict], font) -> None:
    x, y = LEFT, HEIGHT - 66
    for k, row in enumerate(rows):
        text = row["method"] + (f" ({row['note']})" if row.get("note") else "")
        width = 34 + pen.textlength(text, font=font)
        if x + width > WIDTH - RIGHT:
            x, y = LEFT, y + 22
        pen.rectangle([x, y, x + 14, y + 14], fill=PALETTE[k % len(PALETTE)])
        pen.text((x + 20, y + 7), text, fill="black", font=font, anchor="lm")
        x += width


def split_output(out: Path, split: str) -> Path:
    return out.with_name(f"{out.stem}.{split}{out.suffix or '.json'}")


def run_benchmark(root: str, out: Path, evaluate_split: Callable[[str, Path], dict], oracle: bool = False) -> dict:
    """Every benchmark split of `root` through `evaluate_split(split, its output)`; the table's files.
    `oracle`: the solver read the ground-truth programs (the table's row says so)."""
    try:
        description, columns = benchmark_splits(read_splits(root))
    except ValueError as error:
        raise DatasetError(f"{Path(root) / SPLIT_FILE}: {error}") from None
    print(f"--split all on {root}: the {description} ({', '.join(f'{c} = {s}' for c, s in columns.items())})",
          file=sys.stderr)
    summaries = {split: evaluate_split(split, split_output(out, split)) for split in columns.values()}
    rows = table_rows(summaries, columns, f"{OURS} ({'ground-truth programs' if oracle else 'from pixels'})")
    text = markdown(rows, columns, description)
    atomic_write_text(out.with_suffix(".md"), text)
    draw_chart(rows, columns, description, out.with_suffix(".png"))
    figures = {split: {k: v for k, v in summary.items() if k != "problems"} | {"file": str(split_output(out, split))}
               for split, summary in summaries.items()}
    result = {"splits_used": description, "columns": columns, "table": rows, "splits": figures}
    atomic_write_text(out, json.dumps(result, indent=1))
    return result | {"markdown": text}
