"""Expected answer types (engine.answer.answertype): what a question asks for, what answers it."""

from __future__ import annotations

import pytest

from engine.answer.answertype import ANSWER_TYPES, expected_types, unanswered
from engine.answer.conflicts import values_in


def names(question: str) -> set[str]:
    return {t.name for t in expected_types(question)}


@pytest.mark.parametrize("question, expected", [
    ("How much does the Hydra-400 pump weigh?", "weight"),
    ("Quel est le poids de la pompe ?", "weight"),
    ("Wie viel wiegt das Gerät?", "weight"),
    ("펌프의 무게는 얼마입니까?", "weight"),
    ("泵的重量是多少？", "weight"),
    ("Quel est le niveau sonore du compresseur en dB(A) ?", "noise level"),
    ("What is the sound pressure level at 1 m?", "noise level"),
    ("What is the IP rating of the enclosure?", "protection rating"),
    ("Welche Schutzart hat das Gehäuse?", "protection rating"),
    ("变送器的防护等级是多少？", "protection rating"),
    ("Quel est le couple de serrage des vis du couvercle ?", "tightening torque"),
    ("外壳盖螺丝的拧紧力矩是多少？", "tightening torque"),
    ("Wie groß ist der Tankinhalt des Falke FK-3?", "fuel tank capacity"),
    ("Which refrigerant does the unit use?", "refrigerant"),
    ("컨트롤러의 보증 기간은 얼마입니까?", "warranty"),
    ("How do I update the firmware?", "firmware"),
    ("What is the Bluetooth pairing code?", "wireless pairing"),
    ("How many spare packs should we keep in stock?", "spare-part stock"),
    ("What is the supply voltage?", "voltage"),
])
def test_cues_name_the_attribute(question, expected):
    assert expected in names(question)


@pytest.mark.parametrize("question", [
    "How do I replace the battery of the Vela VB-12?",
    "What does ERR_CACHE_STALE mean?",
    "Comment remplacer le filtre à huile ?",
    "Wie oft muss der Luftfilter gereinigt werden?",
    "Riemenspannung prüfen: wie?",          # mechanical tension is not a voltage
    "Comment distinguer les types de bruit ?",  # noise as a topic, not a level
    "How do I guarantee that the enclosure stays sealed?",  # a verb, not the warranty
])
def test_questions_without_a_cue_expect_nothing(question):
    assert names(question) == set()


def test_values_answer_value_types_and_only_their_units():
    weight = next(t for t in ANSWER_TYPES if t.name == "weight")
    for text in ("Weight: 38 kg", "椰子猫平均重3.2公斤", "Gewicht 850 g", "a 2.5 tonnes hoist", "只有100克重"):
        assert weight.answered_by(text, values_in(text)), text
    for text in ("Length 38 mm", "The pump is heavy; lift it with two people.",
                 "Regrease the motor bearings with 15 g of grease."):  # grams, but not a weight
        assert not weight.answered_by(text, values_in(text)), text


def test_a_radio_s_power_in_dbm_or_milliwatts_answers_a_power_question():
    power = next(t for t in ANSWER_TYPES if t.name == "power")
    assert names("在欧洲用 868MHz 频段，最大允许的发射功率是多少？") == {"power"}
    for text in ("The maximum power allowed for Europe is +27 dBm ERP.", "Transmit at 100 mW at most."):
        assert power.answered_by(text, values_in(text)), text
    assert not power.answered_by("The link budget is 10 dB higher.", values_in("The link budget is 10 dB higher."))


@pytest.mark.parametrize("question, asks", [
    ("how much does a raspberry pi pico w cost?", True),
    ("Combien coûte un accéléromètre ADXL345 et où l'acheter ?", True),
    ("Was kostet der Sensor?", True),
    ("¿Cuánto cuesta la sonda?", True),
    ("T1000-E 가격은 얼마인가요?", True),
    ("树莓派 Pico 多少钱？", True),
    ("Pico W はいくらで買えますか？", True),
    ("Quel prix a-t-il reçu en 1921 ?", False),  # a prize
    ("2007－08年全球粮食价格危机产生了怎样的影响？", False),  # a price crisis, no price asked
    ("Pourquoi des costumes nationaux ?", False),
    ("Does a faster print cost quality?", False),  # a cost, not a price
    ("What does a replacement seal kit cost?", True),
])
def test_a_price_is_asked_by_what_it_costs(question, asks):
    assert ("price" in names(question)) is asks


def test_only_an_amount_of_money_answers_a_price():
    price = next(t for t in ANSWER_TYPES if t.name == "price")
    for text in ("It costs $25.", "Prix : 19,90 €", "售价 199 元", "3 millions d'euros", "当时只售0.37美元", "约9800日元"):
        assert price.answered_by(text, values_in(text)), text
    for text in ("at the cost of more power", "Supply 12 V, 2 A.", "See the price list of your dealer.", "version 2.5"):
        assert not price.answered_by(text, values_in(text)), text


def test_table_header_units_count_for_table_rows():
    from engine.answer.conflicts import header_units

    weight = next(t for t in ANSWER_TYPES if t.name == "weight")
    row = "| HY-400 | 38 |"
    assert not weight.answered_by(row, values_in(row))
    assert weight.answered_by(row, values_in(row, header_units("| Model | Weight (kg) |")))


def test_patterns_and_words():
    ip = next(t for t in ANSWER_TYPES if t.name == "protection rating")
    assert ip.answered_by("The housing is rated IP67.", [])
    assert not ip.answered_by("The housing is waterproof.", [])
    ref = next(t for t in ANSWER_TYPES if t.name == "refrigerant")
    assert ref.answered_by("Charge: 1.2 kg of R-134a.", [])
    assert ref.answered_by("Kältemittel: siehe Typenschild.", [])
    assert not ref.answered_by("Clean the cooling coil with water.", [])
    pairing = next(t for t in ANSWER_TYPES if t.name == "wireless pairing")
    assert pairing.answered_by("Hold the button for 5 s to pair the sensor with the gateway.", [])
    warranty = next(t for t in ANSWER_TYPES if t.name == "warranty")
    assert warranty.answered_by("La garantie est de 24 mois.", values_in("La garantie est de 24 mois."))


def test_tank_capacity_needs_the_volume_next_to_a_tank():
    tank = next(t for t in ANSWER_TYPES if t.name == "fuel tank capacity")
    oil = "Die Füllmenge beträgt 0,6 Liter."
    assert not tank.answered_by(oil, values_in(oil))  # a volume, but of the engine oil
    fuel = "Der Kraftstofftank fasst 15 Liter."
    assert tank.answered_by(fuel, values_in(fuel))


def test_unanswered_lists_only_the_types_no_piece_answers():
    expected = expected_types("What is the weight and the IP rating of the pump?")
    assert {t.name for t in expected} == {"weight", "protection rating"}
    pieces = [(t, values_in(t)) for t in ("Enclosure IP55.", "Impeller nut torque 38 N·m.")]
    assert [t.name for t in unanswered(expected, pieces)] == ["weight"]
    assert unanswered(expected, pieces + [("Weight 41 kg", values_in("Weight 41 kg"))]) == ()


@pytest.mark.parametrize("question, expected", [
    ("At what temperature does the thermostat trip?", "temperature"),
    ("Quelle est la pression de service maximale ?", "pressure"),
    ("Wie hoch ist die Dauerleistung des Falke FK-3?", "power"),
    ("What is the airflow of the CV-60?", "flow rate"),
    ("电池容量是多少？", "battery capacity"),
    ("What absorption voltage does the HR-5 use?", "voltage"),
    ("Jusqu'à quelle tension par cellule puis-je descendre ?", "voltage"),
    ("Welche Spannung verträgt der USB-Anschluss?", "voltage"),
    ("이 센서의 방진 등급은?", "protection rating"),
])
def test_quantities_are_asked_by_value_seeking_phrasings(question, expected):
    assert expected in names(question)


@pytest.mark.parametrize("question", [
    "What should I do when the temperature alarm appears?",  # a mention, not the value asked
    "Quel puissance étrangère s'était vu confier le Shandong ?",  # a power, not watts
    "恆星的自轉速度與表面重力都可以從什麼東西中測量出來？",  # a star's rotation, not rpm
    "現金流量表所代表的意義為?",  # cash flow
    "Should the low voltage cutoff on my ESCs stay on?",  # a setting that names a voltage
    "Do I still need to calibrate the voltage divider?",
    "POWER 포트에서 전압 측정 신호는 몇 번 핀인가요?",  # the pin that measures it
    "비행 컨트롤러를 달 때 방진 폼을 꼭 써야 하나요?",  # 방진: vibration damping here, not dust protection
])
def test_mentions_of_a_quantity_do_not_ask_for_it(question):
    assert names(question) == set()
