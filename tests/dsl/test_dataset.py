import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from dsl.commands import JOURNAL, write_dataset
from dsl.dataset import (
    SPLIT_FILE,
    DatasetError,
    list_problems,
    load_problem,
    load_split,
    problem_folder,
    programs_file,
    read_programs,
)
from dsl.generate import ProblemKind, generate_problem, plan_problems
from dsl.owned import OutputError
from dsl.syntax import format_image

from tests.official import OFFICIAL_DEV
SEED = 3
COUNTS = {ProblemKind.FREE_FORM: 2, ProblemKind.BASIC: 2, ProblemKind.ABSTRACT: 2}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    report = write_dataset(root, COUNTS, seed=SEED, workers=1, size=64, progress=False)
    assert len(report.written) == 6 and not report.failed
    return root


@pytest.fixture
def dataset(generated, tmp_path) -> Path:
    """A private copy to break."""
    root = tmp_path / "copy"
    shutil.copytree(generated, root)
    return root


def expected_programs() -> dict[str, tuple[list, list]]:
    table = {}
    for kind, count in COUNTS.items():
        for spec in plan_problems(kind, count, SEED):
            problem = generate_problem(spec, SEED)
            sides = (problem.positives, problem.negatives)
            table[problem.name] = tuple([format_image(p) for p in side] for side in sides)
    return table


def test_generated_dataset_loads_back_with_equal_programs(generated):
    problems = load_split(generated, "all")
    expected = expected_programs()
    assert sorted(p.name for p in problems) == sorted(expected) == list_problems(generated)
    for problem in problems:
        assert problem.kind == problem.name[:2]
        positives = [format_image(i.program) for i in problem.positives]
        negatives = [format_image(i.program) for i in problem.negatives]
        assert (positives, negatives) == expected[problem.name]
        assert len(problem.context_a) == len(problem.context_b) == 6
        assert [(q.label, q.index) for q in problem.queries] == [(1, 6), (0, 6)]
        image = problem.positives[0].load()
        assert image.dtype == np.uint8 and image.shape == (64, 64) and image.min() < 128 and image.max() == 255
    splits = json.loads((generated / SPLIT_FILE).read_text())
    assert {k: len(v) for k, v in splits.items()} == {"ff": 2, "bd": 2, "hd": 2, "all": 6}
    assert not (generated / JOURNAL).exists()
    assert not list(generated.glob("*/images/.*"))


def test_generation_resumes_and_ignores_the_worker_count(dataset, tmp_path):
    again = write_dataset(dataset, COUNTS, seed=SEED, workers=1, size=64, progress=False)
    assert again.written == [] and len(again.skipped) == 6
    lost = list_problems(dataset)[0]
    before = programs_file(dataset, lost[:2]).read_text()
    shutil.rmtree(problem_folder(dataset, lost))
    resumed = write_dataset(dataset, COUNTS, seed=SEED, workers=1, size=64, progress=False)
    assert resumed.written == [lost]
    assert programs_file(dataset, lost[:2]).read_text() == before
    parallel = tmp_path / "parallel"
    write_dataset(parallel, COUNTS, seed=SEED, workers=2, size=64, progress=False)
    for kind in ("ff", "bd", "hd"):
        assert programs_file(parallel, kind).read_text() == programs_file(dataset, kind).read_text()
    with pytest.raises(OutputError, match="seed"):
        write_dataset(dataset, COUNTS, seed=SEED + 1, workers=1, size=64, progress=False)


# ---- every fault names its file ------------------------------------------------------------------


def first_problem(root: Path) -> Path:
    return problem_folder(root, list_problems(root)[0])


def raises_naming(path: Path, match: str = ""):
    return pytest.raises(DatasetError, match=f"{re.escape(str(path))}.*{match}" if match else re.escape(str(path)))


def test_missing_problem_and_label_folders(dataset):
    with raises_naming(dataset / "ff" / "images" / "ff_nope_0000", "missing"):
        load_problem(dataset / "ff" / "images" / "ff_nope_0000")
    folder = first_problem(dataset)
    shutil.rmtree(folder / "0")
    with raises_naming(folder / "0", "missing"):
        load_problem(folder)


@pytest.mark.parametrize("fault", ["missing", "extra"])
def test_wrong_number_of_images(dataset, fault):
    side = first_problem(dataset) / "1"
    if fault == "missing":
        (side / "6.png").unlink()
    else:
        shutil.copy(side / "0.png", side / "7.png")
    with raises_naming(side, "exactly"):
        load_problem(side.parent)


def test_corrupt_and_empty_png(dataset):
    folder = first_problem(dataset)
    (folder / "1" / "3.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    problem = load_problem(folder)
    with raises_naming(folder / "1" / "3.png", "corrupt"):
        problem.positives[3].load()
    (folder / "0" / "2.png").write_bytes(b"")
    with raises_naming(folder / "0" / "2.png", "empty"):
        load_problem(folder)


def test_bad_json(dataset):
    path = programs_file(dataset, "bd")
    path.write_text(path.read_text()[:-20])
    with raises_naming(path, "bad JSON"):
        read_programs(dataset)
    with raises_naming(path, "bad JSON"):
        load_split(dataset, "bd")


@pytest.mark.parametrize(
    "action, fault", [("line_normal_1.000", "malformed"), ("line_dotted_1.000-0.500", "unknown stroke type")]
)
def test_bad_action_strings_name_file_problem_and_image(dataset, action, fault):
    path = programs_file(dataset, "hd")
    table = json.loads(path.read_text())
    name = sorted(table)[0]
    table[name][1][4][0][0] = action
    path.write_text(json.dumps(table))
    with raises_naming(path, f"problem {name}, negatives image 4: {fault}"):
        read_programs(path)


def test_wrong_number_of_images_in_json(dataset):
    path = programs_file(dataset, "ff")
    table = json.loads(path.read_text())
    name = sorted(table)[0]
    table[name][0].pop()
    path.write_text(json.dumps(table))
    with raises_naming(path, f"problem {name}: positives must be a list of 7 images, got 6"):
        read_programs(dataset / "ff")


def test_split_faults(dataset):
    split_file = dataset / SPLIT_FILE
    splits = json.loads(split_file.read_text())
    splits["all"].append("bd_not_there_0000")
    split_file.write_text(json.dumps(splits))
    with raises_naming(split_file, "bd_not_there_0000"):
        load_split(dataset, "all", programs=False)
    with raises_naming(split_file, "no split 'train'"):
        load_split(dataset, "train")
    split_file.unlink()
    with raises_naming(split_file, "missing"):
        load_split(dataset, "ff")


def test_problem_without_program(dataset):
    path = programs_file(dataset, "ff")
    table = json.loads(path.read_text())
    name = sorted(table)[0]
    del table[name]
    path.write_text(json.dumps(table))
    with raises_naming(problem_folder(dataset, name), "no action program"):
        load_split(dataset, "ff")


# ---- the official sample -------------------------------------------------------------------------


@pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official dev data not present (BONGARD_OFFICIAL_DEV)")
def test_official_dev_sample_loads():
    sizes = {"dev_ff": 24, "dev_bd": 24, "dev_hd": 35}
    problems = []
    for split, size in sizes.items():
        loaded = load_split(OFFICIAL_DEV, split)
        assert len(loaded) == size and {p.kind for p in loaded} == {split[-2:]}
        problems += loaded
    assert len(problems) == 83 == len(list_problems(OFFICIAL_DEV))
    assert all(p.has_programs for p in problems)
    assert len(read_programs(OFFICIAL_DEV)) == 83
    image = problems[0].queries[1].load()
    assert image.shape == (512, 512) and image.dtype == np.uint8
