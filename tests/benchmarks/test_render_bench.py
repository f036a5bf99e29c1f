"""Smoke test of `bongard-solver bench render` on a tiny workload (no timing assertions)."""

from __future__ import annotations

import json

import benchmarks.render as render_bench


def test_render_benchmark_writes_its_figures(tmp_path):
    out = tmp_path / "render.json"
    argv = ["--n", "4", "--sizes", "512", "128", "--repeats", "1", "--problems", "1", "--json", str(out)]
    assert render_bench.main(argv) == 0
    figures = json.loads(out.read_text())
    for key in ("images_per_second_512", "images_per_second_128", "ms_per_image_512", "problems_per_second_generate"):
        assert key in figures
    assert figures["images_per_second_512"] > 0 and figures["images_per_second_128"] > 0
    generate_rate = figures["problems_per_second_generate"]
    assert generate_rate is None or generate_rate > 0


def test_workload_is_deterministic():
    first, second = render_bench.workload(6, seed=3), render_bench.workload(6, seed=3)
    assert [p for p, _ in first] == [p for p, _ in second]
    assert [q for _, q in first] == [q for _, q in second]
    assert any(1 <= len(p.shapes) <= 2 for p, _ in first)
