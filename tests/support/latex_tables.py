"""A small LaTeX tabular reader for checking the paper's tables cell by cell.

It knows only what the paper's tables use: \\multicolumn, \\multirow, \\textbf, \\textit, $...$,
subscripted spreads (`$46.2_{\\pm2.6}$` -> `46.2±2.6`), `\\%`, `$n$`, `$\\times$` and the booktabs
rules. It is written independently of the data modules it checks.
"""

from __future__ import annotations

import re
from pathlib import Path

PAPER_TEX = Path(__file__).resolve().parents[1] / "data" / "consensus_trap.tex"


def _unwrap(text: str, command: str) -> str:
    """Replace `\\command{...}` (balanced braces) by its content, everywhere."""
    token = f"\\{command}{{"
    while token in text:
        start = text.index(token)
        depth, i = 1, start + len(token)
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[:start] + text[start + len(token) : i - 1] + text[i:]
    return text


def _last_argument(text: str) -> str:
    """The content of the last top-level {...} group (for \\multicolumn / \\multirow)."""
    depth, end = 0, None
    for i in range(len(text) - 1, -1, -1):
        if text[i] == "}":
            if depth == 0:
                end = i
            depth += 1
        elif text[i] == "{":
            depth -= 1
            if depth == 0 and end is not None:
                return text[i + 1 : end]
    return text


def clean_cell(cell: str) -> str:
    """Plain text of one cell: formatting commands dropped, math turned into characters."""
    cell = cell.strip()
    if cell.startswith(("\\multicolumn", "\\multirow")):
        cell = _last_argument(cell)
    for command in ("textbf", "textit", "texttt"):
        cell = _unwrap(cell, command)
    cell = re.sub(r"_\{\\pm([\d.]+)\}", r"±\1", cell)
    cell = cell.replace("$\\times$", "×").replace("\\_", "_").replace("\\%", "%")
    cell = cell.replace("$\\rho$", "ρ").replace("$\\Delta$", "Δ").replace("$", "")
    return " ".join(cell.split())


def table_rows(tex: str, label: str) -> list[list[str]]:
    """The rows of the tabular in the table environment holding `\\label{label}`, cells cleaned.

    Rule lines are dropped; a section header spanning the table is a row of one cell.
    """
    at = tex.index(f"\\label{{{label}}}")
    start = tex.rindex("\\begin{table", 0, at)
    end = tex.index("\\end{table", at)
    env = tex[start:end]
    body = env[env.index("\\begin{tabular}") : env.index("\\end{tabular}")]
    body = body[body.index("\n") + 1 :]  # drop the column specification line
    rows = []
    for raw in body.split("\\\\"):
        raw = re.sub(r"\\(toprule|midrule|bottomrule)", "", raw).strip()
        if raw:
            rows.append([clean_cell(c) for c in raw.split("&")])
    return rows


def read_paper() -> str:
    return PAPER_TEX.read_text(encoding="utf-8")
