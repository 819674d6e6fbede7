"""bench/fusion_sight.py's rules for a question in another language than the library."""

from bench.fusion_sight import _peak, scores


def _row(other_language: bool) -> dict:
    # the lexical list puts a wrong passage first, the gold one third; the vector list has it first
    return {"lex": ["x", "y", "gold"], "vec": ["gold", "x", "z"], "gold": {"gold"}, "sight": 1.0,
            "lex_scores": [9.0, 3.0, 3.0], "other_language": other_language}


def test_knee_alone_keeps_the_lexical_list():
    rows = [_row(True)]
    assert scores(rows, knee=0.5, c=5)["R@1"] == 0.0  # x: 1/6 + 1/7 beats gold: 1/8 + 1/6
    assert scores(rows, knee=0.5, c=5)["R@5"] == 1.0


def test_rules_act_on_other_language_questions_only():
    rows = [_row(True), _row(False)]
    assert scores(rows, knee=0.5, c=5, other=("mismatch", 0.0))["R@1"] == 0.5
    assert scores(rows, knee=0.5, c=5, other=("depth", 1))["R@1"] == 0.0  # "x" still first on one list
    flat = [{**r, "lex_scores": [3.0, 3.0, 3.0]} for r in rows]  # no peak: the weight drops to 0
    assert scores(flat, knee=0.5, c=5, other=("peak", 1.0))["R@1"] == 0.5


def test_peak():
    assert _peak([10.0, 5.0, 5.0]) == 0.5
    assert _peak([4.0]) == 0.0 and _peak([0.0, 0.0]) == 0.0
