#!/usr/bin/env python3
"""Check the device-pdfs question set.

Every non-comment row of questions.train.tsv / questions.dev.tsv must have
3 tab-separated fields: question, expected, family.  expected is "-" (no
passage of the corpus answers it) or one or more "file.pdf:pN" targets joined
with "|", where N is the 1-based physical page index (pypdf reader.pages[N-1]).
Every target file must exist in corpus/ and every page must be in range.
A manual may appear in only one split.  Prints counts; exits 1 on any error.

Run:  /work/main/.venv/bin/python check.py
"""
import collections
import os
import re
import sys

import pypdf

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
SPLITS = ["train", "dev"]
FAMILIES = {"en", "exact", "procedure", "xling-de", "xling-fr", "xling-es",
            "xling-zh", "xling-ja", "xling-ko"}
TARGET_RE = re.compile(r"^([A-Za-z0-9._-]+\.pdf):p([1-9][0-9]*)$")


def main():
    errors = []
    page_counts = {}
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".pdf"):
            page_counts[name] = len(pypdf.PdfReader(os.path.join(CORPUS, name)).pages)

    split_of_file = {}
    seen_questions = {}
    for split in SPLITS:
        path = os.path.join(HERE, f"questions.{split}.tsv")
        fam_count = collections.Counter()
        file_count = collections.Counter()
        answerable = noanswer = 0
        with open(path, encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.rstrip("\n")
                if line.endswith("\r"):
                    errors.append(f"{split}:{lineno}: CR line ending")
                    line = line.rstrip("\r")
                if not line.strip() or line.startswith("#"):
                    continue
                fields = line.split("\t")
                if len(fields) != 3:
                    errors.append(f"{split}:{lineno}: {len(fields)} fields, expected 3")
                    continue
                question, expected, family = fields
                if not question.strip():
                    errors.append(f"{split}:{lineno}: empty question")
                if question in seen_questions:
                    errors.append(f"{split}:{lineno}: duplicate question (also {seen_questions[question]})")
                seen_questions[question] = f"{split}:{lineno}"
                if family not in FAMILIES:
                    errors.append(f"{split}:{lineno}: unknown family {family!r}")
                fam_count[family] += 1
                if expected == "-":
                    noanswer += 1
                    file_count["-"] += 1
                    continue
                answerable += 1
                files_here = set()
                for target in expected.split("|"):
                    m = TARGET_RE.match(target)
                    if not m:
                        errors.append(f"{split}:{lineno}: bad target {target!r}")
                        continue
                    fname, page = m.group(1), int(m.group(2))
                    if fname not in page_counts:
                        errors.append(f"{split}:{lineno}: {fname} not in corpus/")
                        continue
                    if page > page_counts[fname]:
                        errors.append(f"{split}:{lineno}: {fname} p{page} > {page_counts[fname]} pages")
                    files_here.add(fname)
                    prev = split_of_file.setdefault(fname, split)
                    if prev != split:
                        errors.append(f"{split}:{lineno}: {fname} used in both {prev} and {split}")
                for fname in files_here:
                    file_count[fname] += 1
        total = answerable + noanswer
        print(f"== {split}: {total} questions, {answerable} answerable, {noanswer} no-answer")
        for fam in sorted(fam_count):
            print(f"   family {fam:10s} {fam_count[fam]}")
        for fname in sorted(file_count):
            print(f"   file   {fname:32s} {file_count[fname]}")

    unused = sorted(set(page_counts) - set(split_of_file))
    if unused:
        errors.append(f"corpus files without any answerable question: {unused}")
    print("== corpus:", ", ".join(f"{k} ({v} p)" for k, v in page_counts.items()))
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
