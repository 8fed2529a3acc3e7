"""The settings files users write (sweep files, ensemble files): YAML or JSON, read in one way.

A file that cannot be read or parsed is one RRError naming the file and, for a syntax error, the
line and column where the parser stopped, so the user can go straight to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError


def read_settings_file(path: Path, what: str) -> Any:
    """The parsed content of `path`: JSON for a `.json` file, YAML for any other. `what` names
    the file in messages ("sweep file", "ensemble file")."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RRError(f"cannot read the {what} {path}: {exc}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise RRError(
                f"the {what} {path.name} is not valid JSON ({where}): {exc.msg}"
            ) from None
    import yaml  # slow to import; only when a YAML file is read

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RRError(f"the {what} {path.name} is not valid YAML {_yaml_where(exc)}") from None


def _yaml_where(exc: Exception) -> str:
    """`(line L, column C): problem` of a YAML error (1-based, as editors count)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    if mark is None:
        return f": {problem}"
    return f"(line {mark.line + 1}, column {mark.column + 1}): {problem}"
