"""Fit (on train splits) and report (on dev splits) the lexical branch's weight in the fusion.

    .venv/bin/python bench/fusion_sight.py --sets klipper-manuals:train,piaf-fr:train:400,cmrc-zh:train:400,drcd-zh-hant:train:400
    .venv/bin/python bench/fusion_sight.py --sets klipper-manuals:dev --knees 0,0.5
    .venv/bin/python bench/fusion_sight.py --sets klipper-manuals:train,wled-docs:train,zmk-docs:train \
        --knees 0.5 --other mismatch=0,mismatch=0.5,depth=3,depth=10,peak=1

RRF gives BM25's list the same weight whether or not it can see the question: a question in
another language than the manuals shares only identifiers with them, and its BM25 list is
mostly noise that drags the vector branch down. The fusion weighs the lexical list by
``min(1, sight / knee)`` (engine.search.stages.lexical_weight; sight: the IDF-weighted share of
the question's terms that occur in the index) and the vector list by 1. ``knee = 0`` is plain
RRF. This prints R@1 / R@5 / MRR@10 of the fused list for each knee per set and family (the
branch lists are computed once per question), so ``retrieval.lexical_sight_knee`` is chosen on
train questions. (A power rule, ``sight ** p``, was measured too: it also lowers the weight of
same-language questions with a few unknown words, and cost drcd-zh-hant train R@1 .835 -> .785.)

``--other`` measures, on top of the knee, further rules for a question in another language than
most of the library's passages (engine.lang.language.question_language against the passages'
language), each a guess at "the lexical branch is blind to this question": ``mismatch=W`` (its
lexical weight times W), ``depth=K`` (only the first K of its lexical list count), ``peak=P``
(times ``min(1, (peak / 0.5) ** P)``, peak being how far BM25's first score stands above the mean
of the next nine, relative to it: an identifier match stands out, noise does not). The report adds
the group "other language" (the questions these rules act on), per set too. Measured 2026-12-02
(knee 0.5; R@1 / MRR@10 of those questions; the query encoder of the vector branch was trained on
klipper-manuals' train questions, on neither of the other two sets'):

| rule | klipper-manuals train (46) | wled-docs train (41) | zmk-docs train (40) | klipper-manuals dev (31) |
|---|---|---|---|---|
| the knee alone (shipped) | .696 / .766 | .659 / .751 | .675 / .721 | .645 / .770 |
| mismatch=0 | .696 / .763 | .659 / .741 | .650 / .704 | .710 / .804 |
| mismatch=0.5 | .696 / .766 | .659 / .746 | .675 / .721 | .677 / .786 |
| depth=3 | .630 / .732 | .610 / .725 | .650 / .708 | .581 / .738 |
| depth=10 | .674 / .755 | .659 / .751 | .675 / .721 | .613 / .752 |
| peak=1 | .696 / .766 | .659 / .749 | .675 / .721 | .645 / .772 |

On the train splits no rule beats the knee alone on any set, and dropping the lexical list
(mismatch=0) loses a first place and MRR there: on these sets a cross-lingual question's lexical
list, noisy as it is, helps at least as often as it hurts (an identifier, a product name, a code it
shares with the manuals). So the knee stays the only rule. On klipper-manuals dev, mismatch=0 would
gain two first places (one es, one fr question, the two families where hybrid R@1 is below vector
R@1 there: issue 14); a rule the train splits do not support is not chosen for that.

Three more ways to give such a question a lexical list it can use were measured the same way
(2026-12-02, knee 0.5, R@1 / MRR@10 of the other-language questions; a one-off script over the
branch lists, not kept):

| variant | klipper train (46) | wled train (41) | zmk train (40) | klipper dev (31, report) |
|---|---|---|---|---|
| the knee alone (shipped) | .696 / .766 | .659 / .751 | .675 / .721 | .645 / .770 |
| vocabulary, 3 words, replacing the list | .696 / .764 | .634 / .725 | .725 / .759 | .548 / .715 |
| vocabulary, 3 words, a third list | .696 / .769 | .634 / .723 | .750 / .772 | .484 / .677 |
| vocabulary, 5 words, a third list | .674 / .763 | .659 / .737 | .700 / .734 | .516 / .695 |
| lexical list within the vector branch's first 10 | .696 / .766 | .659 / .746 | .675 / .721 | .710 / .802 |
| the question's own-language stopwords dropped | .674 / .754 | .659 / .752 | .700 / .736 | .645 / .770 |

"Vocabulary": the library's own words (letters, digits, ``_`` and ``-``; in 2 or more passages and
at most 30 % of them; 4,173 for klipper, embedded as passages in 15 s) ranked by cosine to the
question's embedder vector, the first M searched by BM25 (with the question, weight 0.5 in place
of its list; or alone, weight 0.5, as a third ranking). The words nearest a whole question are the
manual's own topic words and link slugs ("configuring-octoprint-to-use-klipper", "klipper3d"),
not a translation of what it asks; word by word (a word embedded as a query) the embedder
translates cognates and common terms (température -> temperature .916, 온도 -> temperature .913,
ベルト -> belts .902) but as confidently maps others to look-alikes (buse -> bus .890, courroies
-> queries .861, 皮带 -> piece .863). "Within the vector branch's first 10": the lexical list
keeps only candidates the vector branch also found, which only reorders what the vector list
holds. "Stopwords": a question's words on its own language's list (``stop-words`` 2025.11.4: es, fr,
de, it, pt, nl) left out of its BM25 query, so Spanish "no", "o", "sin", "uno" stop matching English
passages. None is better than the knee on every train split, so none is shipped.

``mismatch=W`` again over the train splits of all seven manual sets (2026-12-04: klipper-manuals,
meshtastic-docs, micropython-docs, px4-docs, valetudo-docs, wled-docs, zmk-docs; 546 answerable
questions, 275 of them in another language than their manual), R@1 / R@5 / MRR@10 of the fused
list, all questions (other-language ones): the knee alone .659 / .894 / .758 (.636 / .858 / .728);
W = 0 .659 / .894 / .755 (.636 / .858 / .724); .25 .659 / .894 / .756; .5 .661 / .896 / .758 (.640 /
.862 / .729); .75 .659 / .894 / .757. One first place in 546 at W = .5 (PX4 +1, the others equal):
no rule for it. (The query encoder was trained on the first five sets' train questions, so their
vector lists look better there than on a new manual's; WLED and ZMK, which it never saw, are equal
or lower at every W below 1.)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import load_config  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.lang.language import question_language  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402
from engine.search.fusion import fuse_rrf  # noqa: E402
from fieldqa.question_sets import set_folder  # noqa: E402



def branch_lists(spec: str, config, index_root: Path) -> list[dict]:
    name, split, *rest = spec.split(":")
    lib = Library.open(set_folder(name) / "corpus", config, index_root / name, repair=True)
    lib.build(rebuild=lib.generation is None)
    gold = GoldResolver(lib)
    langs = Counter(c.language.split("-")[0].lower() for c in lib.all_chunks() if c.language)
    main_language = langs.most_common(1)[0][0] if langs else ""
    questions = [q for q in load_questions(set_folder(name) / f"questions.{split}.tsv") if q.targets]
    if rest and len(questions) > int(rest[0]):
        keep = sorted(np.random.default_rng(7).choice(len(questions), int(rest[0]), replace=False))
        questions = [questions[i] for i in keep]
    out = []
    for q in questions:
        res = lib.search(q.text, mode="hybrid")
        lex, vec = (res.trace.stage(n) for n in ("lexical", "vector"))
        out.append({"set": name, "family": q.family or name,
                    "gold": {c.id for t in q.targets for c in gold.hits(t)},
                    "lex": [r.chunk_id for r in lex.ranked], "vec": [r.chunk_id for r in vec.ranked],
                    "lex_scores": [r.score for r in lex.ranked], "sight": lib.lexical_sight(q.text),
                    "other_language": question_language(q.text) not in ("", main_language)})
    lib.close()
    return out


RULES = ("mismatch", "depth", "peak")  # --other: what a rule does to a question in another language


def _peak(lex_scores: list[float]) -> float:
    """How far BM25's first score stands above the mean of the next nine, relative to it."""
    s = lex_scores[:10]
    return (s[0] - float(np.mean(s[1:]))) / s[0] if len(s) > 1 and s[0] > 0 else 0.0


def scores(rows: list[dict], knee: float, c: int, other: tuple[str, float] | None = None) -> dict[str, float]:
    """R@1 / R@5 / MRR@10 of the fused list; ``other``: a further rule (RULES) and its value."""
    r1 = r5 = mrr = 0.0
    for r in rows:
        w = min(1.0, r["sight"] / knee) if knee > 0 else 1.0
        lex = r["lex"]
        if other is not None and r["other_language"]:
            rule, value = other
            if rule == "mismatch":
                w *= value
            elif rule == "depth":
                lex = lex[:int(value)]
            else:
                w *= min(1.0, (_peak(r["lex_scores"]) / 0.5) ** value)
        fused = [i for i, _ in fuse_rrf([lex, r["vec"]], c=c, weights=[w, 1.0])][:10]
        rank = next((k for k, i in enumerate(fused, 1) if i in r["gold"]), None)
        r1 += rank == 1
        r5 += rank is not None and rank <= 5
        mrr += 1 / rank if rank else 0.0
    n = max(1, len(rows))
    return {"n": len(rows), "R@1": r1 / n, "R@5": r5 / n, "MRR@10": mrr / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", required=True, help="NAME:SPLIT[:N],... of models/training or ../shared/eval")
    ap.add_argument("--knees", default="0,0.3,0.5,0.7,1")
    ap.add_argument("--other", default="", help="RULE=VALUE,... (RULES: mismatch, depth, peak), each at every knee")
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/fieldqa-answerability"))
    args = ap.parse_args(argv)
    knees = [float(k) for k in args.knees.split(",")]
    others: list[tuple[str, float] | None] = [None]
    for item in filter(None, args.other.split(",")):
        rule, _, value = item.partition("=")
        if rule not in RULES or not value:
            ap.error(f"--other {item!r}: use RULE=VALUE with RULE one of {', '.join(RULES)}")
        others.append((rule, float(value)))
    columns = [(k, o) for k in knees for o in others]
    config = load_config(None)
    rows = [r for spec in args.sets.split(",") for r in branch_lists(spec, config, args.index_root)]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        groups[f"set:{r['set']}"].append(r)
        if r["family"] != r["set"]:
            groups[r["family"]].append(r)
        if r["other_language"]:  # the questions --other acts on
            groups["other language"].append(r)
            groups[f"set:{r['set']} other language"].append(r)

    def head(k: float, o: tuple[str, float] | None) -> str:
        return f"knee={k:g}" + (f" {o[0]}={o[1]:g}" if o is not None else "")

    print(f"{'group':<36} {'n':>4} " + " ".join(f"{head(k, o):>17}" for k, o in columns))
    for g, rs in sorted(groups.items()):
        cells = [scores(rs, k, config.retrieval.rrf_c, o) for k, o in columns]
        print(f"{g:<36} {len(rs):>4} " + " ".join(f"{s['R@1']:.3f}/{s['R@5']:.3f}/{s['MRR@10']:.3f}"
                                                  for s in cells))
    print("cells: R@1 / R@5 / MRR@10 of the fused list; mean sight", round(float(np.mean([r["sight"] for r in rows])), 3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
