"""fieldqa.question_sets: the one place the fit scripts and benches find their question sets."""

import importlib
from pathlib import Path

import fieldqa.question_sets as qs


def test_a_training_set_of_our_own_comes_first():
    assert (qs.TRAINING / "wled-docs").is_dir()  # models/training/ is part of the checkout
    assert qs.set_folder("wled-docs") == qs.TRAINING / "wled-docs"


def test_other_sets_are_the_shared_ones_beside_the_checkout(monkeypatch):
    monkeypatch.delenv("FIELDQA_EVAL_DIR", raising=False)
    mod = importlib.reload(qs)
    try:
        assert mod.EVAL == Path(mod.ROOT).parent / "shared" / "eval"
        assert mod.set_folder("klipper-manuals") == mod.EVAL / "klipper-manuals"
    finally:
        importlib.reload(qs)


def test_the_environment_names_another_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("FIELDQA_EVAL_DIR", str(tmp_path))
    mod = importlib.reload(qs)
    try:
        assert mod.EVAL == tmp_path
        assert mod.set_folder("piaf-fr") == tmp_path / "piaf-fr"
        assert mod.set_folder("zmk-docs") == mod.TRAINING / "zmk-docs"
    finally:
        monkeypatch.delenv("FIELDQA_EVAL_DIR")
        importlib.reload(qs)
