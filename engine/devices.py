"""Device codes: which equipment a question and a document are about.

Technicians name the device they stand at ("KX-7", "Hydra-400", "HY-400S"). A document
is about the codes in its ``models`` list and its title. When a question names a code
that some document is about, retrieval adds one more ranking to the fusion: the
candidates from documents about that device, in fused order. Documents about other
devices are not excluded (that is what the eligibility filter is for), only outranked.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from engine.types import DocumentMeta

# letters then digits, optionally joined by '-', '_' or a space, optional letter suffix:
# KX-7, HY-400S, Hydra-400, VB 12, CV60
_CODE = re.compile(r"(?<![\w])([^\W\d_]{1,12})[-_ ]?(\d{1,5}[^\W\d_]{0,2})(?![\w])")


def normalise(code: str) -> str:
    return re.sub(r"[-_\s]", "", unicodedata.normalize("NFKC", code)).casefold()


def codes_in(text: str) -> set[str]:
    """Device-code-shaped tokens of a text, normalised ("KX-7" -> "kx7")."""
    text = unicodedata.normalize("NFKC", text)
    return {normalise(a + b) for a, b in _CODE.findall(text)}


def document_codes(meta: DocumentMeta) -> frozenset[str]:
    """What a document is about: its declared models and the codes in its title."""
    return frozenset({normalise(m) for m in meta.models} | codes_in(meta.title))


def mentioned(question: str, known: Iterable[str]) -> frozenset[str]:
    """The known device codes that the question names."""
    return frozenset(codes_in(question) & set(known))
