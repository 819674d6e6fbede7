"""Device codes: which equipment a question and a document are about.

Technicians name the device they stand at ("KX-7", "Hydra-400", "HY-400S"). A document
is about the codes in its ``models`` list and its title. When a question names a code
that some document is about, retrieval adds one more ranking to the fusion: the
candidates from documents about that device, in fused order; and the order stage puts the
passages of documents about *other* devices only after the rest. Documents about no device
(a library reference that holds for every board, a general safety page) are not outranked;
documents about other devices are not excluded either (that is what the eligibility filter is
for), only outranked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engine.lang.codes import device_codes, edition_marks, normalise_code, title_words
from engine.types import DocumentMeta


def document_codes(meta: DocumentMeta) -> frozenset[str]:
    """What a document is about: its declared models and the codes in its title."""
    return frozenset({normalise_code(m) for m in meta.models} | device_codes(meta.title))


def document_editions(meta: DocumentMeta) -> frozenset[str]:
    """Which edition a document is about: the edition marks of its title (engine.lang.codes)."""
    return edition_marks(meta.title)


def other_edition(doc: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a document about editions ``doc`` is about none of the editions a question names
    (``named``, already narrowed to the known ones): False when either names none."""
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
