"""`fieldqa ask "question" [PATH]`: a cited answer from the library's index.

    fieldqa ask "What torque for the impeller nut?" ~/manuals
    fieldqa ask "..." --json                  # machine-readable (below)
    fieldqa ask "..." --export md > wo.md     # Markdown with footnote citations, for a work order
    fieldqa ask "..." --include-superseded --team electrical-team --model HY-400S

PATH defaults to the configured library. The index must exist (``fieldqa index PATH``).
Exit status: 0 answered, 3 abstained ("not found in these documents"), 2 usage/config error.

JSON (``--json``), one object::

    {"question": str,
     "abstained": bool,
     "answerability": float | null,     # learned probability that the evidence answers it
                                         # (engine.answer.answerability); null: the hand rule decided
     "claims": [{"text": str,            # verbatim: document_text(path)[char_start:char_end]
                 "citation": n,          # -> citations[].n
                 "also": [n],            # other passages saying the same (another edition or manual)
                 "char_start": int, "char_end": int,
                 "is_condition": bool,   # a warning/restriction travelling with a claim
                 "flagged": str}],       # "" or why it is quoted, not followed
     "citations": [{"n": int, "chunk_id": str, "doc_id": str, "title": str, "version": str,
                    "date": "YYYY-MM-DD" | null, "status": "active" | "superseded",
                    "heading_path": [str], "path": str, "line": int, "end_line": int,
                    "page": int | null, "end_page": int | null,  # PDF: the pages it runs over
                    "location": "path:line" | "path:pN" | "path:pN-M"}],
     "conflicts": [{"subject": str,
                    "sides": [{"citation": n, "doc_id": str, "version": str, "date": str | null,
                               "status": str, "models": [str], "value": str}]}],
     "to_consult": [citation, ...],     # when abstaining: closest passages, not an answer
     "notes": [str],                     # degraded stages, abstention reason, flagged text
     "trace": {"question": str, "eligible": int, "total": int, "filters": [str],
               "stages": [{"name": str, "status": "ran" | "off" | "degraded", "count": int, "window": int, "ms": float,
                           "note": str, "ranked": [{"chunk_id": str, "rank": int, "score": float}]}]}}
    (the trace has this one shape everywhere: engine.render.trace_to_dict)

Plain-text and Markdown output escape document text (``engine.render``): ANSI escape
sequences are removed and control characters shown as ``\\xNN``.
"""

from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path

from engine.safety import json_dumps


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer a question with cited claims")
    p.add_argument("question")
    p.add_argument("path", nargs="?", type=Path, default=None, help="library folder (default: configured)")
    p.add_argument("--index", type=Path, default=None, help="index folder (default: user data dir)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the answer as JSON")
    fmt.add_argument("--export", choices=["md"], default=None, help="print a Markdown work-order section")
    p.add_argument("--include-superseded", action="store_true", default=None,
                   help="also search superseded versions (shown side by side)")
    p.add_argument("--team", action="append", default=None, help="a team you belong to (repeatable)")
    p.add_argument("--model", default=None, help="only documents that apply to this device model")
    p.add_argument("--trace", action="store_true", help="print the per-stage trace after the answer")
    p.set_defaults(func=ask)


def ask(args: argparse.Namespace) -> int:
    from engine.pipeline import Library
    from engine.render import answer_to_dict, render_markdown, render_text
    from fieldqa.cli import config_from

    overrides = {
        "filters.include_superseded": args.include_superseded,
        "filters.teams": tuple(args.team) if args.team else None,
        "filters.device_model": args.model,
    }
    cfg = config_from(args, **overrides)
    folder = args.path or cfg.library
    if folder is None:
        print("fieldqa ask: no library folder given and none configured", file=sys.stderr)
        return 2
    from engine.errors import IndexCorrupt
    from engine.models import ModelError

    try:
        lib = Library.open(Path(folder), cfg, args.index, create=False)
    except (IndexCorrupt, ModelError, FileNotFoundError) as e:
        print(f"fieldqa ask: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        from fieldqa.commands.retrieval import EXIT_ACCESS, EXIT_WRITE, os_error_message

        print(f"fieldqa ask: {os_error_message(e)}", file=sys.stderr)
        return EXIT_ACCESS if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM) else EXIT_WRITE
    with lib:
        if lib.generation is None:
            print(f"fieldqa ask: {folder} has no index yet: run `fieldqa index {folder}`", file=sys.stderr)
            return 2
        answer = lib.ask(args.question, filters=cfg.filters)
    if args.json:
        print(json_dumps(answer_to_dict(answer), indent=2))
    elif args.export == "md":
        sys.stdout.write(render_markdown(answer))
    else:
        sys.stdout.write(render_text(answer, trace=args.trace))
    return 3 if answer.abstained else 0
