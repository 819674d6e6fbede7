"""What kind of answer a question asks for, and whether a passage holds one.

A question that asks how much a pump *weighs* is answered by a mass ("38 kg"), one that asks
for a *protection rating* by an IP code, one about the *warranty* by a passage that speaks of
a warranty at all. When the question asks for such a thing and none of the evidence holds
it, the passages that came back are about the right device but not about the question: the
answer must say "not found in these documents" instead of quoting the nearest sentence.
The embedder cannot see this (a question about a pump's weight is very close to the pump's
specification table, weight or not), so it is checked here, by the expected *type* of the
answer, as question-answering systems have done since question classification.

The table below is deliberately about attributes that equipment manuals state (weight,
noise, ingress protection, torque, voltage, temperature, pressure, power, current, speed, flow,
battery capacity, dimensions, fuel tank, refrigerant, warranty, firmware, wireless pairing,
spare-part stock) and the one that manuals seldom state but technicians ask (a price), in the
languages of the project's users. An
attribute only counts as *asked* when a cue names it; a question with no cue expects nothing
(most questions), and the check then changes nothing. Cues are matched case-insensitively;
Latin cues must start at a word boundary (``weigh`` matches "weighs", "weight").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.answer.conflicts import Value

__all__ = ["ANSWER_TYPES", "AnswerType", "expected_types", "unanswered"]


def _alt(*words: str) -> re.Pattern:
    """One case-insensitive pattern; Latin words must start at a word boundary."""
    parts = [(r"(?<![\w])" + w) if re.match(r"[A-Za-z\\(]", w) else w for w in words]
    return re.compile("(?:" + "|".join(parts) + ")", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class AnswerType:
    """An attribute a question can ask for, and what in a passage answers it.

    A passage answers when it holds a value in one of ``units`` (normalised as in
    :mod:`engine.answer.conflicts`), or text matching ``pattern``, or (``words``, when given) speaks
    of the attribute; with ``value_and_words`` both a value and the words are needed in
    the same unit of text (a fuel-tank capacity is a volume next to the word "tank").
    A value in one of ``weak_units`` needs ``named`` in the same text: "a weight of 850 g"
    gives a weight, "15 g of grease" does not.
    """

    name: str
    asks: re.Pattern
    units: frozenset[str] = frozenset()
    pattern: re.Pattern | None = None
    words: re.Pattern | None = None
    value_and_words: bool = False
    weak_units: frozenset[str] = frozenset()
    named: re.Pattern | None = None

    def answered_by(self, text: str, values: Iterable[Value]) -> bool:
        values = tuple(values)
        has_value = any(v.unit in self.units for v in values) or bool(
            self.pattern and self.pattern.search(text)) or bool(
            self.named and any(v.unit in self.weak_units for v in values) and self.named.search(text))
        has_words = bool(self.words and self.words.search(text))
        if self.value_and_words:
            return has_value and has_words
        return has_value or has_words


# asked: nouns only ("How do I guarantee a tight seal?" is not about the warranty)
_WARRANTY_ASKS = _alt("warrant", r"guarantee (?:period|terms|cover)", "garantie", "gewährleistung",
                      "garanzia", "garantía", "보증", "保修", "质保", "質保", "保固")
_WARRANTY = _alt("warrant", "guarantee", "garanti", "gewährleist", "garanzi", "garantía", "보증",
                 "保修", "质保", "質保", "保固")
_FIRMWARE = _alt("firmware", "micrologiciel", "software", "logiciel", "펌웨어", "소프트웨어",
                 "固件", "韧体", "韌體", "软件", "軟體")
_PAIRING = _alt("bluetooth", "pairing", "appair", "kopplung", "koppeln", "블루투스", "페어링",
                "蓝牙", "藍牙", "配对", "配對")
_PAIRED = _alt("bluetooth", "pair", "appair", "kopp", "블루투스", "페어링", "蓝牙", "藍牙", "配对", "配對")
_REFRIGERANT = _alt("refrigerant", "frigorig", "réfrigérant", "kältemittel", "냉매", "制冷剂",
                    "冷媒")
_SPARES = _alt("spare", "in stock", "inventory", "de rechange", "en stock", "ersatzteil",
               "auf lager", "lagerbestand", "vorrätig", "vorrat", "예비", "재고", "备件", "備件",
               "备用", "備用", "库存", "庫存")
_TANK = _alt("fuel tank", "tank", "réservoir", "kraftstoff", "탱크", "연료", "油箱", "燃油箱")
# a price is asked by the forms that ask what something costs ("how much does … cost", "combien
# coûte", "was kostet"): not by "cost" alone ("does it cost print quality?"), nor by "prix" / "Preis"
# alone (a prize too), nor by 价格 alone (价格危机: a price crisis)
_PRICE_ASKS = _alt(r"how much (?:does|do|did|is|are|would|will|should)\b.{0,60}?\bcost",
                   r"what (?:does|do|did|would|will)\b.{0,60}?\bcost",
                   "price", "pricing", "how expensive", "how much money", r"combien (?:coût|vaut)",
                   r"quel est le (?:prix|coût|tarif)", "tarif", r"(?:was|wie ?viel) kostet", "wie teuer",
                   r"preis (?:für|von|des|der|eines|einer)", r"cu[aá]nto (?:cuesta|cuestan|vale|valen)", "precio",
                   "prezzo", "quanto costa", "가격", "비용", "얼마에", "多少钱", "多少錢", "价格是多少", "價格是多少",
                   "售价", "售價", "値段", "いくらで")
_MONEY = re.compile(  # an amount of money: "$25", "19,90 €", "3 millions d'euros", "37美分", "1200萬美元"
    r"[$€£¥₩]\s?\d|\d[\d.,]*\s?(?:(?:millions?|milliards?|billions?|thousand|mio\.?|mrd\.?)\s?(?:d['’]|de\s)?\s?)?"
    r"(?:USD|EUR|GBP|CHF|JPY|CNY|€|\$|£|dollars?|euros?|yen|francs?|cents?|centimes?)(?!\w)"
    r"|\d[\d.,]*\s?(?:万|萬|億|亿)?\s?(?:元|円|圓|美元|美分|日元|日圓|港元|港幣|欧元|歐元|원|엔|달러|유로)", re.I)

ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType("weight", _alt("weigh", "mass of", "poids", "pèse", "peser", "gewicht", "wiegt",
                              "wiegen", "peso", "무게", "중량", "重量", "多重"),
               units=frozenset({"kg", "t", "lb"}), weak_units=frozenset({"g"}),
               named=_alt("weigh", "mass", "poids", "pèse", "masse", "gewicht", "wiegt", "peso", "무게",
                          "중량", "重", "质量", "質量")),
    AnswerType("noise level", _alt("noise level", "noise emission", "how loud", "sound level",
                                   "sound pressure", "sound power", "niveau sonore", "niveau de bruit",
                                   "bruit émis", "schallpegel", "schalldruck", "schallleistung",
                                   "lärmpegel", "geräuschpegel", r"dB\(?A?\)?(?!\w)", "소음 ?(?:수준|레벨|도)",
                                   "噪声(?:水平|级|值)", "噪音(?:水平|级|值)", "噪聲(?:水平|級|值)"),
               units=frozenset({"dB"})),
    AnswerType("protection rating", _alt(r"IP[- ]?(?:rating|code|class)", "ingress protection",
                                         "protection rating", "indice de protection", "indice IP",
                                         "degré de protection", "schutzart", "방수 ?등급",
                                         "보호 ?등급", "방진 ?등급", "防护等级", "防護等級",
                                         "IP ?等级", "IP ?等級"),
               pattern=re.compile(r"(?<![\w])IP ?[0-6X][0-9X]K?(?![\w])")),
    AnswerType("tightening torque", _alt("torque", "couple de serrage", "anzugsmoment",
                                         "drehmoment", "토크", "扭矩", "力矩", "扭力"),
               units=frozenset({"N·m"})),
    # a voltage asked for by the phrasings that ask a value ("what voltage", "quelle tension"), not by
    # a mention ("the low voltage cutoff", "the voltage divider", "전압 측정 핀": the pin that measures it)
    AnswerType("voltage", _alt(r"(?:what|which)(?: \w+){0,2} voltage", "how many volts", "voltage range",
                               "(?:rated|operating|supply|input|nominal) voltage", r"quelle(?: \w+)? tension",
                               "tension (?:d'alimentation|nominale|de service)", r"welche(?: \w+)? spannung",
                               "(?:versorgungs|betriebs|nenn|eingangs)spannung", "qué (?:voltaje|tensión)",
                               "(?:voltaje|tensión) nominal", "전압[은이] ?(?:몇|얼마)", "(?:정격|사용|입력) ?전압",
                               "电压是多少", "多少伏", "(?:额定|工作|输入)电压", "電壓是多少", "(?:額定|工作|輸入)電壓",
                               "電圧は", "(?:定格|入力)電圧", "何ボルト"),
               units=frozenset({"V", "kV", "mV"})),
    # physical quantities: asked only by phrasings that ask for the value ("what temperature",
    # "operating pressure"), not by a mention ("the temperature alarm")
    AnswerType("temperature", _alt("at what temperature", "what temperature", "which temperature",
                                   "temperature range", "operating temperature", "ambient temperature",
                                   "storage temperature", "how hot", "how cold", "quelle température",
                                   "température (?:de service|ambiante|maximale|minimale|de fonctionnement)",
                                   "welche temperatur", "betriebstemperatur", "umgebungstemperatur",
                                   "lagertemperatur", "온도 ?범위", "사용 ?온도", "작동 ?온도", "工作温度",
                                   "温度范围", "使用温度", "环境温度", "環境溫度", "工作溫度", "溫度範圍"),
               units=frozenset({"°C", "°F"})),
    AnswerType("pressure", _alt("what pressure", "which pressure", "operating pressure", "working pressure",
                                "maximum pressure", "max pressure", "pressure rating", "quelle pression",
                                "pression (?:de service|maximale|nominale)", "welche[rn]? druck",
                                "betriebsdruck", "maximaldruck", "사용 ?압력", "작동 ?압력", "최대 ?압력",
                                "工作压力", "最大压力", "额定压力", "工作壓力", "最大壓力", "額定壓力"),
               units=frozenset({"bar", "mbar", "Pa", "kPa", "MPa", "psi"})),
    AnswerType("power", _alt("power rating", "rated power", "power output", "power consumption",
                             "how much power", "puissance (?:nominale|absorbée|électrique|de sortie|utile|maximale|continue|du moteur)",
                             "leistungsaufnahme", "nennleistung",
                             "dauerleistung", "소비 ?전력", "정격 ?출력", "功率", "耗电量", "耗電量"),
               units=frozenset({"W", "kW", "kVA", "mW", "dBm"})),
    AnswerType("current", _alt("current draw", "rated current", "how many amps", "courant nominal",
                               "intensité (?:nominale|absorbée|du courant)", "nennstrom", "stromaufnahme", "정격 ?전류", "额定电流",
                               "額定電流"),
               units=frozenset({"A", "mA"})),
    AnswerType("rotational speed", _alt("rotational speed", "rotation speed", "vitesse de rotation",
                                        "drehzahl", "회전 ?속도", "회전수", "(?<!自)转速", "(?<!自)轉速"),
               units=frozenset({"rpm"})),
    AnswerType("flow rate", _alt("flow rate", "airflow", "air volume", "débit", "durchfluss",
                                 "förderleistung", "förderstrom", "volumenstrom", "유량", "풍량",
                                 "(?:额定|額定|最大|最小|空气|空氣|水)流量", "流量(?:是|为|為)多少",
                                 "风量", "風量"),
               units=frozenset({"l/min", "m³/h", "m³/min"})),
    AnswerType("battery capacity", _alt("battery capacity", "capacité de la batterie", "akkukapazität",
                                        "batteriekapazität", "배터리 ?용량", "电池容量", "電池容量"),
               units=frozenset({"Ah", "mAh", "Wh"})),
    AnswerType("dimensions", _alt("dimensions", "abmessung", "maße", "encombrement",
                                  "치수", "외형 ?크기", "尺寸"),
               units=frozenset({"mm", "cm", "m"})),
    AnswerType("fuel tank capacity", _alt("tank capacity", "capacity of the (?:fuel )?tank",
                                          "tankinhalt", "tankvolumen", "tankgröße",
                                          "capacité du réservoir", "contenance du réservoir",
                                          "탱크 ?용량", "연료 ?탱크", "油箱容量", "油箱容積"),
               units=frozenset({"l"}), words=_TANK, value_and_words=True),
    AnswerType("refrigerant", _REFRIGERANT,
               pattern=re.compile(r"(?<![\w-])R-?\d{2,4}[A-Za-z]?(?![\w-])"), words=_REFRIGERANT),
    AnswerType("warranty", _WARRANTY_ASKS, words=_WARRANTY),
    AnswerType("firmware", _alt("firmware", "micrologiciel", "펌웨어", "固件", "韧体", "韌體"),
               words=_FIRMWARE),
    AnswerType("wireless pairing", _PAIRING, words=_PAIRED),
    AnswerType("spare-part stock", _SPARES, words=_SPARES),
    AnswerType("price", _PRICE_ASKS, pattern=_MONEY),
)


def expected_types(question: str) -> tuple[AnswerType, ...]:
    """The attributes ``question`` asks for (empty for most questions)."""
    return tuple(t for t in ANSWER_TYPES if t.asks.search(question))


def unanswered(expected: Iterable[AnswerType],
               evidence: Iterable[tuple[str, Iterable[Value]]]) -> tuple[AnswerType, ...]:
    """Those of ``expected`` that no (text, values) piece of ``evidence`` answers."""
    pieces = [(text, tuple(values)) for text, values in evidence]
    return tuple(t for t in expected if not any(t.answered_by(text, vals) for text, vals in pieces))
