#!/usr/bin/env python3
"""Check samples/questions.tsv against the sample documents (standard library only).

Rules:
  - rows are `question<TAB>expected<TAB>family`; `#` lines are comments; no header;
  - expected is `-` or targets joined with `|`: `path:LINE` (.md/.txt/.html) or `path.pdf:pN`;
  - .md target LINE must be a Markdown ATX heading (`#`..`######` + space);
  - .html target LINE must contain an <h1>..<h6> tag;
  - .txt target LINE must be a non-empty heading-like line (non-blank, not a list item);
  - .pdf target page must exist (checked with pypdf when importable, else skipped with a note);
  - family must be one of FAMILIES; each family needs at least MIN_PER_FAMILY rows
    (noanswer at least MIN_NOANSWER); `-` is allowed only (and required) for noanswer.

Usage: python samples/check_questions.py [samples/questions.tsv]
Exit status 1 on any error.
"""
import re
import sys
from collections import Counter
from pathlib import Path

FAMILIES = ("exact", "paraphrase", "crosslingual", "compound", "version", "model", "table", "noanswer")
MIN_PER_FAMILY = 7
MIN_NOANSWER = 8
MIN_TOTAL = 64

MD_HEADING = re.compile(r"^#{1,6} \S")
HTML_HEADING = re.compile(r"<h[1-6][\s>]", re.IGNORECASE)
TXT_NOT_HEADING = re.compile(r"^\s*(?:[-*•]\s|\d+\.\s|[A-Z0-9_]+:)")
TARGET = re.compile(r"^(?P<path>[^:|]+):(?P<loc>p?\d+)$")


def pdf_page_count(path):
    try:
        from pypdf import PdfReader  # optional
    except ImportError:
        return None
    return len(PdfReader(str(path)).pages)


def main(argv):
    tsv = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "questions.tsv"
    root = tsv.parent
    errors, notes = [], []
    counts = Counter()
    files_cache = {}
    raw = tsv.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{tsv}: not UTF-8: {e}")
        return 1
    if "\r" in text:
        errors.append("file contains \\r (use \\n line endings)")
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            errors.append(f"line {n}: expected 3 tab-separated fields, got {len(fields)}")
            continue
        question, expected, family = fields
        if not question.strip():
            errors.append(f"line {n}: empty question")
        if family not in FAMILIES:
            errors.append(f"line {n}: unknown family {family!r}")
            continue
        counts[family] += 1
        if expected == "-":
            if family != "noanswer":
                errors.append(f"line {n}: '-' target in family {family}")
            continue
        if family == "noanswer":
            errors.append(f"line {n}: noanswer row must have '-' as expected")
        targets = expected.split("|")
        if family == "version" and len(targets) < 2:
            errors.append(f"line {n}: version rows need both versions as targets")
        if family == "compound" and len(targets) < 2:
            errors.append(f"line {n}: compound rows need at least two targets")
        for t in targets:
            m = TARGET.match(t)
            if not m:
                errors.append(f"line {n}: malformed target {t!r}")
                continue
            rel, loc = m.group("path"), m.group("loc")
            path = root / rel
            if not path.is_file():
                errors.append(f"line {n}: missing file {rel}")
                continue
            if rel.endswith(".pdf"):
                if not loc.startswith("p"):
                    errors.append(f"line {n}: PDF target must be pN: {t}")
                    continue
                if rel not in files_cache:
                    files_cache[rel] = pdf_page_count(path)
                pages = files_cache[rel]
                if pages is None:
                    notes.append(f"line {n}: pypdf not importable, page of {t} not checked")
                elif not 1 <= int(loc[1:]) <= pages:
                    errors.append(f"line {n}: {rel} has {pages} pages, target {loc}")
                continue
            if loc.startswith("p"):
                errors.append(f"line {n}: page target on a non-PDF file: {t}")
                continue
            if rel not in files_cache:
                files_cache[rel] = path.read_text(encoding="utf-8").split("\n")
            lines = files_cache[rel]
            k = int(loc)
            if not 1 <= k <= len(lines):
                errors.append(f"line {n}: {t} beyond end of file ({len(lines)} lines)")
                continue
            target_line = lines[k - 1]
            if rel.endswith(".md"):
                ok = bool(MD_HEADING.match(target_line))
            elif rel.endswith((".html", ".htm")):
                ok = bool(HTML_HEADING.search(target_line))
            elif rel.endswith(".txt"):
                ok = bool(target_line.strip()) and not TXT_NOT_HEADING.match(target_line) \
                    and len(target_line.strip()) <= 80
            else:
                ok = False
                errors.append(f"line {n}: unsupported target type {rel}")
                continue
            if not ok:
                errors.append(f"line {n}: {t} is not a heading line: {target_line[:60]!r}")
    total = sum(counts.values())
    for fam in FAMILIES:
        need = MIN_NOANSWER if fam == "noanswer" else MIN_PER_FAMILY
        if counts[fam] < need:
            errors.append(f"family {fam}: {counts[fam]} rows, need at least {need}")
    if total < MIN_TOTAL:
        errors.append(f"{total} questions, need at least {MIN_TOTAL}")
    print(f"{tsv}: {total} questions")
    for fam in FAMILIES:
        print(f"  {fam:13s} {counts[fam]}")
    for note in notes:
        print("note:", note)
    for err in errors:
        print("ERROR:", err)
    print("OK" if not errors else f"{len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
