"""`fieldqa [FOLDER]` opens the TUI; `fieldqa COMMAND ...` runs one engine command."""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from pathlib import Path

from engine.config import Config, ConfigError, load_config

# command modules, each with register(subparsers); a missing one is a packaging bug
COMMAND_MODULES = (
    "fieldqa.commands.config",
    "fieldqa.commands.models",
    "fieldqa.commands.chunks",
    "fieldqa.commands.retrieval",
    "fieldqa.commands.answers",
)


def common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=None, help="config TOML (default: user config dir)")
    parser.add_argument("--progress", action="store_true",
                        help="show progress on stderr even when it is not a terminal")


def config_from(args: argparse.Namespace, **overrides) -> Config:
    """The effective config for a command: file, then flags that were given."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return load_config(getattr(args, "config", None), given)


EXIT_CODES = """exit status:
  0  done (an answer, results, an index)
  1  fieldqa models: a build, check, pack or unpack failed (the message says which)
  2  usage or input error: a missing folder, an empty, wordless or non-UTF-8 question, a broken index
  3  no answer: "not found in these documents" (ask), or the expected passage was not found (trace)
  4  another process is indexing this library
  5  the disk is full or failed while writing (the previous index is unchanged)
  6  read-only media or no permission (an index on read-only media can still be searched)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fieldqa", description=__doc__, epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for action in sub.choices.values():
        if not any(a.dest == "config" for a in action._actions):
            common_options(action)
        elif not any(a.dest == "progress" for a in action._actions):
            action.add_argument("--progress", action="store_true",
                                help="show progress on stderr even when it is not a terminal")
    return parser


# options that take a value, accepted before the sub-command as well as after it
_VALUED = ("--config", "--index")


def command_first(argv: list[str], commands: set[str]) -> list[str]:
    """``--config X --progress ask …`` as ``ask … --config X --progress``: options given before the
    sub-command are moved to the end, where its parser (or its own sub-command's) reads them."""
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in ("-h", "--help"):
        i += 2 if argv[i] in _VALUED else 1
    if 0 < i < len(argv) and argv[i] in commands:
        return [*argv[i:], *argv[:i]]
    return argv


def innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)sub-command ``args`` were read for: ``fieldqa models build`` gives
    the ``build`` parser, so an error names that command and shows its usage, not fieldqa's."""
    while True:
        subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, subs.dest, None) if subs is not None else None
        if subs is None or chosen not in subs.choices:
            return parser
        parser = subs.choices[chosen]


def tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fieldqa", description="Open the TUI on a library folder.")
    parser.add_argument("folder", nargs="?", type=Path, help="library folder (default: the configured one)")
    parser.add_argument("--index", type=Path, default=None, help="index folder (default: user data dir)")
    common_options(parser)
    return parser


def question_problem(question: str | None) -> str:
    """Why a question given on the command line cannot be asked ('' when it can)."""
    if question is None:
        return ""
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        return "the question is not valid UTF-8 text (check the terminal's encoding)"
    if not question.strip():
        return "the question is empty"
    from engine.answer.compose import NO_WORDS, holds_words

    if not holds_words(question):
        return NO_WORDS
    return ""


def folder_problem(folder: Path | None, files_too: bool = False) -> str:
    """Why a library folder given on the command line cannot be used ('' when it can): checked
    before anything is opened or created, so a typo never leaves an empty index behind."""
    if folder is None:
        return ""
    folder = Path(folder)
    if files_too and folder.is_file():
        return ""
    if not folder.exists():
        return f"no such {'file or folder' if files_too else 'folder'}: {folder}"
    if not folder.is_dir():
        return f"not a folder: {folder}"
    from engine.ingest.formats import FORMATS, holds_manuals

    if not holds_manuals(folder):
        return (f"no manuals in {folder}: it holds no {', '.join(sorted(FORMATS))} file (nothing was "
                "opened or created)")
    return ""


def swapped_hint(command: str, args: argparse.Namespace) -> str:
    """A hint when the folder and the question came the wrong way round (``fieldqa ask samples
    "question"``): the question names an existing folder and the folder does not exist."""
    question, path = getattr(args, "question", None), getattr(args, "path", None)
    if not question or path is None or Path(path).exists() or not Path(question).is_dir():
        return ""
    return f" (the question comes first: fieldqa {command} {shlex.quote(str(path))} {shlex.quote(question)})"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    argv = command_first(argv, commands)
    try:
        if argv and (argv[0] in commands or argv[0] in ("-h", "--help")):
            args, extra = parser.parse_known_args(argv)
            if extra:  # told by the sub-command's own parser, whose usage lists what it takes
                innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
            problem = question_problem(getattr(args, "question", None)) or folder_problem(
                getattr(args, "path", None) or getattr(args, "corpus", None), files_too=argv[0] == "chunks")
            if problem:
                print(f"fieldqa {argv[0]}: {problem}{swapped_hint(argv[0], args)}", file=sys.stderr)
                return 2
            return int(args.func(args) or 0)
        args = tui_parser().parse_args(argv)
        cfg = config_from(args)
        folder = args.folder or cfg.library
        if folder is None:
            print("fieldqa: no library folder given and none configured (`library = ...` in config)",
                  file=sys.stderr)
            return 2
        problem = folder_problem(Path(folder))
        if problem:
            print(f"fieldqa: {problem}", file=sys.stderr)
            return 2
        from tui.app import run_app  # the UI is imported only when it is used

        return run_app(Path(folder), cfg, index_dir=args.index)
    except ConfigError as e:
        print(f"fieldqa: config error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `fieldqa search … --json | head`: the reader left; end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
