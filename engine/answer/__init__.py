"""Cited answers, extractive: claims are units taken verbatim from the final context.

``compose_answer(question, result, source, config)`` turns a search result (the final context,
in rank order) into an :class:`~engine.types.Answer`; ``source`` is an :class:`AnswerSource`
(what answering needs from a library: metadata, chunks, neighbours, other versions, the
embedder). The steps, one module each:

- ``units``: a unit (sentence, list item, table row: engine.lang.units) read for answering: the
  text it is embedded and matched with, its exact tokens, the values it gives;
- ``scoring``: every unit of the first passages scored for the question (``assess``): cosine
  of question and unit vectors, plus the share of the question's content words it holds
  (device names left out), exact codes shared, an attribute asked for given
  (engine.answer.answertype), the passage's rank; minus instructions to the system and documents
  about another device than the one named;
- ``abstention``: the learned answerability verdict (engine.answer.answerability: a calibrated
  probability from general features, fitted on training questions) or, without a model
  fitted for this embedder, the hand rule (evidence below a threshold, or none of the
  attributes asked for); either way the closest passages are listed to consult, with why;
- ``selection``: the claims: the best unit of each close passage, then the closest
  runners-up, and the best unit for each part of a compound question;
- ``conditions``: warnings and restrictions next to a claim travel with it; a passage that
  points forward brings the next section's;
- ``versions``: conflicts with the context and with other versions of the same section,
  looked up under the query's eligibility rule (a superseded version only ever as a cited
  side of the warning; restricted or dated-out versions never);
- ``compose``: the short function that calls them and orders the claims (the passage holding
  the best claim first). A claim's text is always ``document_text(path)[char_start:char_end]``
  inside its cited chunk's span. Units that read as instructions to the system are never
  followed: scored down, marked ``flagged`` when shown, never a side of a conflict.
"""

from engine.answer.abstention import (
    CALIBRATED_THRESHOLD, Verdict, abstain_threshold, abstains, answerability, evidence_features,
)
from engine.answer.compose import citation_for, compose_answer
from engine.answer.scoring import (
    SCORED_PASSAGES, Assessment, ScoredUnit, assess, content_terms, device_vocabulary, rank_prior,
)
from engine.answer.selection import MAX_PASSAGES, PASSAGE_MARGIN, question_parts, select_units
from engine.answer.source import AnswerSource
from engine.answer.units import _VectorCache

__all__ = [
    "AnswerSource", "Assessment", "CALIBRATED_THRESHOLD", "MAX_PASSAGES", "PASSAGE_MARGIN", "SCORED_PASSAGES",
    "ScoredUnit", "Verdict", "abstain_threshold", "abstains", "answerability", "assess", "citation_for",
    "compose_answer", "content_terms", "device_vocabulary", "evidence_features", "question_parts",
    "rank_prior", "select_units", "_VectorCache",
]
