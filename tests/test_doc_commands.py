"""Every command the docs and the code's hints print is one that runs: `rrdemo ...` and
`python -m rrdemo ...` name a subcommand and only its flags, `python -m leaderboard ...` likewise,
`python -m MODULE` names a module of the project, `python FILE` and `scripts/` / `tools/` paths
name files that exist, `make TARGET` a target of the Makefile.

Checked at `--help` level (the parser's subcommands and option strings); nothing is run.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.cli import _parser as leaderboard_parser
from rrdemo.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = sorted(
    path
    for folder in ("rrdemo", "leaderboard", "ui", "bench", "tools")
    for path in (ROOT / folder).rglob("*.py")
) + [ROOT / "app.py"]
PROJECT_MODULES = ("rrdemo", "leaderboard", "bench", "tools")

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INDENTED = re.compile(r"^(?: {4}|\t)(\S.*)$", re.M)
SPAN = re.compile(r"`([^`]+)`")
COMMAND = re.compile(
    r"^(?:[A-Z_]+=\S*\s+)*(?:\S*/)?(?:rrdemo\s|python3?\s+(?:-m\s+\S+|\S+\.py)|make\s)"
)
PATH = re.compile(r"\b(?:scripts|tools)/[\w/.-]+\.(?:py|sh)\b")


def commands_in(text: str, markdown: bool = True) -> list[str]:
    """The commands in a markdown text (fenced and indented code, inline code) or in source code
    (inline code in strings and comments); continued lines are joined."""
    found = []
    blocks = FENCE.findall(text) if markdown else []
    rest = FENCE.sub("", text) if markdown else text
    if markdown:
        blocks += [m.group(1) for m in INDENTED.finditer(rest)]
    for block in blocks:
        for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():
            if COMMAND.match(line.strip()):
                found.append(line.strip())
    for span in SPAN.findall(rest):
        span = re.sub(r"\\\\?\n\s*", " ", span).strip()
        if COMMAND.match(span):
            found.append(span)
    return found


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote in a shortened example
        return command.split()


def _segments(command: str) -> Iterator[list[str]]:
    """The simple commands of a line (split at `&&`, `;` and pipes), without leading `X=...`."""
    segment: list[str] = []
    for token in [*_tokens(command), "&&"]:
        if token in ("&&", ";", "|", "||"):
            while segment and re.fullmatch(r"[A-Z_]+=.*", segment[0]):
                segment.pop(0)
            if segment:
                yield segment
            segment = []
        else:
            segment.append(token)


def _placeholder(word: str) -> bool:
    """A word the reader fills in: `NAME`, `<command>`, `{flags}`."""
    return bool(re.fullmatch(r"<[^>]+>|[A-Z][A-Z0-9_]*|\{[^}]*\}", word))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError(f"{parser.prog} has no subcommands")


def _check_cli(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """What is wrong with `args` for a parser with subcommands: an unknown subcommand or flag."""
    words = [a.strip("[]()") for a in args if a.strip("[]()") not in ("", "...")]
    if not words or words[0].startswith("-") or _placeholder(words[0]):
        return []  # the program itself (`rrdemo --help`, `python -m rrdemo <command>`)
    commands = _subparsers(parser)
    problems = []
    for name in words[0].split("|"):
        if name not in commands:
            problems.append(f"no subcommand {name!r} (there are: {', '.join(commands)})")
            continue
        options = commands[name]._option_string_actions
        for word in words[1:]:
            for flag in word.split("|"):
                flag = flag.split("=")[0]
                if re.fullmatch(r"--?[a-zA-Z][\w-]*", flag) and flag not in options:
                    problems.append(f"{name} has no option {flag}")
    return problems


def _makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([\w-]+):", text, re.M)}


def check_command(command: str) -> list[str]:
    """The problems of one printed command (an empty list when it runs)."""
    problems = []
    for words in _segments(command):
        program, args = Path(words[0]).name, words[1:]
        if program == "rrdemo":
            problems += _check_cli(build_parser(), args)
        elif program == "make":
            targets = [t for t in args if not re.fullmatch(r"[A-Z_]+=\S*", t)]  # VAR=value
            problems += [f"no make target {t!r}" for t in targets if t not in _makefile_targets()]
        elif re.fullmatch(r"python3?", program) and args[:1] == ["-m"] and len(args) > 1:
            module, rest = args[1], args[2:]
            if _placeholder(module.split(".")[-1]):
                module = module.rpartition(".")[0]  # `tools.NAME`: the package must exist
            if module.split(".")[0] not in PROJECT_MODULES:
                continue  # pytest, llama_cpp.server, ...: not this project's
            if importlib.util.find_spec(module) is None:
                problems.append(f"no module {module}")
            elif module == "rrdemo":
                problems += _check_cli(build_parser(), rest)
            elif module == "leaderboard":
                problems += _check_cli(leaderboard_parser(), rest)
        elif re.fullmatch(r"python3?", program) and args and not (ROOT / args[0]).is_file():
            problems.append(f"no file {args[0]}")
    return problems


def _printed() -> Iterator[tuple[str, str]]:
    for path in DOCS:
        for command in commands_in(path.read_text(encoding="utf-8")):
            yield str(path.relative_to(ROOT)), command
    for path in CODE:
        for command in commands_in(path.read_text(encoding="utf-8"), markdown=False):
            yield str(path.relative_to(ROOT)), command


def test_every_printed_command_names_what_exists() -> None:
    printed = list(_printed())
    assert len(printed) > 100  # the docs' examples were found
    broken = [
        f"{where}: {command}: {problem}"
        for where, command in printed
        for problem in check_command(command)
    ]
    assert broken == []


def test_every_tool_path_the_docs_name_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in DOCS + CODE
        for name in PATH.findall(path.read_text(encoding="utf-8"))
        if not (ROOT / name).is_file()
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("rrdemo statuss LOG", "no subcommand 'statuss'"),
        ("python -m rrdemo report LOG --png", "report has no option --png"),
        ("PYTHONPATH=. python scripts/merge_logs.py A B --out A", "no file scripts/merge_logs.py"),
        ("python -m leaderboard list --models x", "list has no option --models"),
        ("python -m rrdemo.nothing", "no module rrdemo.nothing"),
        ("make tests", "no make target 'tests'"),
        ("make evidence-runs SHARD=1/2", "no make target 'evidence-runs'"),
        ("rrdemo status a.jsonl && rrdemo merge-logs a b --outt c", "merge-logs has no option"),
    ],
)
def test_a_broken_command_is_caught(command: str, problem: str) -> None:
    assert any(problem in found for found in check_command(command))


def test_commands_are_found_in_code_blocks_spans_and_continued_lines() -> None:
    text = (
        "Run `rrdemo status LOG` or\n\n```bash\nFOO=1 .venv/bin/python -m rrdemo experiment \\\n"
        "    --tasks logic3   # note\n```\n\n    make setup\n"
    )
    assert commands_in(text) == [
        "FOO=1 .venv/bin/python -m rrdemo experiment --tasks logic3   # note",
        "make setup",
        "rrdemo status LOG",
    ]
    good = ["rrdemo status a.jsonl --json", "python -m leaderboard rank --task gsm8k --csv x.csv"]
    assert [check_command(c) for c in good] == [[], []]
