"""One TOML config read into frozen dataclasses.

Where the values come from, lowest to highest priority:
  1. the defaults below (each field documents itself in its ``metadata["doc"]``),
  2. the user's config file (``<user config dir>/fieldqa/config.toml``) or the
     file given with ``--config``,
  3. explicit overrides passed by the caller (CLI flags).

``fieldqa config show`` prints every effective value and where it came from.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
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


def doc(text: str, default: Any = dataclasses.MISSING, factory: Any = dataclasses.MISSING):
    kw: dict[str, Any] = {"metadata": {"doc": text}}
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
    threads: int = doc("onnxruntime intra-op threads.", 2)
    max_length: int = doc("Embedder max tokens per passage (longer is truncated).", 512)
    batch_size: int = doc("Embedder batch size (batches are sorted by length).", 16)
    rerank_max_length: int = doc("Cross-encoder max tokens per (question, passage) pair.", 256)


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    max_tokens: int = doc("Token budget per chunk, counted with the embedder's tokenizer.", 350)
    overlap_tokens: int = doc("Overlap when one unit alone exceeds the budget and is split at sentences.", 32)
    max_file_mb: float = doc("Files larger than this are skipped and reported.", 50.0)
    pdf_timeout_s: float = doc("Time limit for parsing one PDF (in a subprocess).", 60.0)
    pdf_memory_mb: int = doc("Address-space limit for the PDF parsing subprocess.", 1024)


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    lexical_depth: int = doc("How many ids the lexical (BM25) branch returns.", 50)
    vector_depth: int = doc("How many ids the vector (HNSW) branch returns.", 50)
    rrf_c: int = doc(
        "Reciprocal rank fusion constant c in 1/(c + rank). 5, not the customary 60: chosen on train "
        "questions; on multi-dev hybrid R@5 is 0.967 at c=5, 0.958 at 20, 0.952 at 60 (lexical alone 0.960).",
        5,
    )
    fused_window: int = doc("How many fused candidates survive fusion.", 50)
    rerank: bool = doc(
        "Run the cross-encoder stage. Off by default: the shipped fieldqa-reranker lifts multi-dev R@1 "
        ".857 -> .889 but not the bundled manuals' (.652 either way, R@5 .924 -> .909) and costs ~0.4 s a "
        "question; see models/reranker/MODEL_CARD.md.", False)
    rerank_input: int = doc("How many fused candidates the reranker scores.", 20)
    rerank_learned_blend: bool = doc(
        "Use the blend learned with the cross-encoder when its manifest has one (a weighted RRF of its "
        "order with the fused and both branch orders, engine.fusion.RerankBlend); false: the RRF of the "
        "fused and cross-encoder orders (rerank_blend_c). The shipped model's was fitted on Wikipedia QA "
        "(multi-dev R@1 .857 -> .889) and weights the lexical branch up; on manuals with cross-lingual "
        "questions the plain RRF does better (samples R@1 .652 vs .727): see models/reranker/MODEL_CARD.md.",
        True)
    rerank_blend_c: int = doc(
        "Without a learned blend (none in the model's manifest, or rerank_learned_blend = false) the "
        "reranked order is the RRF (this c) of the fused order and the cross-encoder's. -1 = the "
        "cross-encoder's order alone, for any model.", 5)
    final_context: int = doc("How many passages the answer is built from.", 5)
    context_token_budget: int = doc("Token budget for the final context incl. neighbour expansion.", 2000)
    rerank_timeout_ms: int = doc("Reranker time limit; past it the fused order is kept (degraded).", 5000)
    hnsw_m: int = doc("HNSW graph degree M.", 16)
    hnsw_ef_construction: int = doc("HNSW ef at build time.", 200)
    hnsw_ef_search: int = doc("HNSW ef at query time (raised to k when k exceeds it).", 64)
    exact_search_below: int = doc("Below this many eligible chunks, vectors are searched exactly with numpy.", 5000)


@dataclass(frozen=True, slots=True)
class FilterConfig:
    include_superseded: bool = doc("Also search superseded versions (shown side by side).", False)
    teams: tuple[str, ...] = doc("Teams the user belongs to (restricted documents need one).", ())
    device_model: str = doc("Only documents that apply to this device model ('' = any).", "")
    as_of: str = doc("Only documents dated on or before this ISO date ('' = any).", "")


@dataclass(frozen=True, slots=True)
class AnswerConfig:
    abstain_threshold: float = doc(
        "Below this evidence score the answer says 'not found in these documents'.", 0.0
    )
    answerability: str = doc(
        "Learned answerability model (engine.answerability): a path, or a name inside `models.dir`'s "
        "answerability folder; '' = the hand rule (evidence score below abstain_threshold).",
        "answerability.json")
    answerability_threshold: float = doc(
        "Abstain when the answerability probability is below this; -1 = the threshold fitted with "
        "the model (on training questions).", -1.0)
    max_claims: int = doc("Most claims in one answer.", 6)
    to_consult: int = doc("Passages listed as 'to consult' when abstaining.", 3)


@dataclass(frozen=True, slots=True)
class TuiConfig:
    theme: str = doc("Textual theme name ('' = textual-dark; NO_COLOR is respected).", "")
    history_size: int = doc("Questions remembered in the input history.", 100)
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
    def reranker_dir(self) -> Path | None:
        return self.models.dir / self.models.reranker if self.models.reranker else None

    @property
    def answerability_path(self) -> Path | None:
        name = self.answer.answerability
        if not name:
            return None
        p = Path(name).expanduser()
        return p if p.is_absolute() or len(p.parts) > 1 else self.models.dir / "answerability" / name

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


# the values a setting may take: a thread count of 1000 or a final context of 0 is a typo that
# would stall or empty every answer, so it is refused with one line, not used
_RANGES: dict[str, tuple[float, float]] = {
    "models.threads": (1, 64), "models.max_length": (16, 8192), "models.batch_size": (1, 1024),
    "models.rerank_max_length": (16, 8192),
    "chunking.max_tokens": (16, 8192), "chunking.overlap_tokens": (0, 4096), "chunking.max_file_mb": (0.001, 100_000),
    "chunking.pdf_timeout_s": (0.1, 3600), "chunking.pdf_memory_mb": (64, 1_000_000),
    "retrieval.lexical_depth": (1, 100_000), "retrieval.vector_depth": (1, 100_000),
    "retrieval.rrf_c": (0, 100_000), "retrieval.fused_window": (1, 100_000), "retrieval.rerank_input": (0, 10_000),
    "retrieval.rerank_blend_c": (-1, 100_000), "retrieval.final_context": (1, 10_000),
    "retrieval.context_token_budget": (1, 1_000_000), "retrieval.rerank_timeout_ms": (1, 600_000),
    "retrieval.hnsw_m": (2, 256), "retrieval.hnsw_ef_construction": (8, 10_000),
    "retrieval.hnsw_ef_search": (1, 10_000), "retrieval.exact_search_below": (0, 10_000_000),
    "answer.abstain_threshold": (-1e9, 1e9), "answer.answerability_threshold": (-1, 1),
    "answer.max_claims": (1, 100), "answer.to_consult": (0, 50), "tui.history_size": (1, 100_000),
}


def _in_range(key: str, value: float) -> float:
    lo, hi = _RANGES.get(key, (-math.inf, math.inf))
    if math.isnan(value) or not lo <= value <= hi:
        raise ConfigError(f"{key}: {value!r} is out of range (allowed {lo:g} to {hi:g})")
    return value


def _coerce(value: Any, target: Any, key: str) -> Any:
    t = target.type if isinstance(target.type, str) else str(target.type)
    try:
        if value is None or value == "" and "None" in t:
            return None
        if "Path" in t:
            return Path(value).expanduser()
        if t == "bool":
            if not isinstance(value, bool):
                raise TypeError
            return value
        if t == "int":
            if isinstance(value, bool):
                raise TypeError
            return _in_range(key, int(value))
        if t == "float":
            return _in_range(key, float(value))
        if t == "str":
            return str(value)
        if t.startswith("tuple"):
            if isinstance(value, str):
                value = [value]
            return tuple(str(x) for x in value)
        if t.startswith("Mapping"):
            return {str(k): str(v) for k, v in dict(value).items()}
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{key}: cannot use {value!r} as {t}") from e
    return value


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
            sections.setdefault(head, {})[rest] = _coerce(value, sub_fields[rest], key)
        else:
            if dataclasses.is_dataclass(getattr(cfg, head)):
                raise ConfigError(f"{key} is a section: use [{key}] in TOML")
            top[head] = _coerce(value, f, key)
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
