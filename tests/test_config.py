import pytest

from engine.config import Config, ConfigError, describe, load_config
from fieldqa.cli import main


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_defaults_are_documented_and_named_separately():
    cfg = load_config()
    rows = {k: (v, origin, doc) for k, v, origin, doc in describe(cfg)}
    for key in ("retrieval.lexical_depth", "retrieval.vector_depth", "retrieval.rrf_c",
                "retrieval.fused_window", "retrieval.rerank_input", "retrieval.final_context",
                "chunking.max_tokens", "models.threads", "answer.abstain_threshold", "tui.keymap"):
        assert key in rows, key
        assert rows[key][2], f"{key} has no documentation"
    assert cfg.retrieval.rrf_c == 5 and cfg.retrieval.final_context == 5


def test_file_then_overrides_with_origins(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[retrieval]\nrrf_c = 10\nfinal_context = 3\n[filters]\nteams = ["ops"]\n'
                 '[tui.keymap]\nopen_trace = "ctrl+t"\n')
    cfg = load_config(f, {"retrieval.final_context": 2})
    assert cfg.retrieval.rrf_c == 10
    assert cfg.retrieval.final_context == 2
    assert cfg.filters.teams == ("ops",)
    assert cfg.tui.keymap["open_trace"] == "ctrl+t"
    assert "focus_question" not in cfg.tui.keymap  # only the user's overrides: the TUI owns its keys
    origins = {k: o for k, _, o, _ in describe(cfg)}
    assert origins["retrieval.rrf_c"] == str(f)
    assert origins["retrieval.final_context"] == "override"
    assert origins["retrieval.lexical_depth"] == "default"


@pytest.mark.parametrize("text", ['[retrieval]\nnope = 1\n', '[retrieval]\nrrf_c = "many"\n', 'x = [\n'])
def test_bad_config_is_a_clear_error(tmp_path, text):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ConfigError):
        load_config(f)


def test_config_show_prints_origin(tmp_path, capsys):
    f = tmp_path / "c.toml"
    f.write_text("[models]\nthreads = 1\n")
    assert main(["config", "show", "--config", str(f)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("models.threads"))
    assert "1" in line and str(f) in line


def test_missing_explicit_config_file_fails(tmp_path, capsys):
    assert main(["config", "show", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize("question, words", [("oil \udcff?", "not valid UTF-8"), ("  \t", "empty"),
                                            ("???", "no word to look for")])
def test_a_question_that_cannot_be_asked_exits_2_with_one_line(capsys, question, words):
    from fieldqa.cli import main

    for command in ("ask", "search"):
        assert main([command, question, "samples"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0]


@pytest.mark.parametrize("argv", [["ask", "oil?", "/no/such/dir"], ["search", "oil", "/no/such/dir"],
                                  ["index", "/no/such/dir"], ["/no/such/dir"]])
def test_a_missing_folder_is_refused_before_anything_is_created(capsys, tmp_path, argv):
    from fieldqa.cli import main

    assert main(argv + ["--index", str(tmp_path / "idx")] if argv[0] in ("ask", "search") else argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such folder: /no/such/dir" in err[0]
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("command", ["ask", "search"])
def test_a_folder_given_before_the_question_gets_the_order_shown(capsys, tmp_path, command):
    from fieldqa.cli import main

    assert main([command, "samples", "pump weight", "--index", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fieldqa {command}: no such folder: pump weight "
                   f"(the question comes first: fieldqa {command} 'pump weight' samples)"]
    assert not (tmp_path / "idx").exists()
    assert main([command, "oil?", "/no/such/dir"]) == 2  # a real missing folder: no hint
    assert "comes first" not in capsys.readouterr().err


def test_chunks_of_a_missing_path_says_file_or_folder(capsys):
    from fieldqa.cli import main

    assert main(["chunks", "/no/such/manual.md"]) == 2
    assert capsys.readouterr().err.strip() == "fieldqa chunks: no such file or folder: /no/such/manual.md"


@pytest.mark.parametrize("command", [["ask", "oil?"], ["search", "oil"], ["index"], []])
def test_a_folder_without_manuals_is_refused_before_anything_is_created(capsys, tmp_path, command):
    from fieldqa.cli import main

    empty = tmp_path / "empty"
    (empty / ".git").mkdir(parents=True)
    (empty / ".git" / "notes.md").write_text("# hidden\n")  # hidden folders are not the library
    (empty / "photo.jpg").write_bytes(b"\xff\xd8")
    argv = [*command[:1], *command[1:], str(empty)]
    if command and command[0] != "index" or command == ["index"]:
        argv += ["--index", str(tmp_path / "idx")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"no manuals in {empty}" in err[0]
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("argv, command, extra", [
    (["ask", "oil?", "samples", "--corpus", "x"], "fieldqa ask", "--corpus x"),
    (["models", "build", "--bogus"], "fieldqa models build", "--bogus"),
    (["config", "show", "extra"], "fieldqa config show", "extra"),
])
def test_an_unknown_argument_is_told_by_the_sub_command_with_its_usage(capsys, argv, command, extra):
    from fieldqa.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {command} ")  # what the command takes, not fieldqa's list of commands
    assert f"{command}: error: unrecognized arguments: {extra}" in err


def test_a_questions_file_that_cannot_be_read_is_refused_before_the_library_is_opened(capsys, tmp_path):
    from fieldqa.cli import main

    latin1 = tmp_path / "latin1.tsv"
    latin1.write_bytes("Où est le filtre ?\tmanual.md:1\tfr\n".encode("latin-1"))
    for questions, words in ((tmp_path / "missing.tsv", "no such questions file"),
                             (tmp_path, "not a questions file"), (latin1, "is not UTF-8 text (byte 1)")):
        assert main(["eval", str(questions), "--corpus", "samples", "--index", str(tmp_path / "idx")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0] and "index" not in err[0]  # no talk of a failed write
    assert not (tmp_path / "idx").exists()


def test_options_are_read_before_or_after_the_sub_command(tmp_path, capsys):
    from fieldqa.cli import main

    cfg = tmp_path / "c.toml"
    cfg.write_text("[answer]\nmax_claims = 3\n")
    for argv in (["--config", str(cfg), "config", "show"], ["config", "show", "--config", str(cfg)]):
        assert main(argv) == 0
        row = next(line for line in capsys.readouterr().out.splitlines() if "answer.max_claims" in line)
        assert row.split()[1] == "3" and "c.toml" in row  # the file was read, whichever side it was on


def test_progress_is_shown_on_a_terminal_or_when_asked():
    import io

    from engine.index.build import BuildProgress
    from fieldqa.commands.retrieval import ProgressLine

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    event = BuildProgress("embed", 3, 10, 4.0)
    for stream, force, shown in ((io.StringIO(), False, False), (io.StringIO(), True, True), (Tty(), False, True)):
        bar = ProgressLine(stream, force=force)
        bar(event)
        bar.done()
        assert ("embedding chunks: 3/10" in stream.getvalue()) == shown


def test_a_closed_pipe_ends_quietly(tmp_path):
    import subprocess
    import sys

    root = tmp_path / "lib"
    root.mkdir()
    for i in range(300):
        (root / f"m{i:03d}.md").write_text(f"# Manual {i}\n\n## Part\n\nText {i} " + "word " * 40 + "\n")
    run = subprocess.run(f"{sys.executable} -m fieldqa chunks {root} | head -1", shell=True,
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.count("\n") == 1
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr


def test_trace_exit_status_says_whether_the_expected_passage_made_it(tmp_path, write_library, capsys, hash_cli):
    from fieldqa.cli import main

    root = write_library(tmp_path / "lib", {
        "a.md": "# Pump\n\n## Seal\n\nReplace the seal every 500 h.\n",
        "old.md": "---\nstatus: superseded\n---\n# Pump old\n\n## Seal\n\nReplace the seal every 400 h.\n"})
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[models]\ndir = "{tmp_path / "no-models"}"\n')
    common = ["--index", str(tmp_path / "idx"), "--config", str(cfg)]
    assert main(["index", str(root), *common]) == 0
    assert main(["trace", "seal", str(root), "--expect", "a.md:3", *common]) == 0
    assert main(["trace", "seal", str(root), "--expect", "old.md:6", *common]) == 3  # excluded


@pytest.mark.parametrize("key, value", [("models.threads", 1000), ("retrieval.final_context", 0),
                                        ("answer.max_claims", -1), ("answer.abstain_threshold", float("nan")),
                                        ("retrieval.lexical_depth", 0)])
def test_out_of_range_settings_are_refused_with_one_line(key, value, tmp_path):
    from engine.config import ConfigError

    with pytest.raises(ConfigError, match=f"{key}: .* out of range"):
        Config().replace(**{key: value})
    f = tmp_path / "c.toml"
    section, name = key.split(".")
    f.write_text(f"[{section}]\n{name} = {'nan' if value != value else value}\n")
    with pytest.raises(ConfigError, match="out of range"):
        load_config(f)
