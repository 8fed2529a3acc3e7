"""HTML for the arena panels, drawn from an `ArenaState`: the MAJ and RRMaj panels (made of the
pieces in `ui.trajectory_html`), the verdict line, one frame of the Arena, the picked question and
the result line beside it. Pure functions, no gradio.

Every string a model or a user wrote goes through `html.escape`. Styles are inline so the panels
look the same wherever the HTML lands (the Space, a test server, a saved page).
"""

from __future__ import annotations

import re
import time
from html import escape

from rrdemo.config import RunConfig, beyond_paper
from rrdemo.events import METHODS, Decision
from rrdemo.fold import MethodRecord
from rrdemo.gallery import CellOutcome
from rrdemo.replay import RecordedUnit
from rrdemo.report.render import pct
from rrdemo.report.submission import ESTIMATORS
from ui.plain_math import plain_math
from ui.state import ArenaState
from ui.trajectory_html import (
    agent_hue,
    agent_label,
    answer_badge,
    legend,
    meter_legend,
    role_word,
    speaker_strip,
    trajectory_card,
    z_line,
)

UPDATE_INTERVAL_S = (
    0.1  # at most ~10 renders a second: the browser keeps up, the page never freezes
)


def _vote_and_decision(view: MethodRecord, gold_known: bool) -> str:
    if view.vote is None:
        return ""
    counts = ", ".join(
        f"{escape(str(answer))}: {count}" for answer, count in view.vote.counts.items()
    )
    parts = [f"<b>Vote</b> {counts or 'no votes'}"]
    if view.vote.abstained:
        parts.append(f"{view.vote.abstained} without an answer")
    line = " · ".join(parts)
    if view.decision is not None:
        decision = answer_badge(view.decision, gold_known)
        tied = view.decision.tied
        if tied:
            decision += f" (tie between {escape(', '.join(map(str, tied)))}, broken by the seed)"
        line += f" → <b>Decision</b> {decision}"
    return f'<div class="rr-vote" style="margin-top:8px;font-size:13px">{line}</div>'


def _header(title: str, view: MethodRecord, subtitle: str, stopped: bool = False) -> str:
    state = "done" if view.done else ("running" if view.trajectories else "waiting")
    state = "stopped" if stopped and not view.done else state
    return (
        f'<div style="display:flex;justify-content:space-between;align-items:baseline">'
        f'<h3 style="margin:0 0 4px 0">{title}</h3>'
        f'<span class="rr-state" style="color:#52525b;font-size:12px">{state}</span></div>'
        f'<div class="rr-subtitle" style="color:#52525b;font-size:12px;margin-bottom:6px">{subtitle}</div>'
    )


def render_maj(state: ArenaState) -> str:
    """MAJ: the N independent answers side by side, then the vote and the decision."""
    view = state.methods.get("MAJ")
    if view is None:
        return placeholder("MAJ")
    agents, gold = state.agents, state.question.get("gold") is not None
    cards = []
    for j, tr in sorted(view.trajectories.items()):
        agent = tr.order[0] if tr.order else j % max(len(agents), 1)
        corrupted = agent < len(agents) and bool(agents[agent]["corrupted"])
        hue = agent_hue(agent, agents) if agents else "#3f3f46"
        title = (
            f'<b style="color:{hue}">{escape(agent_label(agent, agents))}</b> '
            f"<span>{role_word(corrupted)}</span>"
        )
        strip = z_line(tr.measures, agents)
        cards.append(trajectory_card(tr, title, agents, gold, False, strip, state.stopped))
    grid = (
        '<div style="display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:8px">'
        + "".join(cards)
        + "</div>"
    )
    subtitle = "each agent answers alone; the plurality of their answers wins"
    return _panel(
        "MAJ",
        recorded_badge(state)
        + _header("MAJ · majority vote", view, subtitle, state.stopped)
        + grid
        + _vote_and_decision(view, gold),
    )


def render_rrmaj(state: ArenaState) -> str:
    """RRMaj: M shared trajectories with chunks coloured by agent, then the vote and the decision."""
    view = state.methods.get("RRMaj")
    if view is None:
        return placeholder("RRMaj")
    agents, gold = state.agents, state.question.get("gold") is not None
    k = state.config.get("k", "K")
    cards = []
    for j, tr in sorted(view.trajectories.items()):
        order = "→".join(f"A{a + 1}" for a in tr.order)
        title = f"<b>Trajectory {j + 1}</b> <span style='color:#52525b'>order {order}</span>"
        strip = speaker_strip(state.speakers.trajectories.get(j), agents)
        strip += z_line(tr.measures, agents)
        cards.append(trajectory_card(tr, title, agents, gold, True, strip, state.stopped))
    stack = '<div style="display:flex;flex-direction:column;gap:8px">' + "".join(cards) + "</div>"
    subtitle = f"agents take turns writing K={escape(str(k))} tokens of one shared text; M trajectories vote"
    return _panel(
        "RRMaj",
        recorded_badge(state)
        + _header("RRMaj · token-level round-robin", view, subtitle, state.stopped)
        + legend(agents)
        + stack
        + _vote_and_decision(view, gold)
        + meter_legend(state),
    )


def setting_text(cfg: RunConfig) -> str:
    """`3c2t, rho = 0.60, strong · K = 16, M = 5, L = 128, shuffled order`, and any setting beyond
    the paper (docs/adversary.md) that is not the paper's default."""
    text = (
        f"{cfg.label}, rho = {cfg.rho:.2f}, {cfg.strength} · K = {cfg.k}, "
        f"M = {cfg.resolved_m}, L = {cfg.max_tokens}, {cfg.order} order"
    )
    beyond = [
        _named(s.name, s.what, getattr(cfg, s.name))
        for s in beyond_paper()
        if getattr(cfg, s.name) != s.default
    ]
    return text + "".join(f", {item}" for item in beyond)


def _named(name: str, what: str, value: object) -> str:
    """A setting in words: "prompt style step-by-step", "truth meter on" (never "meter True")."""
    if isinstance(value, bool):
        return f"{what} {'on' if value else 'off'}"
    return f"{name.replace('_', ' ')} {value}"


def recorded_badge(state: ArenaState) -> str:
    """ "Recorded" and where from, on a replayed recording's panels (nothing on a live run)."""
    if not state.recorded:
        return ""
    return (
        '<div class="rr-recorded" style="font-size:12px;margin:0 0 6px 0;padding:2px 8px;'
        'border-radius:4px;background:#fef3c7;color:#78350f;border-left:4px solid #d97706">'
        f"<b>Recorded</b> · {escape(state.recorded)}</div>"
    )


class Throttle:
    """True at most once per `interval` seconds (and always for `force`)."""

    def __init__(self, interval: float = UPDATE_INTERVAL_S) -> None:
        self.interval = interval
        self.last = float("-inf")

    def due(self, force: bool = False) -> bool:
        now = time.monotonic()
        if force or now - self.last >= self.interval:
            self.last = now
            return True
        return False


def stopped_status(state: ArenaState) -> str:
    """The status line of a run the user stopped."""
    return f"**Stopped** after {state.events} events. Run again or pick a recording."


def frame(state: ArenaState, status: str) -> tuple:
    """One update of the Arena: (status, verdict, MAJ, RRMaj, record, state), numbered.

    A stopped run's status line says so whatever `status` the stream meant to show: a frame the
    stream renders after Stop (its cancel lands only once the current step returns) must not
    bring back "Running"."""
    state.updates += 1
    return (
        stopped_status(state) if state.stopped else status,
        render_verdict(state),
        render_maj(state),
        render_rrmaj(state),
        state.summary(),
        state,
    )


def _panel(method: str, inner: str) -> str:
    return (
        f'<div class="rr-panel rr-panel-{method}" style="font-family:system-ui,sans-serif;'
        f'color:#18181b;background:#fafafa;border-radius:10px;padding:10px">{inner}</div>'
    )


def placeholder(method: str) -> str:
    """What a panel shows before the first run."""
    return _panel(
        method, f'<span style="color:#71717a">{method} appears here when you press Run.</span>'
    )


def _verdict_word(
    decision: Decision | None, gold_known: bool, stopped: bool = False
) -> tuple[str, str]:
    if decision is None:
        return ("stopped" if stopped else "…"), "#71717a"
    if decision.answer is None:
        return "no answer", "#71717a"
    if decision.fooled:
        return "fooled", "#b91c1c"
    if decision.correct:
        return "correct", "#15803d"
    return ("wrong" if gold_known else "answered"), "#a16207"


def render_verdict(state: ArenaState) -> str:
    """One line: correct / fooled / no answer per method, and the compute each used."""
    if not state.methods:
        return ""
    gold_known = state.question.get("gold") is not None
    parts = []
    for method in METHODS:
        view = state.methods.get(method)
        if view is None:
            continue
        word, colour = _verdict_word(view.decision, gold_known, state.stopped)
        answer = view.decision.answer if view.decision else None
        text = f'<b>{method}</b>: <b class="rr-verdict" style="color:{colour}">{word}</b>'
        if answer is not None:
            text += f" · answer {escape(str(answer))}"
        if view.compute:
            c = view.compute
            text += (
                f' <span class="rr-compute" style="color:#52525b">· {c.decode_tokens} decode + '
                f"{c.prefill_tokens} prefill tokens · {c.wall_s:.1f} s</span>"
            )
        if method == "RRMaj" and view.trajectories:
            n_tr, honest = len(view.trajectories), state.speakers.with_honest
            text += (
                f' <span class="rr-honest-writers" style="color:#52525b">· honest writer in '
                f"<b>{honest} of {n_tr}</b> trajectories ({state.speakers.mixed} mixed)</span>"
            )
        parts.append(text)
    q = state.question
    facts = []
    if q.get("gold") is not None:
        facts.append(f"gold {escape(str(q['gold']))}")
    if q.get("target"):
        facts.append(f"target {escape(str(q['target']))}")
    tail = f' <span style="color:#52525b">({", ".join(facts)})</span>' if facts else ""
    return (
        '<div class="rr-verdict-line" style="font-family:system-ui,sans-serif;font-size:14px;'
        'padding:6px 10px;border-radius:8px;background:#f4f4f5;color:#18181b">'
        + " &nbsp;|&nbsp; ".join(parts)
        + tail
        + "</div>"
    )


_OPTION = re.compile(r"^\(([A-Z])\)\s*(.*)$")


def split_options(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A question's stem and its trailing options: "...?\nOptions:\n(A) 36\n(B) 45" ->
    ("...?", [("A", "36"), ("B", "45")]); a question without options keeps its whole text."""
    lines = text.rstrip().split("\n")
    options: list[tuple[str, str]] = []
    while lines and (found := _OPTION.match(lines[-1].strip())):
        options.insert(0, (found.group(1), found.group(2)))
        lines.pop()
    if lines and lines[-1].strip().lower() == "options:":
        lines.pop()
    return ("\n".join(lines), options) if options else (text, [])


def _options_html(options: list[tuple[str, str]], gold: str | None) -> str:
    """The options on their own line under the stem, always in view; the gold one in green."""
    items = []
    for letter, words in options:
        text = f"({letter}) {escape(plain_math(words))}"
        if gold and gold.strip("() ").upper() == letter:
            text = f'<b style="color:#15803d">{text}</b>'
        items.append(f'<span class="rr-option" style="white-space:nowrap">{text}</span>')
    return (
        '<div class="rr-options" style="margin-top:4px;line-height:1.5">'
        + " <span style='color:#a1a1aa'>·</span> ".join(items)
        + "</div>"
    )


def render_question(task_title: str, question_text: str, gold: str | None, qid: str = "") -> str:
    """The picked question, escaped, with its gold answer; its options (A), (B), ... on a line
    of their own below the stem, which scrolls when long, so they stay in view."""
    gold_html = (
        f'<b style="color:#15803d">{escape(gold)}</b>'
        if gold
        else '<i style="color:#71717a">unknown</i>'
    )
    stem, options = split_options(question_text)
    return (
        '<div class="rr-question" style="font-family:system-ui,sans-serif;font-size:13px;'
        'background:#f4f4f5;color:#18181b;border-radius:8px;padding:8px 10px">'
        f'<div style="color:#52525b;font-size:12px">{escape(task_title)} {escape(qid)} · gold answer '
        f"{gold_html}</div>"
        f'<div class="rr-stem" style="white-space:pre-wrap;max-height:180px;overflow-y:auto;'
        f'margin-top:4px">{escape(plain_math(stem))}</div>'
        + (_options_html(options, gold) if options else "")
        + "</div>"
    )


_RESULT_STYLE = (
    "font-family:system-ui,sans-serif;font-size:13px;line-height:1.45;padding:6px 10px;"
    "border-radius:8px;background:#eef2ff;color:#1e1b4b;border-left:4px solid #4f46e5"
)
LIVE_RESULT = "one question: see Experiments for a sweep"


def result_line(outcome: CellOutcome | None, cell: str, unit: RecordedUnit) -> str:
    """What the recording's whole run found, beside the one question it plays: questions, both
    accuracies as the run decided each question (the estimator the leaderboard and the report's
    paired table show, named), RRMaj - MAJ with its 95% interval, and which of the four cells
    this question is in ("RRMaj alone right on 7 of 80, MAJ alone on 2, ...")."""
    qid = escape(unit.question_id)
    if outcome is None:
        return (
            f'<div class="rr-result" style="{_RESULT_STYLE}">No finished question of this '
            f"setting has both methods' decisions yet; this is {qid} alone.</div>"
        )
    r = outcome.row
    return (
        f'<div class="rr-result" style="{_RESULT_STYLE}"><b>Whole run of this setting</b>'
        f'<span class="rr-source" style="color:#4338ca"> ({escape(unit.source)})</span>: '
        f'{r.questions} questions · <span class="rr-estimator">estimator: {ESTIMATORS["decisions"]}'
        f"</span> · MAJ {pct(r.maj)}% · RRMaj {pct(r.rrmaj)}% · RRMaj - MAJ "
        f"<b>{escape(outcome.difference())}</b> (95% interval): <b>{escape(outcome.finding)}</b>. "
        f"{escape(outcome.counts())}; <b>{qid}</b> is {escape(_cell_words(cell))}.</div>"
    )


def _cell_words(cell: str) -> str:
    return {
        "both right": "one both got right",
        "both wrong": "one both got wrong",
        "RRMaj alone right": "one RRMaj alone got right",
        "MAJ alone right": "one MAJ alone got right",
    }[cell]


def live_result_line(state: ArenaState | None = None) -> str:
    """The result line of a live run: one question, never a finding. While it runs (`state`
    None) it says that a live run samples anew; stopped, that it stopped; done, what this new
    sample decided, in the place where a recording's line says what its run found."""
    if state is None:
        words = (
            "running one question live. It samples anew: even a recording's own config and seed "
            "can end otherwise than the recording did"
        )
    elif state.status == "failed":
        words = "not run, the run could not start (the status line says why)"
    elif state.stopped:
        words = "stopped before both methods decided"
    else:
        gold_known = state.question.get("gold") is not None
        outcomes = []
        for method in METHODS:
            view = state.methods.get(method)
            decision = view.decision if view is not None else None
            word, _ = _verdict_word(decision, gold_known)
            answer = f" {escape(str(decision.answer))}" if decision and decision.answer else ""
            outcomes.append(f"{method} <b>{word}</b>{answer}")
        words = f"this new sample: {' · '.join(outcomes)}; {LIVE_RESULT}"
    return f'<div class="rr-result rr-live-result" style="{_RESULT_STYLE}"><b>Live run</b>: {words}.</div>'
