"""The index page of a folder of explanation reports (`eval --dump DIR`, `demo`): one row per problem with
its rule, each query right or wrong with its confidence, and a link to the problem's report.

Rows start with the problems that went wrong (failed, then fewest queries right), so a reader sees first
what to look at; every column sorts on a click (a few lines of inline JavaScript). The page is one file:
no network, every name and text escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from dsl.dataset import atomic_write_text
from dsl.owned import HTML_MARK, check_replaceable

QUERY_NAMES = ("positive query", "negative query")

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.2em;color:#222}
h1{font-size:1.3em} p.summary{margin:.4em 0 1em}
.table{overflow-x:auto} table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:.35em .55em;vertical-align:top;text-align:left}
th{background:#f1f3f8;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"} th[aria-sort=descending]::after{content:" \\25BC"}
td.rule{min-width:16em;max-width:46em;overflow-wrap:anywhere}
td.name{overflow-wrap:anywhere;max-width:22em} td.num{white-space:nowrap}
.right{color:#17803d}.wrong{color:#c0261b;font-weight:bold}.error{color:#c0261b}
tr.bad{background:#ffe6e1}
small{color:#555}
@media (max-width:600px){body{margin:.5em}.opt{display:none}
 table,thead,tbody,tr,td{display:block} thead tr{display:flex;flex-wrap:wrap;gap:4px;margin-bottom:.4em}
 th{border-radius:4px;font-size:.8em;padding:.25em .45em}
 tbody tr{border:1px solid #ccc;margin:.5em 0;padding:.3em}
 td{border:none;padding:.15em .3em;min-width:0;max-width:none}
 td.num{display:inline-block} td.opt{display:none}
 td[data-label]::before{content:attr(data-label) ": ";color:#555;font-size:.85em}}
"""

SCRIPT = """
function sortBy(col, ascending) {
  var body = document.querySelector("tbody"), th = document.querySelector('th[data-col="' + col + '"]');
  if (!th) { return; }
  document.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  var rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v, nx = parseFloat(x), ny = parseFloat(y);
    var c = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
    return ascending ? c : -c;
  });
  rows.forEach(function (r) { body.appendChild(r); });
  history.replaceState(null, "", "#sort=" + col + (ascending ? "" : "-desc"));
}
document.querySelectorAll("th[data-col]").forEach(function (th) {
  th.addEventListener("click", function () { sortBy(+th.dataset.col, th.getAttribute("aria-sort") !== "ascending"); });
});
var wanted = /^#sort=(\\d+)(-desc)?$/.exec(location.hash);
if (wanted) { sortBy(+wanted[1], !wanted[2]); }
"""


def _cell(text: str, value, css: str = "", label: str = "") -> str:
    """A cell: its sort value in data-v; its column's name in data-label (shown before it on a phone)."""
    cls = f' class="{css}"' if css else ""
    named = f' data-label="{html.escape(label)}"' if label else ""
    return f'<td{cls}{named} data-v="{html.escape(str(value))}">{text}</td>'


def _query_cell(record: dict, k: int) -> str:
    predicted, truth = record.get("predicted"), record.get("true") or [True, False]
    if not predicted or k >= len(predicted):
        return _cell("—", -1, "num", QUERY_NAMES[k])
    confidence = (record.get("confidence") or [0.0] * len(predicted))[k]
    right = predicted[k] == truth[k]
    label = "A" if predicted[k] else "B"
    mark = "✓" if right else "✗"
    text = f'<span class="{"right" if right else "wrong"}">{label} {mark}</span> <small>{confidence:.2f}</small>'
    return _cell(text, f"{int(right)}{confidence:.4f}", "num", QUERY_NAMES[k])


def _row(record: dict, out: Path) -> str:
    name = str(record["name"])
    error = record.get("error")
    report = out / f"{name}.html"
    shown = html.escape(name)
    link = f'<a href="{html.escape(quote(name))}.html">{shown}</a>' if report.exists() else shown
    english = f"failed: {error}" if error else str(record.get("english") or "no rule")
    rule = f'<span class="error">{html.escape(english)}</span>' if error else html.escape(english)
    correct = int(record.get("correct") or 0)
    n_queries = len(record.get("true") or QUERY_NAMES)
    bad = error is not None or correct < n_queries
    cells = [
        _cell(link, name, "name"),
        _cell(html.escape(str(record.get("kind") or "")), record.get("kind") or "", "opt"),
        _cell(rule, english, "rule"),
        _query_cell(record, 0),
        _query_cell(record, 1),
        _cell(f"{correct}/{n_queries}", correct - (error is not None), "num", "right"),
        _cell(f"{float(record.get('seconds') or 0.0):.1f} s", float(record.get("seconds") or 0.0), "opt num"),
    ]
    return f'<tr{" class=bad" if bad else ""}>{"".join(cells)}</tr>'


def wrong_first(records: Sequence[dict]) -> list[dict]:
    """Failed problems first, then by fewest queries right, then by name."""
    return sorted(records, key=lambda r: (r.get("error") is None, int(r.get("correct") or 0), str(r["name"])))


def render_index(records: Sequence[dict], out: Path, title: str) -> str:
    rows = wrong_first(records)
    n_queries = sum(len(r.get("true") or QUERY_NAMES) for r in rows)
    right = sum(int(r.get("correct") or 0) for r in rows)
    failed = sum(r.get("error") is not None for r in rows)
    share = f" ({100 * right / n_queries:.1f}\u00a0%)" if n_queries else ""
    summary = f"{len(rows)} problems, {right} of {n_queries} queries right{share}, {failed} failed."
    headers = ["problem", "type", "rule", "positive query", "negative query", "right", "time"]
    optional = {"type", "time"}
    head = "".join(f'<th data-col="{k}" scope="col"{" class=opt" if h in optional else ""}>{h}</th>'
                   for k, h in enumerate(headers))
    body = "".join(_row(r, out) for r in rows)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{HTML_MARK}'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class=summary>{html.escape(summary)} Wrong ones first; a click on a "
        "column heading sorts by it (and the address keeps the order: #sort=5-desc). Each query: the label "
        "given (✓ right, ✗ wrong) and its confidence.</p>"
        f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
        f"<script>{SCRIPT}</script></body></html>"
    )


def write_index(out_dir: Path | str, records: Sequence[dict], title: str = "bongard-solver reports") -> Path:
    """Write `<out_dir>/index.html` for the problems of `records` (records of `eval`: name, kind, english,
    true, predicted, correct, confidence, seconds, error); returns its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = check_replaceable(out / "index.html", "index page")
    atomic_write_text(path, render_index(records, out, title))
    return path
