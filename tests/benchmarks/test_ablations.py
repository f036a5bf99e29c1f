import numpy as np

from benchmarks.ablations import decoder_features, markdown, nearest_prototype, summarise
from dsl.dataset import Problem


def test_nearest_prototype_labels_queries_by_the_closer_side():
    a = np.array([[1.0, 0.0]] * 6)
    b = np.array([[0.0, 1.0]] * 6)
    queries = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert nearest_prototype(np.vstack([a, b, queries])) == (True, False)


def test_summary_and_table_per_kind():
    problems = [Problem("ff_x_0000", "ff", (), ()), Problem("bd_y_0000", "bd", (), ())]
    done = {
        ("full", "ff_x_0000"): {"kind": "ff", "labels": [True, False], "truth": [True, False], "seconds": 1.0},
        ("full", "bd_y_0000"): {"kind": "bd", "labels": [True, True], "truth": [True, False], "seconds": 3.0},
        ("oracle", "ff_x_0000"): {"kind": "ff", "labels": None, "truth": [True, False], "seconds": 0.1,
                                  "error": "boom"},
    }
    summary = summarise(done, ["full", "oracle"], problems)
    assert summary["systems"]["full"]["accuracy"] == {"bd": 50.0, "ff": 100.0, "all": 75.0}
    assert summary["systems"]["full"]["median_seconds"] == 2.0
    assert summary["systems"]["oracle"]["errors"] == 1
    table = markdown(summary)
    assert "| full | 50.0 | 100.0 | 75.0 | 0 | 2.0 |" in table
    assert "Meta-Baseline-PS" in table


def test_decoder_features_are_unit_vectors_per_image():
    from perception.decode import load_decoder

    images = [np.full((512, 512), 255, np.uint8) for _ in range(3)]
    images[1][200:300, 250:258] = 0
    features = decoder_features(load_decoder(), images)
    assert features.shape[0] == 3
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, rtol=1e-5)
