import json

import numpy as np
import pytest

from dsl.dataset import load_problem, read_programs
from dsl.syntax import parse_image
from dsl.types import Pose
from solver.solving import solve_folder
from solver.explaining.report import ReportImage, overlay_picture, render_html, write_report

from tests.official import OFFICIAL_DEV
TRIANGLE = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.833", "line_normal_1.000-0.833"]])


def fake_solution(n_queries=2):
    evidence = [
        {"image": f"{side}({i})", "role": side.upper(), "in_a": side == "a", "correct": True,
         "literals": [{"literal": "attr(convex)", "holds": side == "a", "fact": "convex = 1"}]}
        for side in ("a", "b") for i in range(6)
    ] + [{"image": f"q({i})", "role": "query", "in_a": i == 0, "correct": None, "literals": []} for i in range(n_queries)]
    return {
        "rule": "concept(I) :- attr(I, convex).",
        "labels": [True, False],
        "confidence": [1.0, 0.75],
        "explanation": {"outcome": "optimal", "asp": "concept(I) :- attr(I, convex).",
                        "english": "every image in A is convex; no image in B is", "errors": 0, "length": 1,
                        "evidence": evidence, "alternatives": [{"asp": "alt <rule>", "english": "is closed"}],
                        "seconds": 0.01},
    }


def test_overlay_draws_the_program_in_blue_and_the_marked_action_in_orange():
    pixels = np.full((512, 512), 255, np.uint8)
    image = ReportImage(pixels, TRIANGLE, (Pose(0, 0, 0, 150),))
    picture = overlay_picture(image)
    assert picture.shape == (512, 512, 3)
    blue = (picture[:, :, 2] > 150) & (picture[:, :, 0] < 150) & (picture[:, :, 1] < 180)
    orange = (picture[:, :, 0] > 200) & (picture[:, :, 1] > 80) & (picture[:, :, 2] < 80)
    assert blue.sum() > 500 and orange.sum() == 0
    marked = overlay_picture(image, [(0, 1)])
    orange = (marked[:, :, 0] > 200) & (marked[:, :, 1] > 80) & (marked[:, :, 2] < 80)
    assert orange.sum() > 300
    rows, cols = np.nonzero(orange)  # the second side: from (150, 0) heading 120 degrees, its middle at x = 112.5
    assert abs(cols.mean() - (258 + 0.654 * 112.5)) < 10
    every = overlay_picture(image, [(0, 0), (0, 1), (0, 2)])  # more marked actions than an image has shapes
    assert ((every[:, :, 0] > 200) & (every[:, :, 1] > 80) & (every[:, :, 2] < 80)).sum() > 2 * orange.sum()
    plain = overlay_picture(ReportImage(pixels, TRIANGLE, None))
    assert (plain == 255).all()


def test_page_shows_rule_images_evidence_alternatives_and_labels(tmp_path):
    images = [ReportImage(np.full((64, 64), 255, np.uint8), TRIANGLE, None) for _ in range(14)]
    page = write_report(tmp_path, "demo_problem", images, fake_solution())
    text = page.read_text()
    assert text.count("<figure>") == 14
    assert "every image in A is convex" in text and "concept(I) :- attr(I, convex)." in text
    assert "Tied alternatives (1)" in text and "alt &lt;rule&gt;" in text  # escaped
    assert "query 0 → A" in text and "query 1 → B" in text and "0.75" in text
    assert text.count("data:image/png;base64,") == 14
    record = json.loads((tmp_path / "demo_problem.json").read_text())
    assert record["labels"] == [True, False] and len(record["programs"]) == 14


def test_html_escapes_problem_text():
    images = [ReportImage(None, TRIANGLE, None) for _ in range(14)]
    assert "<script>" not in render_html("<script>", images, fake_solution())
    solution = fake_solution()
    solution["explanation"]["evidence"][6]["why"] = {"sentence": "it has <b>no</b> square", "differs_at": [],
                                                     "failing": [], "found": [], "marked": [[0, None]]}
    page = render_html("p", images, solution)
    assert "it has &lt;b&gt;no&lt;/b&gt; square" in page and "<b>no</b>" not in page
    assert "orange: the shape in the missing one" in page


@pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official dev data not present (BONGARD_OFFICIAL_DEV)")
def test_oracle_folder_solves_and_fits_poses_for_the_report(tmp_path):
    folder = sorted((OFFICIAL_DEV / "bd" / "images").iterdir())[0]
    solved = solve_folder(folder, None, oracle=True)
    assert solved.solution.labels == (True, False)
    assert len(solved.images) == 14 and all(i.poses is not None for i in solved.images)
    truth = load_problem(folder, read_programs(folder.parent.parent))
    shown = [i.program for i in solved.images]
    assert shown == [i.program for i in truth.in_solving_order]
    page = write_report(tmp_path, solved.name, solved.images, solved.solution.to_dict())
    assert page.exists() and page.with_suffix(".json").exists()


def test_report_carries_each_image_why_in_html_and_json(tmp_path):
    from dsl.generate import ProblemKind, generate_problem, plan_problems
    from solver.solving.api import ProblemInput, solve_problem

    problem = generate_problem(plan_problems(ProblemKind.FREE_FORM, 1, 5)[0], 5)
    programs = list(problem.positives[:6]) + list(problem.negatives[:6]) + [problem.positives[6], problem.negatives[6]]
    poses = list(problem.positive_poses[:6]) + list(problem.negative_poses[:6]) + [problem.positive_poses[6],
                                                                                problem.negative_poses[6]]
    solution = solve_problem(ProblemInput(programs[:6], programs[6:12], programs[12:]))
    images = [ReportImage(None, p, tuple(q)) for p, q in zip(programs, poses)]
    page = write_report(tmp_path, problem.name, images, solution.to_dict()).read_text()
    record = json.loads((tmp_path / f"{problem.name}.json").read_text())
    whys = {e["image"]: e["why"] for e in record["explanation"]["evidence"]}
    assert all(whys[f"b({k})"]["differs_at"] and whys[f"b({k})"]["marked"] for k in range(6))
    assert all(not whys[f"a({k})"]["differs_at"] for k in range(6))
    first = whys["b(0)"]["differs_at"][0]
    assert set(first) >= {"action", "rule", "image"} and first["action"] >= 1
    assert page.count('<p class="why">') == 14 and "orange: the rule&#x27;s action" in page
    assert len(record["poses"]) == 14 and len(record["poses"][0]) == len(programs[0].shapes)
