"""One TOML config read into frozen dataclasses.

Where the values come from, lowest to highest priority:
  1. the defaults below (each field documents itself in its ``metadata["doc"]``),
  2. the user's config file (``<user config dir>/fieldqa/config.toml``) or the
     file given with ``--config``,
  3. explicit overrides passed by the caller (CLI flags).

``fieldqa config show`` prints every effective value and where it came from.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import math
import tomllib
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import platformdirs

APP = "fieldqa"
REPO_ROOT = Path(__file__).resolve().parent.parent


def _default_models_dir() -> Path:
    """The repo's models/ folder when running from a checkout, else the user data dir."""
    repo_models = REPO_ROOT / "models"
    if (repo_models / "build_e5.py").exists():
        return repo_models
    return Path(platformdirs.user_data_dir(APP)) / "models"


def doc(text: str, default: Any = dataclasses.MISSING, factory: Any = dataclasses.MISSING, *,
        range: tuple[float, float] | None = None):  # noqa: A002 - reads as the setting's range
    """A setting: its documentation, its default and, for a number, the values it may take (a
    thread count of 1000 or a final context of 0 is a typo that would stall or empty every
    answer, so it is refused with one line, not used)."""
    kw: dict[str, Any] = {"metadata": {"doc": text, "range": range}}
    if factory is not dataclasses.MISSING:
        kw["default_factory"] = factory
    else:
        kw["default"] = default
    return field(**kw)


@dataclass(frozen=True, slots=True)
class ModelsConfig:
    dir: Path = doc("Folder holding the built model folders.", factory=_default_models_dir)
    embedder: str = doc("Embedder folder name inside `dir`.", "multilingual-e5-small")
    reranker: str = doc("Cross-encoder folder name inside `dir` ('' = no reranker).", "fieldqa-reranker")
    query_encoder: str = doc(
        "Query encoder folder name inside `dir` ('' = none): the embedder with trained low-rank updates for "
        "questions (models/query_encoder/). Its vector of the question searches the vectors a second time and "
        "the two lists are merged by RRF (`retrieval.rrf_c`) into the vector branch; the learned passage order "
        "reads its cosines too, when it was fitted on them (`retrieval.passage_order`; with another query encoder, "
        "or none, that order is off); everything else reads the embedder's own vector, from the same run. "
        "Vector branch on six manual sets' train splits, each through "
        "the encoder trained without it: R@1 / R@5 .580 / .805 -> .633 / .854; klipper-manuals dev full R@5 .909 "
        "-> .927 (R@1 .673 either way).", "fieldqa-query")
    threads: int = doc("onnxruntime intra-op threads.", 2, range=(1, 64))
    max_length: int = doc("Embedder max tokens per passage (longer is truncated).", 512, range=(16, 8192))
    batch_size: int = doc("Embedder batch size (batches are sorted by length).", 16, range=(1, 1024))
    rerank_max_length: int = doc("Cross-encoder max tokens per (question, passage) pair.",
        256, range=(16, 8192))


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    max_tokens: int = doc("Token budget per chunk, counted with the embedder's tokenizer.",
        350, range=(16, 8192))
    overlap_tokens: int = doc("Overlap when one unit alone exceeds the budget and is split at sentences.",
        32, range=(0, 4096))
    section_overlap_tokens: int = doc(
        "Overlap between consecutive chunks of one section: a chunk's last whole units (paragraphs, list "
        "items, table rows) worth up to this many tokens open the next chunk too (0 = none; at most "
        "max_tokens / 2). 128: on klipper-manuals train (95 questions) full R@1 .537 / .547 / .568 and R@5 "
        ".853 / .863 / .863 at 0 / 64 / 128; dev (reported, not chosen on) R@1 .582 / .545 / .582, R@5 "
        ".855 / .855 / .836; samples identical.",
        128, range=(0, 4096))
    pooled_unit_vectors: bool = doc(
        "Answer units' vectors (sentences, list items, table rows) pooled from their chunk's own encoder "
        "pass (late chunking: the unit's token vectors averaged), so indexing costs one pass, not one per "
        "chunk plus one per unit (about half the build time). Off by default: pooled vectors carry the "
        "chunk's context and tell a passage's sentences apart less well, and the answers lose for it. "
        "Shipped order/answerability models (2026-12-02), pooled / a pass per unit: WLED + ZMK train full "
        "R@1 .707 / .740, cited .813 / .847, first claim .660 / .740; klipper-manuals dev R@1 .727 / .782, "
        "first claim .673 / .746, abstention answerable .054 / .018, no-answer .677 / .710; samples R@1 .849 "
        "/ .864, cited .939 / .985. Refitting both models on pooled vectors did worse (samples cited .818); a "
        "linear map fitted on train text from the pooled and chunk vectors to the own-pass one (branch "
        "research/unit-map) lifts klipper dev R@1 .727 -> .764 but, the answerability's threshold being "
        "fitted on own-pass vectors, its no-answer abstention falls .677 -> .452. Why (2026-12-04, "
        "klipper-manuals chunks, its train questions, the 10 passages nearest each): the pooled vectors pick "
        "the same best unit of a passage as the own-pass ones for .39 of (question, passage) pairs on 15 of "
        "its 47 files (chance .22); ridge maps of the pooled vector and, pooled over the unit the same way, "
        "the pass's layers 2, 4, ..., 10 and its embedding layer, fitted on the other 32 files, reach .51 "
        "there: a passage's token vectors carry its context at every layer. Nor can a pass per unit, however "
        "batched, reach the embedder's passages/s: a unit is embedded with its headings (and a table row with "
        "its header), 1.27x the chunks' tokens there. Nor one pass with attention masked by unit (2026-12-05, "
        "klipper-manuals' 1,264 chunks, its train questions: a unit's tokens see their own and the tokens of "
        "no unit, the headings and table header, at positions restarting after those): its unit vectors, at "
        "cosine .973 to the own-pass ones (pooled .933), pick the same unit for .62 of the pairs (pooled .34), "
        "but its chunk vectors, read unit by unit, drop the vector branch's R@1 .758 -> .537 (R@5 .905 -> "
        ".800), so the chunk still needs a pass of its own. For libraries too large to index twice over. Needs a "
        "model graph with token vectors (as `fieldqa models build` writes); else a pass per unit.",
        False)
    max_file_mb: float = doc("Files larger than this are skipped and reported.", 50.0, range=(0.001, 100_000))
    pdf_timeout_s: float = doc("Time limit for parsing one PDF (in a subprocess).", 60.0, range=(0.1, 3600))
    pdf_memory_mb: int = doc("Address-space limit for the PDF parsing subprocess.",
        1024, range=(64, 1_000_000))


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    lexical_depth: int = doc("How many ids the lexical (BM25) branch returns.", 50, range=(1, 100_000))
    vector_depth: int = doc("How many ids the vector (HNSW) branch returns.", 50, range=(1, 100_000))
    rrf_c: int = doc(
        "Reciprocal rank fusion constant c in 1/(c + rank). 5, not the customary 60: chosen on train "
        "questions; on multi-dev hybrid R@5 is 0.967 at c=5, 0.958 at 20, 0.952 at 60 (lexical alone 0.960).",
        5, range=(0, 100_000))
    lexical_sight_knee: float = doc(
        "The lexical ranking's weight in the fusion is min(1, sight / this), sight being the IDF-weighted "
        "share of the question's terms the index holds (near 0 for a question in another language than "
        "the manuals: its lexical list is noise then); 0 = plain RRF. 0.5, chosen on the train splits "
        "(hybrid R@1 plain -> 0.5: klipper-manuals .568 -> .600, piaf-fr .703 -> .713, cmrc-zh and "
        "drcd-zh-hant unchanged; the power rule sight**1 lost drcd-zh-hant .835 -> .785). Not shipped "
        "(2026-12-07): a lower weight still for a question in another language than the vector branch's "
        "first ten passages (min(1, sight / k) at k = .75 to 5, that to the power 2 or 3, or 0): over the "
        "236 cross-lingual questions of six manual sets' train splits hybrid R@1 goes .623 -> .631 at best "
        "(power 3: two questions; vector alone .631), the six sets' mean .658 -> .662: too little to fit on.",
        0.5, range=(0.0, 1.0))
    fused_window: int = doc("How many fused candidates survive fusion.", 50, range=(1, 100_000))
    rerank: bool = doc(
        "Run the cross-encoder stage. Off by default: the shipped fieldqa-reranker lifts multi-dev R@1 "
        ".857 -> .889 but not the bundled manuals' (.652 either way, R@5 .924 -> .909) and costs ~0.4 s a "
        "question; see models/reranker/MODEL_CARD.md.", False)
    rerank_input: int = doc("How many fused candidates the order stage (learned passage order) and the reranker "
        "re-order; the rest keep their fused ranks after them.", 20, range=(0, 10_000))
    rerank_learned_blend: bool = doc(
        "Use the blend learned with the cross-encoder when its manifest has one (a weighted RRF of its "
        "order with the fused and both branch orders, engine.search.fusion.RerankBlend); false: the RRF of the "
        "fused and cross-encoder orders (rerank_blend_c). The shipped model's was fitted on Wikipedia QA "
        "(multi-dev R@1 .857 -> .889) and weights the lexical branch up; on manuals with cross-lingual "
        "questions the plain RRF does better (samples R@1 .652 vs .727): see models/reranker/MODEL_CARD.md.",
        True)
    rerank_blend_c: int = doc(
        "Without a learned blend (none in the model's manifest, or rerank_learned_blend = false) the "
        "reranked order is the RRF (this c) of the fused order and the cross-encoder's. -1 = the "
        "cross-encoder's order alone, for any model.", 5, range=(-1, 100_000))
    passage_order: str = doc(
        "Learned passage order (engine.search.order) for the first rerank_input fused candidates: a path, "
        "or a name inside `models.dir`'s passage_order folder; '' = the fused order. The shipped order reads the "
        "query encoder's cosines (`models.query_encoder`) and is off without it.", "passage_order.json")
    final_context: int = doc("How many passages the answer is built from.", 5, range=(1, 10_000))
    context_token_budget: int = doc("Token budget for the final context incl. neighbour expansion.",
        2000, range=(1, 1_000_000))
    rerank_timeout_ms: int = doc("Reranker time limit; past it the fused order is kept (degraded).",
        5000, range=(1, 600_000))
    hnsw_m: int = doc("HNSW graph degree M.", 16, range=(2, 256))
    hnsw_ef_construction: int = doc("HNSW ef at build time.", 200, range=(8, 10_000))
    hnsw_ef_search: int = doc("HNSW ef at query time (raised to k when k exceeds it).", 64, range=(1, 10_000))
    exact_search_below: int = doc("Below this many eligible chunks, vectors are searched exactly with numpy.",
        5000, range=(0, 10_000_000))


@dataclass(frozen=True, slots=True)
class FilterConfig:
    include_superseded: bool = doc("Also search superseded versions (shown side by side).", False)
    teams: tuple[str, ...] = doc("Teams the user belongs to (restricted documents need one).", ())
    device_model: str = doc("Only documents that apply to this device model ('' = any).", "")
    as_of: str = doc("Only documents dated on or before this ISO date ('' = any).", "")


@dataclass(frozen=True, slots=True)
class AnswerConfig:
    abstain_threshold: float = doc(
        "Below this evidence score the answer says 'not found in these documents'.", 0.0, range=(-1e9, 1e9))
    answerability: str = doc(
        "Learned answerability model (engine.answer.answerability): a path, or a name inside `models.dir`'s "
        "answerability folder; '' = the hand rule (evidence score below abstain_threshold).",
        "answerability.json")
    answerability_threshold: float = doc(
        "Abstain when the answerability probability is below this; -1 = the threshold fitted with "
        "the model (on training questions).", -1.0, range=(-1, 1))
    answerability_cross_encoder: bool = doc(
        "Score the first context passages with the cross-encoder for the answerability features even "
        "when the rerank stage is off (~80 ms a question on 2 cores); off: its variant is used when the "
        "rerank stage ran (the logits are at hand), else the base one. On klipper-manuals train the two "
        "variants abstain alike (answerable .021, no-answer .290; Brier .195 either way).", False)
    max_claims: int = doc("Most claims in one answer.", 6, range=(1, 100))
    to_consult: int = doc("Passages listed as 'to consult' when abstaining.", 3, range=(0, 50))


@dataclass(frozen=True, slots=True)
class TuiConfig:
    theme: str = doc("Textual theme name ('' = textual-dark; NO_COLOR is respected).", "")
    history_size: int = doc("Questions remembered in the input history.", 100, range=(1, 100_000))
    export_dir: Path | None = doc(
        "Folder for work-order exports from the TUI ('' = <user documents>/fieldqa-work-orders).", None)
    keymap: Mapping[str, str] = doc(
        "Binding id -> comma-separated keys, overriding the TUI's own keys (its help screen, F1, lists "
        "every id); an unknown id is reported when the TUI starts.",
        factory=dict,
    )


@dataclass(frozen=True, slots=True)
class Config:
    library: Path | None = doc("Default library folder opened by `fieldqa`.", None)
    index_dir: Path | None = doc("Where indexes live ('' = user data dir, one per library).", None)
    models: ModelsConfig = field(default_factory=ModelsConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    tui: TuiConfig = field(default_factory=TuiConfig)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def embedder_dir(self) -> Path:
        return self.models.dir / self.models.embedder

    @property
    def query_encoder_dir(self) -> Path | None:
        return self.models.dir / self.models.query_encoder if self.models.query_encoder else None

    @property
    def reranker_dir(self) -> Path | None:
        return self.models.dir / self.models.reranker if self.models.reranker else None

    @property
    def answerability_path(self) -> Path | None:
        return _model_file(self.answer.answerability, self.models.dir / "answerability")

    @property
    def passage_order_path(self) -> Path | None:
        return _model_file(self.retrieval.passage_order, self.models.dir / "passage_order")

    def index_dir_for(self, library: Path) -> Path:
        """One index folder per library, named after its resolved path."""
        import hashlib

        lib = library.resolve()
        base = self.index_dir or Path(platformdirs.user_data_dir(APP)) / "indexes"
        tag = hashlib.sha256(str(lib).encode()).hexdigest()[:12]
        return base / f"{lib.name or 'library'}-{tag}"

    def replace(self, **changes: Any) -> "Config":
        """Dotted overrides: ``cfg.replace(**{"retrieval.final_context": 2})``."""
        return _apply(self, changes, "override")


def _model_file(name: str, folder: Path) -> Path | None:
    """A fitted model's file: '' = none, a bare name = inside ``folder``, else the path given."""
    if not name:
        return None
    p = Path(name).expanduser()
    return p if p.is_absolute() or len(p.parts) > 1 else folder / name


class ConfigError(ValueError):
    pass


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP)) / "config.toml"


def load_config(path: Path | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Defaults, then the TOML file (if any), then ``overrides`` (dotted keys)."""
    cfg = Config()
    file = path if path is not None else default_config_path()
    if path is not None and not file.exists():
        raise ConfigError(f"config file not found: {file}")
    if file.exists():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{file}: {e}") from e
        cfg = _apply(cfg, _flatten(data), str(file))
    if overrides:
        cfg = _apply(cfg, dict(overrides), "override")
    return cfg


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and key != "tui.keymap":
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _in_range(key: str, value: float, allowed: tuple[float, float] | None) -> float:
    lo, hi = allowed or (-math.inf, math.inf)
    if math.isnan(value) or not lo <= value <= hi:
        raise ConfigError(f"{key}: {value!r} is out of range (allowed {lo:g} to {hi:g})")
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, owner: type, f: dataclasses.Field, key: str) -> Any:
    """``value`` (from TOML or the command line) as the field's declared type, or a ConfigError."""
    tp = _hints(owner)[f.name]
    args = typing.get_args(tp)
    if type(None) in args:  # X | None: '' or nothing means None
        if value is None or value == "":
            return None
        tp = next(a for a in args if a is not type(None))
    origin = typing.get_origin(tp) or tp
    try:
        if origin is Path:
            return Path(value).expanduser()
        if origin is bool or (origin in (int, float) and isinstance(value, bool)):
            if not isinstance(value, bool) or origin is not bool:
                raise TypeError
            return value
        if origin in (int, float):
            return _in_range(key, origin(value), f.metadata.get("range"))
        if origin is str:
            return str(value)
        if origin is tuple:
            return tuple(str(x) for x in ([value] if isinstance(value, str) else value))
        if origin is collections.abc.Mapping:
            return {str(k): str(v) for k, v in dict(value).items()}
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{key}: cannot use {value!r} as {getattr(tp, '__name__', tp)}") from e
    raise ConfigError(f"{key}: settings of type {tp} are not supported")


def _apply(cfg: Config, changes: Mapping[str, Any], origin: str) -> Config:
    sources = dict(cfg.sources)
    sections: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    known_top = {f.name: f for f in fields(Config) if f.name != "sources"}
    for key, value in changes.items():
        head, _, rest = key.partition(".")
        if head not in known_top:
            raise ConfigError(f"unknown config key: {key}")
        f = known_top[head]
        if rest:
            sub = getattr(cfg, head)
            if not dataclasses.is_dataclass(sub):
                raise ConfigError(f"unknown config key: {key}")
            sub_fields = {sf.name: sf for sf in fields(sub)}
            if rest not in sub_fields:
                raise ConfigError(f"unknown config key: {key}")
            sections.setdefault(head, {})[rest] = _coerce(value, type(sub), sub_fields[rest], key)
        else:
            if dataclasses.is_dataclass(getattr(cfg, head)):
                raise ConfigError(f"{key} is a section: use [{key}] in TOML")
            top[head] = _coerce(value, Config, f, key)
        sources[key] = origin
    new = {name: dataclasses.replace(getattr(cfg, name), **vals) for name, vals in sections.items()}
    return dataclasses.replace(cfg, **top, **new, sources=sources)


def describe(cfg: Config) -> list[tuple[str, Any, str, str]]:
    """(dotted key, effective value, origin, documentation) for every knob."""
    rows: list[tuple[str, Any, str, str]] = []
    for f in fields(cfg):
        if f.name == "sources":
            continue
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            for sf in fields(value):
                key = f"{f.name}.{sf.name}"
                rows.append((key, getattr(value, sf.name), cfg.sources.get(key, "default"),
                             sf.metadata.get("doc", "")))
        else:
            rows.append((f.name, value, cfg.sources.get(f.name, "default"), f.metadata.get("doc", "")))
    return rows
