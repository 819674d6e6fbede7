"""Device codes: which equipment a question and a document are about.

Technicians name the device they stand at ("KX-7", "Hydra-400", "HY-400S"). A document
is about the codes in its ``models`` list and its title. When a question names a code
that some document is about, retrieval adds one more ranking to the fusion: the
candidates from documents about that device, in fused order; and the order stage puts the
passages of documents about *other* devices only after the rest. A question that names no code but
a product by a name a few titles give it, titles that name no code ("the Octopus"), has the passages
of documents about devices whose titles do not name it put after the rest the same way. Documents
about no device (a library reference that holds for every board, a general safety page) are not outranked;
documents about other devices are not excluded either (that is what the eligibility filter is
for), only outranked.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

from engine.lang.codes import device_codes, edition_marks, normalise_code, title_words
from engine.lang.names import question_names
from engine.types import DocumentMeta


def document_codes(meta: DocumentMeta) -> frozenset[str]:
    """What a document is about: its declared models and the codes in its title."""
    return frozenset({normalise_code(m) for m in meta.models} | device_codes(meta.title))


def document_editions(meta: DocumentMeta) -> frozenset[str]:
    """Which edition a document is about: the edition marks of its title (engine.lang.codes)."""
    return edition_marks(meta.title)


def document_names(meta: DocumentMeta) -> frozenset[str]:
    """The words of a document's title that may name its product ("Octopus user guide"): three
    letters or more, no digit (a word with one is a code, or an edition mark)."""
    return frozenset(w for w in title_words(meta.title) if len(w) >= 3 and not any(ch.isdigit() for ch in w))


def named_products(question: str, names: Mapping[str, frozenset[str]], codes: Mapping[str, frozenset[str]],
                   devices: Collection[str] = (), mentions: Callable[[str], Mapping[str, int]] | None = None
                   ) -> frozenset[str]:
    """The title words (``names``: per document, ``document_names``) that the question names by a
    name's shape (engine.lang.names: "on the Octopus"), where the titles that hold the word name no
    device code (``codes``: per document, ``document_codes``) and are at most half the library's, and
    (given ``mentions``: per document, how many of its passages hold the word) at least half the
    passages that mention it are of those documents: a product known by its name alone, which its
    own manual speaks of. A word most titles share (the brand, "manual") names no one product; nor
    does a family name a coded device's title gives ("Hydra" of "Hydra-400 pump"): a bulletin about
    its variant HY-400S need not repeat it in its title, and the codes speak for it; nor a word the
    whole library speaks of ("LED" in a LED controller's manual, a title word of its LED pages)."""
    asked = {w.casefold() for w in question_names(question, devices)}
    if not asked:
        return frozenset()
    held: dict[str, set[str]] = {}
    coded: set[str] = set()
    for path, words in names.items():
        for w in words & asked:
            held.setdefault(w, set()).add(path)
            if codes.get(path):
                coded.add(w)
    out = set()
    for w, paths in held.items():
        if len(paths) > len(names) / 2 or w in coded:
            continue
        if mentions is not None:
            count = mentions(w)
            if sum(count.get(p, 0) for p in paths) < MENTION_SHARE * sum(count.values()):
                continue
        out.add(w)
    return frozenset(out)


MENTION_SHARE = 0.5  # of the passages mentioning a product's name that are of the manuals it titles


def other_product(doc_names: frozenset[str], doc_codes: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a document is about another device than the product a question names by name
    (``named``: ``named_products``): it is about a device (its codes) and its title names none of
    them. A document about no device is about none other either."""
    return bool(named) and bool(doc_codes) and not doc_names & named


def about_others(doc: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a document about the devices (or editions) ``doc`` is about none of those a question
    names (``named``, already narrowed to the known ones): False when either names none."""
    return bool(doc) and bool(named) and not doc & named


def mentioned(question: str, known: Iterable[str]) -> frozenset[str]:
    """The known device codes that the question names."""
    return frozenset(device_codes(question) & set(known))


def named_editions(question: str, known: Iterable[str]) -> frozenset[str]:
    """The editions the question names that some document's title names too."""
    return edition_marks(question) & frozenset(known)


def device_names(doc_meta: Mapping[str, DocumentMeta]) -> dict[str, frozenset[str]]:
    """Per device code, the words of the titles of the documents about it (what a question may
    name the device by, next to its code: engine.lang.codes.content_question)."""
    names: dict[str, set[str]] = {}
    for meta in doc_meta.values():
        for code in document_codes(meta):
            names.setdefault(code, set()).update(title_words(meta.title))
    return {code: frozenset(words) for code, words in names.items()}


def names_of(codes: Iterable[str], names: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The title words of the devices ``codes`` name (``device_names``)."""
    return frozenset().union(*(names.get(c, frozenset()) for c in codes))
