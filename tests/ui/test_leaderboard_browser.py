"""The Leaderboard tab in real chromium, on a board seeded as the Space seeds it (the paper's
tables and this project's committed sweeps): AQuA 3c2t's RRMaj is the number the Arena's result
line shows for that run, rows carry a question count, an estimator and a source, no superseded
row is in the default view or the ranking, tied models share a rank, and a filter that leaves
columns short keeps their headers on a line or two."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.db import run_transaction
from leaderboard.service import store_submission
from rrdemo.gallery import load_gallery
from rrdemo.report.submission import parse_submission
from tests.support.browser import browser  # noqa: F401 (the chromium fixture)
from tests.support.samples import encode, result_row, submission
from tests.support.served import serve_app
from tests.test_results_table import POOLED, results_table

ROOT = Path(__file__).resolve().parents[2]
QWEN = "qwen2.5-coder-1.5b"
DELTA = "RRMaj - MAJ [95%]"
TIED = ("org/tied-a", "org/tied-b")


def _tied_rows(model: str) -> list[dict]:
    """3c2t and 4c1t rows on gsm8k, RRMaj 95% at both: two such models tie."""
    return [
        result_row(
            model=model, agent_models=[model] * 5, n_corrupted=c, n_honest=5 - c,
            corrupted_agents=list(range(c)), rrmaj_accuracy=0.95,
        )
        for c in (3, 4)
    ]  # fmt: skip


@pytest.fixture
def served(tmp_path: Path) -> Iterator:
    from rrdemo.backends.pool import ModelPool

    folder = tmp_path / "served"
    folder.mkdir()
    for app in serve_app(ModelPool(), folder, ROOT / "leaderboard" / "project_runs"):
        for model in TIED:
            doc = parse_submission(encode(submission(_tied_rows(model), submitter=model)))
            run_transaction(
                app.store.factory, lambda s, d=doc: store_submission(s, d, status="approved")
            )
        yield app


CELL = '[role="gridcell"]'  # a shown cell (the table body proper only measures widths)


def _records(page, selector: str) -> list[dict[str, str]]:
    """A dataframe's shown rows, each by its column headers, as the page shows them."""
    headers, rows = page.evaluate(
        """(selector) => {
            const root = document.querySelector(selector);
            const headers = [...root.querySelectorAll('thead th')].map(th => th.title);
            const rows = [...root.querySelectorAll('[role="row"][data-index]')].map(row =>
                [...row.querySelectorAll('[role="gridcell"]')].map(c => c.innerText.trim()));
            return [headers, rows];
        }""",
        selector,
    )
    return [dict(zip(headers, row, strict=True)) for row in rows]


def _every_record(page, selector: str) -> list[dict[str, str]]:
    """`_records` of a tall table, every row: it draws only the rows in its window, so read it,
    scroll its window to the end, and read again (each row once)."""
    first = _records(page, selector)
    page.evaluate(
        """(selector) => { for (const el of document.querySelectorAll(selector + ' *'))
               if (el.scrollHeight > el.clientHeight + 1) el.scrollTop = el.scrollHeight; }""",
        selector,
    )
    page.wait_for_timeout(500)
    seen = {tuple(r.items()) for r in first}
    return first + [r for r in _records(page, selector) if tuple(r.items()) not in seen]


def _pick(page, dropdown_label: str, option: str) -> None:
    page.get_by_label(dropdown_label, exact=True).click()
    page.locator(f'[role="option"][aria-label="{option}"]').click()


@pytest.mark.slow
@pytest.mark.browser
def test_the_board_shows_the_arenas_number_and_what_each_row_stands_on(browser, served) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(served.url, wait_until="domcontentloaded")
    result = page.locator("#rr-result")
    result.filter(has_text="RRMaj").wait_for(timeout=120_000)
    line = result.inner_text()
    opening = load_gallery().settings[0]  # the run the Arena opens on: AQuA, moderate 3c2t
    assert (opening.log.parent.name, opening.name) == ("evidence_aqua", "moderate 3c2t")
    assert "estimator: run's decisions" in line
    arena_rrmaj = re.search(r"RRMaj (\d+\.\d)%", line).group(1)
    arena_questions = re.search(r"(\d+) questions", line).group(1)

    page.get_by_role("tab", name="Leaderboard").click()
    page.locator(f"#lb-ranking {CELL}", has_text=TIED[0]).wait_for(timeout=60_000)
    ranking = _records(page, "#lb-ranking")
    ranks = {r["model"]: r["rank"] for r in ranking}
    assert ranks[TIED[0]] == ranks[TIED[1]] and ranks[TIED[0]].startswith("=")  # shown tied
    assert len(set(ranks.values())) < len(ranks)  # ... and no two rank-1 rows apart
    assert all(r["source"] for r in ranking) and {"paper", "rrdemo"} <= {
        s for r in ranking for s in r["source"].split(", ")
    }
    qwen = next(r for r in ranking if r["model"] == QWEN)
    assert qwen["fewest questions"] == "40"  # the old sweep's 6-7 question rows are not pooled
    assert qwen["mean gain %"] == "-"  # RRMaj - MAJ is the pooled line's, not a mean of rows
    pooled = {(r["model"], r["config"]): r for r in _records(page, "#lb-pooled")}
    readme = results_table((ROOT / "README.md").read_text(encoding="utf-8"))
    (row,) = [dict(zip(readme[0], c, strict=True)) for c in readme[1:] if c[0] == POOLED]
    shown = pooled[(QWEN, "3c2t")]  # the page's pooled line is the README's pooled row
    assert (shown["questions"], shown["RRMaj - MAJ [95%]"]) == (row["questions"], row[DELTA])
    assert shown["verdict"] == row["verdict"]

    _pick(page, "source", "rrdemo")
    page.wait_for_function(
        "() => { const rows = [...document.querySelectorAll('#lb-rows [role=\"row\"][data-index]')];"
        " return rows.length && rows.every(r => r.innerText.includes('rrdemo')); }",
        timeout=60_000,
    )
    rows = _every_record(page, "#lb-rows")
    assert {"questions", "estimator", "source", "study or log", "standing"} <= set(rows[0])
    assert not [r for r in rows if "superseded" in r["standing"]]  # none in the default view
    assert {r["study or log"] for r in rows} == {
        "assets/evidence/study.yaml",
        "assets/evidence_aqua/study.yaml",
        "assets/evidence_arith4_steps/study.yaml",
        "assets/evidence_logic3_steps/study.yaml",
        "assets/evidence_pass/study.yaml",
    }
    # the pass run's row says its policy beside the arith2 evidence run's (end)
    arith2 = {r["EOS policy"] for r in rows if r["dataset"].startswith("arith2")}
    assert arith2 == {"end", "pass"}, arith2
    (aqua,) = [r for r in rows if r["dataset"] == "aqua" and r["config"] == "3c2t"]
    assert aqua["RRMaj %"] == arena_rrmaj and aqua["questions"] == arena_questions
    assert aqua["estimator"] == "run's decisions" and aqua["source"] == "rrdemo"

    # One task only: the superseded old-prompt rows show only when asked for, labelled; the
    # columns that the rows leave short keep readable headers (no letter a line).
    _pick(page, "dataset", "aqua")
    page.locator("#lb-old input").check()
    page.locator(f"#lb-rows {CELL}", has_text="superseded").first.wait_for(timeout=60_000)
    shown = _records(page, "#lb-rows")
    old = [r for r in shown if r["prompt style"] == "step-by-step"]
    assert old and all(r["standing"].startswith("superseded: old prompt") for r in old)
    assert {r["model"] for r in _records(page, "#lb-ranking")} == {QWEN}  # still unranked
    heights = page.evaluate(
        "() => [...document.querySelectorAll('#lb-ranking th, #lb-generated th, #lb-rows th')]"
        ".map(th => [th.title, th.querySelector('span').offsetHeight, th.offsetWidth])"
    )
    # every header on one or two lines (21 px a line), the empty generated ranking's too
    assert heights and all(height < 50 for _, height, _ in heights), heights
