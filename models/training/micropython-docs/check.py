#!/usr/bin/env python3
"""Format checks for the micropython-docs question set (standard library only).

Usage:
    python3 check.py [SET_DIR] [--repo MICROPYTHON_GIT_DIR]

Checks:
  * every row of questions.{train,dev}.tsv has 3 tab-separated fields, a
    non-empty question without tab/CR/LF, a known family, no duplicates;
  * expected is "-" exactly when the family is "noanswer";
  * every target FILE.rst:LINE names an existing file in corpus/ and LINE is
    the text line of a reStructuredText section title (see title_lines());
  * the split of each answerable row is the split of its first target's file
    (file split: names sorted by (sha1 hex of the name, name), the first
    round(0.3 * n) files are dev);
  * noanswer rows match the entries of noanswer_checks.md and alternate
    train/dev in that order, starting with train;
  * corpus files are UTF-8, have flat ASCII names and contain no line-break
    character other than \\n (in particular no \\r);
  * with --repo: every corpus file is byte-identical to docs/<path> at HEAD,
    where <path> is the corpus name with "__" turned back into "/".
Prints counts per split and family. Exit status 1 on any error.
"""
import collections
import hashlib
import os
import re
import string
import subprocess
import sys

FAMILIES = ["en", "exact", "procedure", "xling-fr", "xling-de", "xling-es",
            "xling-zh", "xling-ko", "xling-ja", "noanswer"]
ODD_BREAKS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
PUNCT = set(string.punctuation)
DIRECTIVE_RE = re.compile(r"^(\s*)\.\.\s")


def is_adornment(line):
    """A line made of one punctuation character repeated (trailing blanks ignored)."""
    s = line.rstrip()
    return len(s) >= 1 and s[0] in PUNCT and s == s[0] * len(s)


def indent_of(line):
    return len(line) - len(line.lstrip(" \t"))


def title_lines(text):
    """Return {line_number: (level, style, title)} for the section titles of an .rst text.

    A title is a single non-indented text line directly followed by an
    adornment line at least as long as the title text, optionally also
    preceded by an identical adornment line (over- and underline).  The line
    before the title (or before its overline) must be blank or the start of
    the file.  Lines inside literal blocks (after a paragraph ending in "::")
    and inside directives / comments (".. ") are skipped; because a title must
    start in column 0 and block content is indented, a block ends at the first
    non-blank line indented no more than the line that opened it.  Levels are
    numbered 1, 2, ... in the order in which adornment styles first appear in
    the file; an over+underline style is distinct from an underline-only style
    with the same character.
    """
    lines = text.split("\n")
    n = len(lines)
    titles = {}
    styles = []
    block_indent = None  # indentation of the line that opened a literal block / directive
    i = 0
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if block_indent is not None:
            if stripped == "" or indent_of(line) > block_indent:
                i += 1
                continue
            block_indent = None
        if stripped == "":
            i += 1
            continue
        prev_blank = (i == 0) or lines[i - 1].strip() == ""
        nxt = lines[i + 1] if i + 1 < n else None
        # over+underlined title: overline, title, underline
        if (is_adornment(line) and prev_blank and nxt is not None and i + 2 < n
                and nxt.strip() and not is_adornment(nxt) and indent_of(nxt) == 0
                and lines[i + 2].rstrip() == line.rstrip()
                and len(line.rstrip()) >= len(nxt.rstrip())):
            style = (line.rstrip()[0], True)
            if style not in styles:
                styles.append(style)
            titles[i + 2] = (styles.index(style) + 1, style, nxt.rstrip())
            i += 3
            continue
        # underlined title
        if (indent_of(line) == 0 and not is_adornment(line) and prev_blank
                and nxt is not None and is_adornment(nxt)
                and len(nxt.rstrip()) >= len(line.rstrip())):
            style = (nxt.rstrip()[0], False)
            if style not in styles:
                styles.append(style)
            titles[i + 1] = (styles.index(style) + 1, style, line.rstrip())
            i += 2
            continue
        # start of a directive / comment, or a paragraph line introducing a literal block
        if DIRECTIVE_RE.match(line) or line.rstrip().endswith("::"):
            block_indent = indent_of(line)
        i += 1
    return titles


def section_end(titles, start, n_lines):
    """Last line of the section whose title text is at line `start`."""
    level = titles[start][0]
    for ln in sorted(titles):
        if ln > start and titles[ln][0] <= level:
            # the next section begins at its title (or overline) line
            return ln - 2 if titles[ln][1][1] else ln - 1
    return n_lines


def file_split(names):
    order = sorted(names, key=lambda n: (hashlib.sha1(n.encode("utf-8")).hexdigest(), n))
    k = round(0.3 * len(order))
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

    names = sorted(os.listdir(corpus))
    for n in names:
        if not n.endswith(".rst"):
            errors.append(f"corpus/{n}: not an .rst file")
    names = [n for n in names if n.endswith(".rst")]
    split_of = file_split(names)
    titles = {}
    nlines = {}
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
        if not re.fullmatch(r"[A-Za-z0-9._-]+\.rst", n):
            errors.append(f"corpus/{n}: file name is not flat ASCII")
        titles[n] = title_lines(text)
        nlines[n] = len(text.split("\n"))
        if not titles[n]:
            errors.append(f"corpus/{n}: no section title")

    counts = collections.Counter()
    seen = {}
    noanswer_order = []
    target_files = collections.Counter()
    first_files = collections.Counter()
    level_counts = collections.Counter()
    n_targets = 0
    cross = 0
    for split in ("train", "dev"):
        path = os.path.join(set_dir, f"questions.{split}.tsv")
        data = open(path, "rb").read().decode("utf-8")
        if "\r" in data:
            errors.append(f"{path}: contains CR")
        rows = data.split("\n")
        if rows and rows[-1] == "":
            rows = rows[:-1]
        else:
            errors.append(f"{path}: does not end with a newline")
        for ln, row in enumerate(rows, 1):
            where = f"questions.{split}.tsv:{ln}"
            f = row.split("\t")
            if len(f) != 3:
                errors.append(f"{where}: {len(f)} fields")
                continue
            q, exp, fam = f
            if not q.strip() or q != q.strip():
                errors.append(f"{where}: empty question or surrounding blanks")
            if any(ch in q for ch in ODD_BREAKS + ["\n"]):
                errors.append(f"{where}: line break inside the question")
            if fam not in FAMILIES:
                errors.append(f"{where}: unknown family {fam!r}")
            if q in seen:
                errors.append(f"{where}: duplicate of {seen[q]}")
            seen[q] = where
            counts[(split, fam)] += 1
            if (exp == "-") != (fam == "noanswer"):
                errors.append(f"{where}: expected '-' iff family noanswer (got {exp!r}, {fam})")
                continue
            if exp == "-":
                noanswer_order.append((split, q))
                continue
            tsplits = []
            targets = exp.split("|")
            if len(set(targets)) != len(targets):
                errors.append(f"{where}: repeated target")
            for t in targets:
                m = re.fullmatch(r"([A-Za-z0-9._-]+\.rst):([0-9]+)", t)
                if not m:
                    errors.append(f"{where}: malformed target {t!r}")
                    continue
                fn, line = m.group(1), int(m.group(2))
                if fn not in titles:
                    errors.append(f"{where}: no such corpus file {fn}")
                    continue
                if line not in titles[fn]:
                    errors.append(f"{where}: {fn}:{line} is not a section title line")
                    continue
                n_targets += 1
                target_files[fn] += 1
                level_counts[titles[fn][line][0]] += 1
                if not tsplits:
                    first_files[fn] += 1
                tsplits.append(split_of[fn])
            if tsplits:
                if tsplits[0] != split:
                    errors.append(f"{where}: first target is in a {tsplits[0]} file but row is in {split}")
                if any(s != tsplits[0] for s in tsplits[1:]):
                    cross += 1

    # noanswer alternation, in the order of noanswer_checks.md
    checks = os.path.join(set_dir, "noanswer_checks.md")
    listed = []
    for line in open(checks, encoding="utf-8"):
        m = re.match(r"^## [0-9]+\. \[(train|dev), [^\]]+\] (.*)$", line.rstrip("\n"))
        if m:
            listed.append((m.group(1), m.group(2)))
    if sorted(listed) != sorted(noanswer_order):
        errors.append("noanswer rows and noanswer_checks.md entries differ")
    for i, (s, q) in enumerate(listed):
        want = "train" if i % 2 == 0 else "dev"
        if s != want:
            errors.append(f"noanswer_checks.md entry {i + 1}: split {s}, expected {want} (alternation)")

    if repo:
        ls = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "--", "docs"],
                            capture_output=True, text=True, check=True).stdout.split("\n")
        by_name = collections.defaultdict(list)
        for p in ls:
            if p.endswith(".rst"):
                by_name[p[len("docs/"):].replace("/", "__")].append(p)
        for n in names:
            src = by_name.get(n, [])
            if len(src) != 1:
                errors.append(f"corpus/{n}: {len(src)} source paths in repo")
                continue
            blob = subprocess.run(["git", "-C", repo, "show", f"HEAD:{src[0]}"],
                                  capture_output=True, check=True).stdout
            if blob != open(os.path.join(corpus, n), "rb").read():
                errors.append(f"corpus/{n}: differs from {src[0]} at HEAD")

    # report
    print(f"corpus files: {len(names)} "
          f"({sum(1 for n in names if split_of[n] == 'dev')} dev, "
          f"{sum(1 for n in names if split_of[n] == 'train')} train); "
          f"section titles: {sum(len(t) for t in titles.values())}")
    print(f"{'family':<10} {'train':>6} {'dev':>5} {'all':>5}")
    for fam in FAMILIES:
        a, b = counts[("train", fam)], counts[("dev", fam)]
        print(f"{fam:<10} {a:>6} {b:>5} {a + b:>5}")
    tt = sum(v for (s, _), v in counts.items() if s == "train")
    td = sum(v for (s, _), v in counts.items() if s == "dev")
    print(f"{'total':<10} {tt:>6} {td:>5} {tt + td:>5}")
    print(f"targets: {n_targets} (by title level: "
          + ", ".join(f"{lv}: {level_counts[lv]}" for lv in sorted(level_counts)) + ")")
    print(f"files used as targets: {len(target_files)} of {len(names)}; "
          f"files holding a first target: {len(first_files)}; "
          f"rows with an alternative target in the other split: {cross}")
    if repo:
        print("byte-identity check against the repo: done")
    if errors:
        print(f"\n{len(errors)} ERROR(S):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
