"""`bench ceiling`: the exact posterior of the abstract generator's 220 concepts, simulated and on a root."""

import json

import numpy as np
import pytest

from benchmarks.ceiling import log_posterior, main, map_concepts, simulate, tables
from dsl.library import load_library
from dsl.syntax import format_shape

# An official-generator problem of self_transposed and has_line_crossing (true programs): two images of B are not
# self-transposed and cross, but are no two-part shapes, so balanced_two with self_transposed cannot have drawn them.
SET_A = ["pointy_regular_x", "touched_arc_cup", "two_asymm_bala_quadrangles", "transposed_x", "square_funnel",
         "regular_x", "transposed_x"]
SET_B = ["no_acute_angle_four_lines2", "no_obtuse_angle_six_lines6", "rectangle", "closed_circle", "trans_arc_lamp",
         "thin_symmetric_goldfish", "rectangle"]
CONCEPT = ("self_transposed", "has_line_crossing")


def _ties(names):
    return [(tables().index[name],) for name in names]


def test_the_posterior_names_the_concept_and_rules_out_a_pool_no_negative_could_come_from():
    t = tables()
    log_p = log_posterior(_ties(SET_A[:6]), _ties(SET_B[:6]), [])
    assert [t.concepts[c] for c in map_concepts(log_p)] == [CONCEPT]
    assert log_p[t.concepts.index(("self_transposed", "balanced_two"))] == -np.inf
    assert log_p[t.concepts.index(("self_transposed",))] == -np.inf  # B holds self-transposed shapes
    # a stamp the concept withholds rules it out: exist_quadrangle concepts allow no square stamps
    square = np.array([t.types[k].value == "square" for k in range(len(t.types))])
    quadrangle = [c for c, concept in enumerate(t.concepts) if "exist_quadrangle" in concept and "exist_triangle"
                  not in concept]
    stamped = next(k for k, name in enumerate(t.names) if t.stamped[k])
    assert np.all(log_posterior(_ties(SET_A[:6]), _ties(SET_B[:6]), [(stamped, square)])[quadrangle] == -np.inf)


def test_simulated_problems_are_named_nearly_always_and_deterministically():
    first, again = simulate(60, seed=3), simulate(60, seed=3)
    assert first == again and 0.9 <= first["rule_match"] <= 1.0
    low, high = first["rule_match_95"]
    assert low <= first["rule_match"] <= high
    assert simulate(20, seed=3, concepts="singles")["concepts"] == "singles"


def test_a_root_is_read_from_its_true_programs_and_set_beside_the_solvers_rules(tmp_path, capsys):
    library = load_library()

    def image(name):
        return [format_shape(library[name].shape)]

    name = "hd_" + "-".join(CONCEPT) + "_0000"
    (tmp_path / "hd").mkdir()
    (tmp_path / "hd" / "hd_action_programs.json").write_text(
        json.dumps({name: [[image(n) for n in SET_A], [image(n) for n in SET_B]]}))
    records = tmp_path / "run.json"
    records.write_text(json.dumps({"seconds": 1.0, "problems": [{"name": name, "rule_match": False}]}))
    out = tmp_path / "out.json"
    assert main(["--data", str(tmp_path), "--records", str(records), "--json", str(out)]) == 0
    found = json.loads(out.read_text())
    assert found["problems"] == 1 and found["rule_match"] == 1.0 and found["ours"] == 0.0
    assert found["table"] == {"bayes hit / ours miss": 1}
    assert "the posterior names it; the solver's rule misses it" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--records", str(records)])
    assert "--records needs --data" in capsys.readouterr().err
