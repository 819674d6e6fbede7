#!/usr/bin/env python3
"""Format checks for the zmk-docs question set (standard library only).

Usage:
    python3 check.py [SET_DIR] [--repo ZMK_GIT_DIR]

Checks:
  * every row of questions.{train,dev}.tsv has 3 tab-separated fields, a
    non-empty question without tab/CR/LF, a known family, no duplicates;
  * expected is "-" exactly when the family is "noanswer";
  * the number of rows per family (all files together) and the number of
    answerable / noanswer rows per split are the intended ones;
  * no target is repeated within a row; every target FILE.md:LINE names an
    existing file in corpus/ and LINE is an ATX heading (#..###### after at
    most 3 spaces) outside fenced code blocks and outside the YAML front
    matter;
  * the split of each answerable row is the split of its first target's file
    (file split: names sorted by (sha1 hex of the name, name), the first
    round(n / 3) files are dev);
  * noanswer rows match the entries of noanswer_checks.md and alternate
    train/dev in that order, starting with train;
  * corpus files are UTF-8, have flat ASCII names and contain no line-break
    character other than \\n; a \\r is accepted only as part of \\r\\n, and a
    file must use one line-end style throughout (all sources use \\n);
  * every corpus file starts with a YAML front matter block (all sources
    do); files without any ATX heading outside it are reported (they can
    hold no target); MDX import/export lines, JSX tags (<Tabs>, <TabItem>,
    <details>) and admonition fences (:::note ... :::) are plain text here:
    they never open or close a code fence and are not headings;
  * with --repo: every corpus file is byte-identical to docs/docs/<path> at
    HEAD, where <path> is the corpus name with "__" turned back into "/", and
    the name maps back to exactly one .md/.mdx file under docs/docs/ (paths are read
    with ls-tree -z, so names with spaces or non-ASCII bytes are safe).
Prints counts per split and family. Exit status 1 on any error.
"""
import collections
import hashlib
import os
import re
import subprocess
import sys

FAMILIES = ["en", "exact", "procedure", "xling-fr", "xling-de", "xling-es",
            "xling-zh", "xling-ko", "xling-ja", "noanswer"]
EXPECTED_COUNTS = {"en": 24, "exact": 15, "procedure": 11, "xling-fr": 10, "xling-de": 10,
                   "xling-es": 10, "xling-zh": 10, "xling-ko": 10, "xling-ja": 10, "noanswer": 50}
EXPECTED_SPLIT = {("train", "answerable"): 75, ("train", "noanswer"): 25,
                  ("dev", "answerable"): 35, ("dev", "noanswer"): 25}
ODD_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)")


def split_lines(text):
    """Lines numbered as in an editor: split on \\n, drop one trailing \\r per line."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def front_matter_end(lines):
    """Line number of the closing '---' of a YAML front matter block on line 1, else 0."""
    if lines and lines[0] == "---":
        for i in range(1, len(lines)):
            if lines[i] == "---":
                return i + 1
    return 0


def heading_lines(text):
    """Return {line_number: level} for ATX headings outside front matter and fenced code blocks."""
    out = {}
    fence = None  # (char, length) of the open fence
    lines = split_lines(text)
    fm_end = front_matter_end(lines)
    for i, line in enumerate(lines, 1):
        if i <= fm_end:
            continue
        m = FENCE_RE.match(line)
        if m:
            run = m.group(1)
            if fence is None:
                fence = (run[0], len(run))
                continue
            if run[0] == fence[0] and len(run) >= fence[1] and line.strip() == run:
                fence = None
                continue
        if fence is not None:
            continue
        h = ATX_RE.match(line)
        if h:
            out[i] = len(h.group(1))
    return out


def section_end(headings, start, n_lines):
    """Last line of the section that starts at heading line `start`."""
    level = headings[start]
    for ln in sorted(headings):
        if ln > start and headings[ln] <= level:
            return ln - 1
    return n_lines


def file_split(names):
    order = sorted(names, key=lambda n: (hashlib.sha1(n.encode("utf-8")).hexdigest(), n))
    k = round(len(order) / 3)
    return {n: ("dev" if i < k else "train") for i, n in enumerate(order)}


def main(argv):
    args = list(argv)
    repo = None
    if "--repo" in args:
        i = args.index("--repo")
        repo = args[i + 1]
        del args[i:i + 2]
    set_dir = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    corpus = os.path.join(set_dir, "corpus")
    errors = []

    names = sorted(n for n in os.listdir(corpus) if n.endswith((".md", ".mdx")))
    others = sorted(n for n in os.listdir(corpus) if not n.endswith((".md", ".mdx")))
    for n in others:
        errors.append(f"corpus/{n}: not a .md/.mdx file")
    split_of = file_split(names)
    heads = {}
    nlines = {}
    crlf_files = []
    no_final_nl = []
    fm_files = 0
    for n in names:
        raw = open(os.path.join(corpus, n), "rb").read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            errors.append(f"corpus/{n}: not UTF-8 ({e})")
            continue
        for ch in ODD_BREAKS:
            if ch in text:
                errors.append(f"corpus/{n}: contains line-break character {ch!r}")
        n_cr, n_crlf, n_lf = text.count("\r"), text.count("\r\n"), text.count("\n")
        if n_cr != n_crlf:
            errors.append(f"corpus/{n}: contains a \\r that is not part of \\r\\n")
        if n_crlf and n_crlf != n_lf:
            errors.append(f"corpus/{n}: mixes \\r\\n and \\n line ends")
        if n_crlf:
            crlf_files.append(n)
        if not re.fullmatch(r"[A-Za-z0-9._-]+\.mdx?", n):
            errors.append(f"corpus/{n}: file name is not flat ASCII")
        if front_matter_end(split_lines(text)):
            fm_files += 1
        else:
            errors.append(f"corpus/{n}: no YAML front matter on line 1")
        if not raw.endswith(b"\n"):
            no_final_nl.append(n)
        heads[n] = heading_lines(text)
        nlines[n] = len(split_lines(text))

    counts = collections.Counter()
    kinds = collections.Counter()
    seen = {}
    noanswer_order = []
    target_files = collections.Counter()
    first_targets = collections.Counter()
    all_targets = set()
    levels = collections.Counter()
    cross = 0
    for split in ("train", "dev"):
        path = os.path.join(set_dir, f"questions.{split}.tsv")
        data = open(path, "rb").read().decode("utf-8")
        if "\r" in data:
            errors.append(f"{path}: contains CR")
        if not data.endswith("\n"):
            errors.append(f"{path}: does not end with a newline")
        rows = data.split("\n")
        for ln, row in enumerate(rows, 1):
            if row == "" and ln == len(rows):
                continue
            where = f"questions.{split}.tsv:{ln}"
            f = row.split("\t")
            if len(f) != 3:
                errors.append(f"{where}: {len(f)} fields")
                continue
            q, exp, fam = f
            if not q.strip():
                errors.append(f"{where}: empty question")
            if fam not in FAMILIES:
                errors.append(f"{where}: unknown family {fam!r}")
            if q in seen:
                errors.append(f"{where}: duplicate of {seen[q]}")
            seen[q] = where
            counts[(split, fam)] += 1
            kinds[(split, "noanswer" if fam == "noanswer" else "answerable")] += 1
            if (exp == "-") != (fam == "noanswer"):
                errors.append(f"{where}: expected '-' iff family noanswer (got {exp!r}, {fam})")
                continue
            if exp == "-":
                noanswer_order.append((split, q))
                continue
            tsplits = []
            if len(set(exp.split("|"))) != len(exp.split("|")):
                errors.append(f"{where}: repeated target")
            for j, t in enumerate(exp.split("|")):
                m = re.fullmatch(r"(.+\.mdx?):([0-9]+)", t)
                if not m:
                    errors.append(f"{where}: malformed target {t!r}")
                    continue
                fn, line = m.group(1), int(m.group(2))
                if fn not in heads:
                    errors.append(f"{where}: no such corpus file {fn}")
                    continue
                if line not in heads[fn]:
                    errors.append(f"{where}: {fn}:{line} is not an ATX heading outside code fences")
                    continue
                target_files[fn] += 1
                all_targets.add(t)
                levels[heads[fn][line]] += 1
                if j == 0:
                    first_targets[t] += 1
                tsplits.append(split_of[fn])
            if tsplits:
                if tsplits[0] != split:
                    errors.append(f"{where}: first target is in a {tsplits[0]} file but row is in {split}")
                if any(s != tsplits[0] for s in tsplits[1:]):
                    cross += 1

    for fam, want in EXPECTED_COUNTS.items():
        got = counts[("train", fam)] + counts[("dev", fam)]
        if got != want:
            errors.append(f"family {fam}: {got} rows, expected {want}")
    for key, want in EXPECTED_SPLIT.items():
        if kinds[key] != want:
            errors.append(f"{key[0]} {key[1]}: {kinds[key]} rows, expected {want}")

    # noanswer alternation, in the order of noanswer_checks.md
    checks = os.path.join(set_dir, "noanswer_checks.md")
    listed = []
    langs = collections.Counter()
    for line in open(checks, encoding="utf-8"):
        m = re.match(r"^## [0-9]+\. \[(train|dev), ([^\]]+)\] (.*)$", line.rstrip("\n"))
        if m:
            listed.append((m.group(1), m.group(3)))
            langs[(m.group(1), "English" if m.group(2) == "English" else "other")] += 1
            langs[m.group(2)] += 1
    if sorted(listed) != sorted(noanswer_order):
        errors.append("noanswer rows and noanswer_checks.md entries differ")
    for i, (s, q) in enumerate(listed):
        want = "train" if i % 2 == 0 else "dev"
        if s != want:
            errors.append(f"noanswer_checks.md entry {i + 1}: split {s}, expected {want} (alternation)")

    head = None
    if repo:
        head = subprocess.run(["git", "--git-dir", repo, "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        ls = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", "docs/docs"],
                            capture_output=True, text=True, check=True).stdout.split("\0")
        by_name = {}
        for p in ls:
            if p.endswith((".md", ".mdx")):
                by_name.setdefault(p[len("docs/docs/"):].replace("/", "__"), []).append(p)
        for n in names:
            src = by_name.get(n, [])
            if len(src) != 1:
                errors.append(f"corpus/{n}: {len(src)} source paths in repo")
                continue
            blob = subprocess.run(["git", "--git-dir", repo, "show", f"HEAD:{src[0]}"],
                                  capture_output=True, check=True).stdout
            if blob != open(os.path.join(corpus, n), "rb").read():
                errors.append(f"corpus/{n}: differs from {src[0]} at HEAD")

    # report
    print(f"corpus files: {len(names)} "
          f"({sum(1 for n in names if split_of[n] == 'dev')} dev, "
          f"{sum(1 for n in names if split_of[n] == 'train')} train); "
          f"headings: {sum(len(h) for h in heads.values())}; CRLF files: {len(crlf_files)}; "
          f"files with front matter: {fm_files}; files not ending in a line break: {len(no_final_nl)}")
    print("files without any heading (no possible target): "
          + (", ".join(n for n in names if not heads.get(n)) or "none"))
    print(f"{'family':<10} {'train':>6} {'dev':>5} {'all':>5}")
    for fam in FAMILIES:
        a, b = counts[("train", fam)], counts[("dev", fam)]
        print(f"{fam:<10} {a:>6} {b:>5} {a + b:>5}")
    tt = sum(v for (s, _), v in counts.items() if s == "train")
    td = sum(v for (s, _), v in counts.items() if s == "dev")
    print(f"{'total':<10} {tt:>6} {td:>5} {tt + td:>5}")
    print(f"answerable/noanswer: train {kinds[('train', 'answerable')]}/{kinds[('train', 'noanswer')]}, "
          f"dev {kinds[('dev', 'answerable')]}/{kinds[('dev', 'noanswer')]}")
    print(f"noanswer English/other: train {langs[('train', 'English')]}/{langs[('train', 'other')]}, "
          f"dev {langs[('dev', 'English')]}/{langs[('dev', 'other')]}; by language: "
          + ", ".join(f"{k} {langs[k]}" for k in sorted(k for k in langs if isinstance(k, str))))
    print(f"files used as targets: {len(target_files)} of {len(names)}; "
          f"distinct targets: {len(all_targets)}; distinct first targets: {len(first_targets)}; "
          f"target levels: " + ", ".join(f"{'#' * k} {levels[k]}" for k in sorted(levels)) + "; "
          f"rows with an alternative target in the other split: {cross}")
    if repo:
        print(f"byte-identity check against the repo (HEAD {head}): done")
    if errors:
        print(f"\n{len(errors)} ERROR(S):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
