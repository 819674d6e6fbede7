"""engine.lang: one sentence splitter, one stopword list per language, one home for codes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lang.codes import device_codes, exact_codes, model_names
from engine.lang.text import sentence_spans
from engine.lang.words import STOPWORDS, terms, tokenize


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


def test_one_sentence_splitter_keeps_values_abbreviations_and_cjk():
    assert _sentences("Torque 2.5 N·m. Then stop. Done!") == ["Torque 2.5 N·m.", "Then stop.", "Done!"]
    assert _sentences("Use a tool, e.g. the wrench. Next.") == ["Use a tool, e.g. the wrench.", "Next."]
    assert _sentences("See No. 3 for details. Then go.") == ["See No. 3 for details.", "Then go."]
    assert _sentences('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert _sentences("电源关闭。然后拆下盖子。") == ["电源关闭。", "然后拆下盖子。"]
    assert _sentences("ca. 3 bar. Fine") == ["ca. 3 bar.", "Fine"]
    # an emphasised run ends with its sentence: "first.**" is the end, not "first."
    assert _sentences("**Caution. Turn it off first.** Then open it.") == ["**Caution. Turn it off first.**", "Then open it."]
    assert _sentences("Use *two hands. Lift slowly.* Put it down.") == ["Use *two hands.", "Lift slowly.*", "Put it down."]
    # an item's number opening a line starts a sentence and is none of its own (a PDF list read as a paragraph)
    assert _sentences("9. Supports CAN or USB.\n10. Equipped ESD protection.\n11. The board.") == [
        "9. Supports CAN or USB.", "10. Equipped ESD protection.", "11. The board."]
    assert _sentences("Set it to 5.\n10 mm is the gap.") == ["Set it to 5.\n10 mm is the gap."]  # no item: a value
    # one word is a label or a reply: it says nothing without the sentence after it (the last one stays)
    assert _sentences("**Warning!** It is not advisable to run it daily. Check the bolts.") == [
        "**Warning!** It is not advisable to run it daily.", "Check the bolts."]
    assert _sentences("Important! Restart the host. No. Done!") == ["Important! Restart the host.", "No. Done!"]


@settings(max_examples=200)
@given(st.lists(st.sampled_from(sorted(set().union(*STOPWORDS.values())) + ["valve", "pressure", "Dichtung"]),
                max_size=12))
def test_a_stopword_is_in_neither_the_lexical_terms_nor_the_answer_terms(words):
    text = " ".join(words)
    stop = set().union(*STOPWORDS.values())
    assert not stop & set(tokenize(text))
    assert not stop & terms(text)


def test_codes_three_views_of_one_idea():
    text = "Hydra-400: on ERR_SEAL_PRESSURE replace REF27-ALPHA (M8 screws), see the KX-7 notes"
    assert {"hydra400", "kx7", "m8"} <= device_codes(text)
    assert {"ERR_SEAL_PRESSURE", "REF27-ALPHA", "M8", "KX-7"} <= exact_codes(text)
    assert "HYDRA-400" in model_names(text) and "KX-7" in model_names(text)


def test_a_question_s_language_from_its_script_words_and_marks():
    from engine.lang.language import question_language

    assert question_language("What torque for the lid screws?") == "en"
    assert question_language("Quelle est la pression de service ?") == "fr"
    assert question_language("Wie oft muss ich die Dichtung tauschen?") == "de"
    assert question_language("이 센서의 방진 등급은?") == "ko" and question_language("额定电压是多少？") == "zh"
    # "de la" is French as much as Spanish: the inverted mark decides
    assert question_language("¿Cómo desinstalo Klipper de la Raspberry Pi?") == "es"
    assert question_language("¿Cuántas salidas PWM tiene la Pixhawk 6C?") == "es"
    assert question_language("SET_SKEW") == ""  # no word to tell
    # German's "gibt es" and "viele" (Spanish has "es" too: its own words and marks still decide)
    assert question_language("Wie viele Flugmodi gibt es?") == "de"
    assert question_language("Funktioniert das Display auch über USB oder nur per Akku?") == "de"
    assert question_language("¿Qué es el modo de vuelo?") == "es"
