"""`fieldqa index | search | trace | eval`: build an index, query it, explain a miss, score a golden set.

Errors about the index or the models are printed as one line naming the fix (exit 2),
never as a traceback. Text from documents is printed with control characters escaped.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engine.config import Config
from engine.ingest.formats import folded
from engine.errors import IndexBusy, IndexCorrupt
from engine.safety import json_dumps, terminal_safe as safe
from engine.types import SearchResult, Trace

MODES = ("lexical", "vector", "hybrid", "full")


def register(sub: argparse._SubParsersAction) -> None:
    from fieldqa.cli import common_options

    p = sub.add_parser("index", help="index (or re-index) a library folder")
    p.add_argument("path", nargs="?", type=Path, help="library folder (default: the configured one)")
    p.add_argument("--index", type=Path, default=None, help="index folder (default: one per library)")
    p.add_argument("--rebuild", action="store_true", help="re-read every file; discard a broken index")
    common_options(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search a library; print hits and the trace summary")
    p.add_argument("question")
    p.add_argument("path", nargs="?", type=Path, help="library folder (default: the configured one)")
    p.add_argument("--index", type=Path, default=None)
    p.add_argument("--mode", choices=MODES, default="full")
    p.add_argument("--json", action="store_true")
    _filter_options(p)
    common_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("trace", help="show each stage's ranking and why an expected passage was lost")
    p.add_argument("question")
    p.add_argument("path", nargs="?", type=Path, help="library folder (default: the configured one)")
    p.add_argument("--expect", required=True, help="PATH:LINE or PATH:pN (several joined with |)")
    p.add_argument("--index", type=Path, default=None)
    p.add_argument("--top", type=int, default=10, help="entries shown per stage (text output)")
    p.add_argument("--json", action="store_true")
    _filter_options(p)
    common_options(p)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("eval", help="recall@k / MRR per mode and family on a questions TSV")
    p.add_argument("questions", type=Path)
    p.add_argument("--corpus", type=Path, required=True, help="folder the TSV paths are relative to")
    p.add_argument("--index", type=Path, default=None)
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--json", action="store_true")
    p.add_argument("--answers", action="store_true", help="also score the cited answers (engine.eval.answers)")
    p.add_argument("--misses", action="store_true",
                   help="list every question not answered at rank 1, with its ranks and the stage blamed")
    common_options(p)
    p.set_defaults(func=cmd_eval)


def _filter_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--include-superseded", action="store_true", default=None)
    p.add_argument("--team", action="append", default=None, help="a team you belong to (repeatable)")
    p.add_argument("--model", default=None, help="device model")
    p.add_argument("--as-of", default=None, help="ISO date: ignore documents dated after it")


def _config(args: argparse.Namespace) -> Config:
    from fieldqa.cli import config_from

    return config_from(args, **{
        "filters.include_superseded": getattr(args, "include_superseded", None),
        "filters.teams": getattr(args, "team", None),
        "filters.device_model": getattr(args, "model", None),
        "filters.as_of": getattr(args, "as_of", None),
    })


def _library_path(args: argparse.Namespace, cfg: Config) -> Path | None:
    path = args.path or cfg.library
    if path is None:
        print("fieldqa: no library folder given and none configured (`library = ...` in config)", file=sys.stderr)
    return Path(path) if path is not None else None


EXIT_NOT_FOUND = 3  # trace: the expected passage is not in the final list
EXIT_BUSY = 4  # another process is writing the index
EXIT_WRITE = 5  # the disk is full or failed while writing: the previous index is unchanged
EXIT_ACCESS = 6  # read-only media or no permission


def os_error_message(e: OSError) -> str:
    """One line for a file-system error, saying what happened and that nothing was lost."""
    where = f" ({e.filename})" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return (f"no space left on the device while writing the index{where}: free some space and run "
                f"again; the previous index is unchanged and still answers ({e.strerror or e})")
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (f"cannot write{where}: read-only media or no permission ({e.strerror or e}); an index "
                "can be searched from read-only media, but not built there")
    return f"input/output error{where}: {e.strerror or e}; the previous index is unchanged"


def _fail(msg: str) -> int:
    print(f"fieldqa: error: {msg}", file=sys.stderr)
    return 2


def _open(path: Path, cfg: Config, index: Path | None, **kw):
    from engine.pipeline import Library

    return Library.open(path, cfg, index, **kw)


@contextlib.contextmanager
def _existing_library(args: argparse.Namespace):
    """The built library named by ``args`` (closed afterwards); None when no folder is known."""
    cfg = _config(args)
    path = _library_path(args, cfg)
    if path is None:
        yield None
        return
    lib = _open(path, cfg, args.index, create=False)
    try:
        yield lib
    finally:
        lib.close()


def _guarded(fn):
    """Turn index and model errors into one line on stderr (exit 2)."""
    def run(args: argparse.Namespace) -> int:
        from engine.models import ModelError

        try:
            return fn(args)
        except IndexBusy as e:
            print(f"fieldqa: {e}", file=sys.stderr)
            return EXIT_BUSY
        except OSError as e:
            print(f"fieldqa: {os_error_message(e)}", file=sys.stderr)
            return EXIT_ACCESS if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM) else EXIT_WRITE
        except (IndexCorrupt, ModelError, ValueError) as e:
            return _fail(str(e))
    run.__name__ = fn.__name__
    return run


# ---- progress ---------------------------------------------------------------------------


class ProgressLine:
    """One `\\r`-updated status line on stderr, at most ~8 updates a second; only on a terminal
    (a log file or a pipe gets no carriage-return noise) unless ``force`` (``--progress``)."""

    LABELS = {"scan": "reading files", "chunk": "chunking files", "embed": "embedding chunks",
              "index": "writing index", "units": "embedding answer units (already searchable)"}

    def __init__(self, stream=None, force: bool = False):
        self.stream = stream if stream is not None else sys.stderr  # looked up now, not at import
        self.enabled = force or _is_tty(self.stream)
        self.last = 0.0
        self.width = 0

    def __call__(self, p) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = p.total and p.done >= p.total
        if now - self.last < 0.125 and not final:
            return
        self.last = now
        count = f"{p.done}/{p.total}" if p.total else f"{p.done}"
        eta = f"  ETA {_duration(p.eta_s)}" if p.eta_s is not None and not final else ""
        note = f"  ({p.note})" if p.note else ""
        line = f"{self.LABELS.get(p.phase, p.phase)}: {count}{eta}{note}"
        self.stream.write("\r" + line.ljust(self.width))
        self.width = len(line)
        self.stream.flush()

    def write(self, line: str) -> None:
        """A free-form status line (e.g. questions done), replacing the last one."""
        if self.enabled:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
            self.stream.flush()

    def done(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _build(lib, rebuild: bool = False, progress: bool = False):
    bar = ProgressLine(force=progress)
    cancel = threading.Event()
    try:
        return lib.build(progress=bar, cancel=cancel, rebuild=rebuild)
    finally:
        bar.done()


# ---- commands ---------------------------------------------------------------------------


@_guarded
def cmd_index(args: argparse.Namespace) -> int:
    cfg = _config(args)
    path = _library_path(args, cfg)
    if path is None:
        return 2
    if not path.is_dir():
        return _fail(f"{path} is not a folder")
    lib = _open(path, cfg, args.index, repair=args.rebuild)
    try:
        t0 = time.monotonic()
        report = _build(lib, rebuild=args.rebuild, progress=args.progress)
        print(f"indexed {report.documents} documents, {report.chunks} chunks "
              f"({report.unchanged} unchanged, {report.removed} removed) in {time.monotonic() - t0:.1f} s")
        print(f"index: {lib.store.dir}")
        for issue in folded(list(report.issues)):
            print(f"  {issue.severity}: {safe(issue.path)}: {safe(issue.reason)}")
    finally:
        lib.close()
    return 0


@_guarded
def cmd_search(args: argparse.Namespace) -> int:
    with _existing_library(args) as lib:
        if lib is None:
            return 2
        res = lib.search(args.question, mode=args.mode)
        if args.json:
            from engine.render import trace_to_dict

            print(json_dumps({"question": res.question, "mode": args.mode,
                              "hits": [_hit_json(h) for h in res.hits], "trace": trace_to_dict(res.trace)}, indent=2))
            return 0
        print(_search_text(res))
    return 0


@_guarded
def cmd_trace(args: argparse.Namespace) -> int:
    from engine.search.diagnose import diagnose

    with _existing_library(args) as lib:
        if lib is None:
            return 2
        dg = diagnose(lib, args.question, args.expect)
        status = 0 if dg.verdict.startswith("present") else EXIT_NOT_FOUND
        if args.json:
            from engine.render import trace_to_dict

            print(json_dumps({"question": args.question, "expect": args.expect, "verdict": dg.verdict,
                              "detail": dg.detail, "stage": dg.stage, "rank": dg.rank,
                              "branch_misses": list(dg.branch_misses),
                              "trace": trace_to_dict(dg.trace) if dg.trace else None}, indent=2))
            return status
        if dg.trace is not None:
            print(_trace_text(lib, dg.trace, args.top))
        print(f"\nexpected {args.expect}: {dg.verdict}" + (f" ({safe(dg.detail)})" if dg.detail else ""))
    return status


@_guarded
def cmd_eval(args: argparse.Namespace) -> int:
    from engine.eval.retrieval import evaluate, format_misses, format_report

    cfg = _config(args)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        return _fail(f"unknown mode(s) {', '.join(unknown)}; use {', '.join(MODES)}")
    questions, problem = read_questions(Path(args.questions), args.limit)
    if problem:
        return _fail(problem)
    lib = _open(args.corpus, cfg, args.index)
    try:
        _build(lib, progress=args.progress)
        hooks = []
        if args.answers:
            from engine.eval.answers import AnswerEval

            hooks.append(AnswerEval(lib, cfg))
        bar = ProgressLine(force=args.progress)

        def progress(i: int, n: int) -> None:
            if i % 25 == 0 or i == n:
                bar.write(f"questions: {i}/{n}")

        report = evaluate(lib, questions, modes=modes, hooks=hooks, progress=progress)
        bar.done()
        print(json_dumps(report, indent=2) if args.json else format_report(report))
        if args.misses and not args.json:
            print("\n" + safe(format_misses(report)))
    finally:
        lib.close()
    return 0


def read_questions(path: Path, limit: int | None) -> tuple[list, str]:
    """The questions TSV at ``path`` read once, or why it cannot be: said before the library is
    opened, and never as a failed write of the index (which a missing file is not)."""
    from engine.eval.retrieval import load_questions

    if not path.exists():
        return [], f"no such questions file: {path}"
    if not path.is_file():
        return [], f"not a questions file: {path} (a TSV file: question<TAB>expected<TAB>family)"
    try:
        return load_questions(path, limit=limit), ""
    except UnicodeDecodeError as e:
        return [], f"{path} is not UTF-8 text (byte {e.start}): save the questions file as UTF-8"
    except OSError as e:
        return [], f"cannot read the questions file {path}: {e.strerror or e}"


# ---- output -------------------------------------------------------------------------------


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(safe(text).split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def _hit_json(h) -> dict[str, Any]:
    c = h.chunk
    return {"rank": h.rank, "score": h.score, "chunk_id": c.id, "location": c.location, "path": c.path,
            "start_line": c.start_line, "end_line": c.end_line, "page": c.page, "end_page": c.end_page,
            "title": h.title,
            "heading_path": list(c.heading_path), "status": h.status,
            "date": h.date.isoformat() if h.date else None, "text": c.text}


def _search_text(res: SearchResult) -> str:
    from engine.render import headings_under

    t = res.trace
    lines = [f"{len(res.hits)} hits  ({t.eligible}/{t.total} chunks eligible; {'; '.join(t.filters)})"]
    for s in t.stages:
        if s.note:
            lines.append(f"  {s.name}: {safe(s.note)}")
    for h in res.hits:
        c = h.chunk
        head = " > ".join(headings_under(h.title, c.heading_path))
        status = "" if h.status == "active" else f" [{h.status}]"
        lines.append(f"\n{h.rank}. {safe(c.location)}  {h.score:.4f}{status}  {_one_line(h.title, 60)}"
                     + (f" — {_one_line(head, 80)}" if head else ""))
        lines.append(f"   {_one_line(c.text)}")
    return "\n".join(lines)


def _trace_text(lib, t: Trace, top: int) -> str:
    lines = [f"question: {_one_line(t.question)}",
             f"eligible: {t.eligible}/{t.total} chunks ({'; '.join(t.filters)})"]
    for s in t.stages:
        lines.append(f"\n[{s.name}] window {s.window}, {len(s.ranked)} kept, {s.ms:.1f} ms"
                     + (f" — {safe(s.note)}" if s.note else ""))
        for r in s.ranked[:top]:
            try:
                loc = lib.chunk(r.chunk_id).location
            except KeyError:
                loc = r.chunk_id
            lines.append(f"  {r.rank:>3}. {safe(loc)}  {r.score:.4f}")
        if len(s.ranked) > top:
            lines.append(f"  … {len(s.ranked) - top} more")
    return "\n".join(lines)


