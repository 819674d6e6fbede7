"""A long code block is cut between lines, each piece keeping its heading path; the heading
travels with the first piece."""

from __future__ import annotations

from engine.config import ChunkingConfig
from engine.ingest.chunking import approx_counter, chunk_document
from engine.ingest.markdown import parse_markdown
from engine.types import Document, DocumentMeta


def test_an_oversized_code_block_is_cut_between_lines_with_its_heading_path():
    code = "\n".join(f"#   option_{i}: value {i} # a comment that explains option {i} at some length"
                     for i in range(60))
    text = f"# Config\n\n## Printer section\n\n```\n[printer]\n{code}\n```\n"
    parsed = parse_markdown(text)
    doc = Document("c.md", "0" * 64, "markdown", DocumentMeta("c", "Config"), parsed.text)
    chunks = chunk_document(doc, parsed.blocks, approx_counter(), ChunkingConfig(max_tokens=120, overlap_tokens=0))
    code_chunks = [c for c in chunks if "option_" in c.text]
    assert len(code_chunks) > 3
    for c in code_chunks:
        assert c.heading_path[-1] == "Printer section"
        # every piece starts at a line start and ends at a line end
        assert c.char_start == 0 or text[c.char_start - 1] == "\n", repr(text[c.char_start - 5:c.char_start + 5])
        assert c.char_end == len(text) or text[c.char_end] == "\n"
    assert not any(c.text.strip() == "## Printer section" for c in chunks)  # never a heading alone


def test_a_piece_after_the_first_says_it_starts_in_code_and_its_units_are_entries():
    from engine.lang.units import split_units

    entries = "\n".join(f"#option_{i}: {i}\n#   What option {i} sets, explained at some length here." for i in range(40))
    text = (f"# Config\n\n## Printer section\n\nThe section:\n\n```\n[printer]\n{entries}\n```\n\n"
            "After the block.\n\n    indented code\n    #   not a heading\n")
    parsed = parse_markdown(text)
    doc = Document("c.md", "0" * 64, "markdown", DocumentMeta("c", "Config"), parsed.text)
    chunks = chunk_document(doc, parsed.blocks, approx_counter(), ChunkingConfig(max_tokens=120, overlap_tokens=0))
    pieces = [c for c in chunks if "#option_" in c.text]
    assert len(pieces) > 2
    assert not pieces[0].in_code and all(c.in_code for c in pieces[1:])  # the first holds the fence
    assert not any(c.in_code for c in chunks if "indented code" in c.text)  # no fence to be inside
    for c in pieces:
        units = split_units(c)
        for u in units:
            if u.kind == "code" and u.text.startswith("#option_") and u is not units[-1]:
                assert "\n#   What option" in u.text  # an option with its description (unless cut there)
            else:
                assert u.kind != "sentence" or not u.text.startswith("#")  # no code line read as prose
