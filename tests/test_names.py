"""Names a question gives (engine.lang.names), and the ones no eligible passage mentions
(LexicalIndex.unknown, Trace.unknown_names)."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.lexical import LexicalIndex
from engine.lang.names import joined, name_parts, name_terms, question_names


def test_names_by_their_shape_in_any_language():
    assert question_names("how much does a BTT EBB36 CAN toolboard cost?") == ("BTT", "EBB36", "CAN")
    assert question_names("printer.cfg を GitHub に自動でバックアップする方法はありますか？") == ("printer.cfg", "GitHub")
    assert question_names("打印完成后怎么让 Klipper 发 Telegram 通知？") == ("Klipper", "Telegram")
    assert question_names("is the Creality CR Touch supported?") == ("Creality", "CR", "Touch")
    # a capital that starts the sentence is no name; German capitalises its nouns
    assert question_names("Where is the seal? Replace it.") == ()
    assert question_names("Welche Werte passen für ein Hotend?") == ()
    assert question_names("Welche Werte passen für ein E3D Hotend?") == ("E3D",)
    # and each part of a joined German noun starts with one: the parts must be names themselves
    assert question_names("Wie stelle ich die Y-Achse und die Axis-Twist-Kompensation ein?") == ()
    assert question_names("Welcher Wert für einen GT2-Riemen?") == ("GT2-Riemen",)
    assert question_names("How do I home the X-Axis?") == ("X-Axis",)  # English: shape as before
    assert question_names("what does the pump weigh?") == ()
    assert question_names("") == ()


def test_name_parts_are_the_pieces_a_passage_may_use():
    assert name_parts("SD-Karte") == ("SD", "Karte")
    assert name_parts("GT2-20") == ("GT2",)
    assert name_parts("EBB36") == ("EBB36",)


def test_unknown_names_are_the_ones_no_eligible_row_holds():
    idx = LexicalIndex.build(["Flash the Octopus board over USB.", "The EBB36 toolboard uses CAN.",
                              "Mount the SD card."])
    assert idx.unknown(("Octopus", "Manta", "EBB36", "SD-Karte")) == ("Manta",)
    only_first = np.array([True, False, True])
    # held only by a passage the eligibility rule keeps out: unknown to this question
    assert idx.unknown(("Octopus", "EBB36"), only_first) == ("EBB36",)
    assert LexicalIndex.build([]).unknown(("Octopus",)) == ("Octopus",)


def test_name_terms_are_the_name_and_its_parts_as_the_index_spells_them():
    assert name_terms("SD-Karte") == ("sd-karte", "sd", "karte")
    assert name_terms("EBB36") == ("ebb36",)
    assert name_terms("ＥＢＢ３６") == ("ebb36",)


def test_the_brand_of_a_device_the_library_is_about_is_left_out():
    q = "What fuse goes between the Haram HR-5 controller and the battery?"
    assert question_names(q) == ("Haram", "HR-5")
    assert question_names(q, devices={"hr5"}) == ("HR-5",)  # its Korean manual spells the brand in Hangul
    assert question_names(q, devices={"kx7"}) == ("Haram", "HR-5")
    assert question_names("Haram  HR 5 기본 설정은?", devices={"hr5"}) == ("HR",)


def test_names_are_found_where_the_script_changes_and_keep_their_accents():
    assert question_names("打印完成后怎么让Klipper发Telegram通知？") == ("Klipper", "Telegram")
    assert question_names("Quel est le niveau sonore du compresseur Borée BR-20 ?") == ("Borée", "BR-20")


WORDS = st.sampled_from(["the", "pump", "Grundfos", "EBB36", "SD-Karte", "printer.cfg", "GitHub", "Borée",
                         "打印", "Telegram", "배터리를", "KX-7", "ＥＢＢ３６", "I", "Wie", "Hotend", "a1b", "x_y"])


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=10), st.sampled_from([" ", "", "? ", ", "]))
def test_a_library_holding_the_question_knows_every_name_in_it(words, sep):
    q = sep.join(words)
    names = question_names(q)
    assert all(len(n) >= 2 and n in unicodedata.normalize("NFKC", q) for n in names)
    assert LexicalIndex.build([q]).unknown(names) == ()
    assert LexicalIndex.build(["nothing here"]).unknown(names) == names


def test_a_name_spelled_with_or_without_its_hyphen_is_the_same_name():
    with_hyphen = LexicalIndex.build(["Connect the TV to Wi-Fi first."])
    without = LexicalIndex.build(["Connect the TV to WiFi first."])
    assert with_hyphen.unknown(("WiFi", "Wi-Fi")) == () and without.unknown(("Wi-Fi", "WiFi")) == ()
    assert without.unknown(("Wi-Fi",), np.array([False])) == ("Wi-Fi",)  # still under the mask
    assert joined("wi-fi") == joined("wi.fi") == "wifi"
