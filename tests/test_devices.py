from engine.lang.codes import device_codes as codes_in
from engine.lang.codes import edition_marks
from engine.search.devices import document_codes, mentioned
from engine.types import DocumentMeta


def test_codes_are_normalised_across_spellings():
    assert {"kx7", "hy400s"} <= codes_in("Kestrel KX-7 and the HY 400S")
    assert "hydra400" in codes_in("Hydra-400 pump")
    assert "kx7" in codes_in("Kestrel KX-7 外壳盖螺丝的拧紧力矩是多少？")  # no space before CJK


def test_a_version_mark_is_no_device():
    # every "... V1.0" manual shares "v1": the edition says which manual, not which device
    assert codes_in("BIGTREETECH EBB36 CAN V1.1 User Manual") == {"ebb36"}
    assert codes_in("KX-7 logger, Rev 3 (ver. 2 firmware, v2)") == {"kx7"}
    assert codes_in("revision 3 of the KX-7, version 2") == {"kx7"}  # the words of a mark, spelt out
    assert codes_in("the V60 valve and the V-100 pump") == {"v60", "v100"}  # a model's number, no edition


def test_document_codes_come_from_models_and_title():
    meta = DocumentMeta("k", "Kestrel KX-7 Data Logger — Manual", models=("KX-7", "KX-7E"))
    assert document_codes(meta) == {"kx7", "kx7e"}


def test_only_known_codes_count_as_mentions():
    known = {"kx7", "hy400"}
    assert mentioned("Torque for M8 bolts on the KX-7?", known) == {"kx7"}
    assert mentioned("Torque for M8 bolts?", known) == frozenset()


def test_edition_marks_name_the_edition_in_any_spelling():
    assert edition_marks("BIGTREETECH EBB36 CAN V1.0 user manual") == edition_marks("EBB36 v1") == {"1"}
    assert edition_marks("EBB42 CAN V1.1 User Manual") == {"1.1"}
    assert edition_marks("Rev. B board, Ver. 2.0") == {"b", "2"}
    assert edition_marks("V1.10") == {"1.10"}
    assert not edition_marks("KX-7 v2x, dev1.0, V B, version a")
