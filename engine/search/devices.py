"""Device codes: which equipment a question and a document are about.

Technicians name the device they stand at ("KX-7", "Hydra-400", "HY-400S"). A document
is about the codes in its ``models`` list and its title. When a question names a code
that some document is about, retrieval adds one more ranking to the fusion: the
candidates from documents about that device, in fused order. Documents about other
devices are not excluded (that is what the eligibility filter is for), only outranked.
"""

from __future__ import annotations

from typing import Iterable

from engine.lang.codes import device_codes, normalise_code
from engine.types import DocumentMeta


def document_codes(meta: DocumentMeta) -> frozenset[str]:
    """What a document is about: its declared models and the codes in its title."""
    return frozenset({normalise_code(m) for m in meta.models} | device_codes(meta.title))


def mentioned(question: str, known: Iterable[str]) -> frozenset[str]:
    """The known device codes that the question names."""
    return frozenset(device_codes(question) & set(known))
