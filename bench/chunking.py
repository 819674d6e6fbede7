"""Ingestion + chunking throughput: MB/s for Markdown and for PDF.

Markdown: the PIAF-fr corpus in ../shared/eval (read-only). PDF: a multi-page manual made
with fpdf2 in a temp folder (each PDF is parsed in a subprocess, so its start-up cost
is part of the figure). Tokens are counted with the embedder's tokenizer when it is
built, else with the estimate (said in the output).

    python bench/chunking.py [--json] [--pages 40]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from engine.config import Config
from engine.ingest import iter_library
from engine.ingest.chunking import approx_counter, chunk_document, tokenizer_counter
from engine.types import IngestIssue
from fieldqa.question_sets import EVAL

PIAF = EVAL / "piaf-fr" / "corpus"


def run(root: Path, cfg: Config, count) -> dict:
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    t = time.perf_counter()
    docs = chunks = issues = 0
    for item in iter_library(root, cfg.chunking):
        if isinstance(item, IngestIssue):
            issues += 1
            continue
        docs += 1
        chunks += len(chunk_document(item[0], item[1], count, cfg.chunking))
    s = time.perf_counter() - t
    return {"mb": round(size / 1e6, 3), "seconds": round(s, 3), "mb_per_s": round(size / 1e6 / s, 3),
            "documents": docs, "chunks": chunks, "issues": issues}


def make_pdf(path: Path, pages: int) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    for p in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("helvetica", size=18)
        pdf.cell(0, 10, f"{p} Maintenance step {p}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, f"Check the seal and the bearings of unit {p}; replace worn parts. " * 25)
        for row in [("Part", "Interval", "Torque"), ("Seal", "2000 h", "22 Nm"), ("Bearing", "8000 h", "38 Nm")]:
            for cell in row:
                pdf.cell(50, 6, cell)
            pdf.ln()
    pdf.output(str(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pages", type=int, default=40)
    args = ap.parse_args()
    cfg = Config()
    tok_file = cfg.embedder_dir / "tokenizer.json"
    if tok_file.exists():
        from engine.models import load_tokenizer

        count, counter = tokenizer_counter(load_tokenizer(cfg.embedder_dir)), "e5 tokenizer"
    else:
        count, counter = approx_counter(), "estimate (tokenizer not built)"
    out: dict = {"counter": counter}
    if PIAF.is_dir():
        out["markdown"] = run(PIAF, cfg, count)
    else:
        out["markdown"] = {"skipped": f"{PIAF} not found"}
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for i in range(3):
            make_pdf(root / f"manual-{i}.pdf", args.pages)
        out["pdf"] = run(root, cfg, count)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"token counter: {counter}")
        for k in ("markdown", "pdf"):
            r = out[k]
            if "skipped" in r:
                print(f"{k:<9} skipped: {r['skipped']}")
            else:
                print(f"{k:<9} {r['mb']:7.3f} MB in {r['seconds']:6.2f} s = {r['mb_per_s']:6.2f} MB/s "
                      f"({r['documents']} docs, {r['chunks']} chunks, {r['issues']} issues)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
