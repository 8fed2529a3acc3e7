"""The settings files users write (sweep files, ensemble files): YAML or JSON, read in one way.

A file that cannot be read or parsed is one RRError naming the file and, for a syntax error, the
line and column where the parser stopped, so the user can go straight to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError

MAX_SETTINGS_BYTES = 256 * 2**10  # 256 KiB: a sweep of 256 ensembles is tens of kB, and the
# YAML parser reads about 130 kB a second on one core, so a bigger file is refused before parsing


def _bounded_text(path: Path, what: str) -> str:
    """The file's text, read no further than `MAX_SETTINGS_BYTES` (a pipe or /dev/zero ends)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise RRError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise RRError(
            f"the {what} {path.name} is larger than {MAX_SETTINGS_BYTES >> 10} KiB; a settings "
            "file lists names and numbers, a few kB"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RRError(f"cannot read the {what} {path}: {exc}") from None


def read_settings_file(path: Path, what: str) -> Any:
    """The parsed content of `path`: JSON for a `.json` file, YAML for any other. `what` names
    the file in messages ("sweep file", "ensemble file"). The size is checked before parsing,
    and nesting too deep for the parser is refused, not a crash."""
    text = _bounded_text(path, what)
    too_deep = RRError(f"the {what} {path.name} is nested too deeply to read")
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise RRError(
                f"the {what} {path.name} is not valid JSON ({where}): {exc.msg}"
            ) from None
        except RecursionError:
            raise too_deep from None
    import yaml  # slow to import; only when a YAML file is read

    try:  # the pure-Python loader: libyaml's overflows the C stack on deep nesting (a crash)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RRError(f"the {what} {path.name} is not valid YAML {_yaml_where(exc)}") from None
    except RecursionError:
        raise too_deep from None


def _yaml_where(exc: Exception) -> str:
    """`(line L, column C): problem` of a YAML error (1-based, as editors count)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    if mark is None:
        return f": {problem}"
    return f"(line {mark.line + 1}, column {mark.column + 1}): {problem}"
