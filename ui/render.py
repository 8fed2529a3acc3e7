"""HTML for the arena panels, drawn from an `ArenaState`. Pure functions, no gradio.

Every string a model or a user wrote goes through `html.escape`. Styles are inline so the panels
look the same wherever the HTML lands (the Space, a test server, a saved page). Colours: each agent
has its own hue; honest agents get blues and greens, corrupted agents reds and oranges, and every
corrupted chunk also carries a warning marker, so the roles stay apart without colour vision.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from html import escape

from rrdemo.config import RunConfig, beyond_paper
from rrdemo.events import METHODS, AnswerExtracted, Decision, TurnMeasured
from rrdemo.fold import FoldedChunk, FoldedTrajectory, MethodRecord, TrajectorySpeakers
from rrdemo.gallery import CellOutcome
from rrdemo.replay import RecordedUnit
from rrdemo.report.render import pct
from rrdemo.report.submission import ESTIMATORS
from ui.plain_math import plain_chunks, plain_math
from ui.state import ArenaState

HONEST_HUES = ("#1d4ed8", "#047857", "#0e7490", "#4338ca", "#15803d", "#0369a1", "#6d28d9")
CORRUPTED_HUES = ("#dc2626", "#c2410c", "#be185d", "#a16207", "#9f1239", "#ea580c", "#e11d48")
UPDATE_INTERVAL_S = (
    0.1  # at most ~10 renders a second: the browser keeps up, the page never freezes
)
HONEST_MARK = "●"
CORRUPTED_MARK = "⚠"

_CARD = (
    "border:1px solid #d4d4d8;border-radius:8px;padding:8px 10px;background:#ffffff;"
    "color:#18181b;min-width:0"
)
_TEXT = (
    "white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,Menlo,Consolas,monospace;"
    "font-size:12.5px;line-height:1.55;max-height:340px;overflow-y:auto"
)


def agent_hue(agent: int, agents: list[dict]) -> str:
    """Agent `agent`'s colour: the k-th honest agent gets the k-th honest hue, likewise corrupted."""
    corrupted = bool(agents[agent]["corrupted"]) if agent < len(agents) else False
    rank = sum(1 for a in agents[:agent] if bool(a["corrupted"]) == corrupted)
    palette = CORRUPTED_HUES if corrupted else HONEST_HUES
    return palette[rank % len(palette)]


def _tint(hue: str, corrupted: bool) -> str:
    return hue + ("2e" if corrupted else "1c")  # 8-digit hex: the hue at 18% / 11% opacity


def agent_label(agent: int, agents: list[dict]) -> str:
    corrupted = agent < len(agents) and bool(agents[agent]["corrupted"])
    return f"A{agent + 1} {CORRUPTED_MARK if corrupted else HONEST_MARK}"


def _role(corrupted: bool) -> str:
    return "corrupted" if corrupted else "honest"


def legend(agents: list[dict]) -> str:
    """One swatch per agent: its tag, role and model."""
    items = []
    for i, spec in enumerate(agents):
        hue, corrupted = agent_hue(i, agents), bool(spec["corrupted"])
        items.append(
            f'<span class="rr-legend-item rr-{_role(corrupted)}" style="display:inline-flex;'
            f"align-items:center;gap:4px;margin:2px 10px 2px 0;padding:1px 6px;border-radius:4px;"
            f'background:{_tint(hue, corrupted)};border-left:4px solid {hue}">'
            f'<b style="color:{hue}">{escape(agent_label(i, agents))}</b>'
            f"<span>{_role(corrupted)} · {escape(str(spec['model']))}</span></span>"
        )
    return (
        '<div class="rr-legend" style="font-size:12.5px;margin:4px 0 8px 0">'
        f"<b>Agents:</b> {''.join(items)}"
        f'<span style="color:#52525b"> {HONEST_MARK} honest, {CORRUPTED_MARK} corrupted; '
        "the tag on each chunk is agent·turn</span></div>"
    )


def chunk_html(chunk: FoldedChunk, agents: list[dict], show_tag: bool = True) -> str:
    """One chunk: tinted by its agent, a left bar marks the turn boundary, a tag names agent and turn."""
    hue = agent_hue(chunk.agent, agents)
    corrupted = chunk.corrupted
    classes = f"rr-chunk rr-{_role(corrupted)}" + ("" if chunk.done else " rr-live")
    border = "solid" if chunk.done else "dashed"
    tag = ""
    if show_tag:
        mark = CORRUPTED_MARK if corrupted else HONEST_MARK
        tag = (
            f'<sup style="color:{hue};font-weight:700;font-family:system-ui,sans-serif;'
            f'font-size:10px;margin-right:2px">{mark}A{chunk.agent + 1}·t{chunk.turn + 1}</sup>'
        )
    cursor = "" if chunk.done else '<span style="color:#71717a">▌</span>'
    return (
        f'<span class="{classes}" data-agent="{chunk.agent}" data-turn="{chunk.turn}" '
        f'title="{escape(agent_label(chunk.agent, agents))} ({_role(corrupted)}), turn {chunk.turn + 1}" '
        f'style="background:{_tint(hue, corrupted)};border-left:3px {border} {hue};'
        f'padding:0 2px;border-radius:2px">{tag}{escape(chunk.text)}{cursor}</span>'
    )


def _answer_badge(
    answer: AnswerExtracted | Decision | None, gold_known: bool, stopped: bool = False
) -> str:
    if answer is None:
        word = "stopped" if stopped else "writing…"
        return f'<span class="rr-unfinished" style="color:#71717a">{word}</span>'
    value = answer.answer
    if value is None:
        return '<span class="rr-verdict-none" style="color:#71717a">no answer</span>'
    if answer.fooled:
        colour, word = "#b91c1c", "fooled"
    elif answer.correct:
        colour, word = "#15803d", "correct"
    elif gold_known:
        colour, word = "#a16207", "wrong"
    else:
        colour, word = "#3f3f46", "answered"
    return (
        f'<b style="color:{colour}">{escape(str(value))}</b> '
        f'<span style="color:{colour};font-size:11px">({word})</span>'
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
        decision = _answer_badge(view.decision, gold_known)
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


def speaker_strip(speakers: TrajectorySpeakers | None, agents: list[dict]) -> str:
    """One line: who wrote which share of an RR trajectory, a bar segment per agent in its hue."""
    if speakers is None or not speakers.total:
        return ""
    segments, words = [], []
    for a in speakers.order:
        hue, share = agent_hue(a, agents), speakers.share(a)
        role = _role(bool(speakers.corrupted[a]))
        tip = f"{agent_label(a, agents)} {role}: {speakers.tokens[a]} tokens ({100 * share:.0f}%)"
        segments.append(
            f'<span class="rr-share rr-{role}" data-agent="{a}" title="{escape(tip)}" '
            f'style="display:inline-block;height:8px;width:{100 * share:.1f}%;background:{hue}"></span>'
        )
        words.append(
            f'<span style="color:{hue}">{escape(agent_label(a, agents))} {100 * share:.0f}%</span>'
        )
    kind = speakers.kind
    honest = 100 * speakers.honest_tokens / speakers.total
    return (
        f'<div class="rr-speakers" data-kind="{kind}" style="font-size:11.5px;margin:2px 0 4px 0">'
        f'<div style="display:flex;width:100%;border-radius:3px;overflow:hidden;'
        f'background:#e4e4e7">{"".join(segments)}</div>'
        f'<div style="color:#52525b">written by {" · ".join(words)} '
        f"(<b>{kind}</b>, honest {honest:.0f}% of tokens)</div></div>"
    )


_Z_WIDTH, _Z_HEIGHT = 240, 44  # the z line's drawing box (px)
_Z_DASH = {"honest": "", "corrupted": "4 3"}  # honest reader solid, corrupted reader dashed


def z_line(measures: list[TurnMeasured], agents: list[dict]) -> str:
    """The truth meter's z per turn as a small SVG: one line per reader (honest solid, corrupted
    dashed), each step coloured by the agent who wrote that turn; the grey line is z = 0 (gold
    and target equally likely). Empty without readings."""
    points = [m for m in measures if m.readers]
    if len(points) < 2:
        return ""
    zs = [r["z"] for m in points for r in m.readers.values()]
    low, high = min(min(zs), 0.0), max(max(zs), 0.0)
    span, last = (high - low) or 1.0, max(m.n_tokens for m in points) or 1

    def xy(m: TurnMeasured, z: float) -> tuple[float, float]:
        x = 2 + (_Z_WIDTH - 4) * m.n_tokens / last
        return x, 2 + (_Z_HEIGHT - 4) * (high - z) / span

    zero = xy(points[0], 0.0)[1]
    parts = [
        f'<line x1="0" x2="{_Z_WIDTH}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#a1a1aa" '
        'stroke-width="0.8"/>'
    ]
    words = []
    for reader in ("honest", "corrupted"):
        chain = [m for m in points if reader in m.readers]
        for before, after in zip(chain, chain[1:], strict=False):
            (x0, y0), (x1, y1) = (
                xy(before, before.readers[reader]["z"]),
                xy(after, after.readers[reader]["z"]),
            )
            hue = agent_hue(after.agent, agents) if after.agent is not None else "#71717a"
            parts.append(
                f'<line class="rr-zstep" data-reader="{reader}" data-agent="{after.agent}" '
                f'data-turn="{after.turn}" data-z="{after.readers[reader]["z"]}" '
                f'x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="{hue}" '
                f'stroke-width="2" stroke-dasharray="{_Z_DASH[reader]}"/>'
            )
        if chain:
            words.append(f"{reader} reader {chain[-1].readers[reader]['z']:+.2f}")
    return (
        f'<div class="rr-zline" style="font-size:11px;color:#52525b;margin:0 0 4px 0">'
        f'<svg width="{_Z_WIDTH}" height="{_Z_HEIGHT}" style="display:block;background:#f4f4f5;'
        f'border-radius:3px">{"".join(parts)}</svg>z: {escape(", ".join(words))}</div>'
    )


METER_LEGEND = (
    "<b>Truth meter</b> (the small chart in each answer): z = logit p(gold) - logit p(target) "
    "after each turn, read by an honest reader (solid line) and a corrupted one (dashed); above "
    "the grey line the gold answer is the likelier; each step in the colour of the agent who "
    "wrote that turn."
)


def meter_legend(state: ArenaState) -> str:
    """The truth meter explained once, under the panels' answers (each chart shows only its
    values); empty when no answer has readings to draw."""
    drawn = any(
        len([m for m in tr.measures if m.readers]) >= 2
        for view in state.methods.values()
        for tr in view.trajectories.values()
    )
    if not drawn:
        return ""
    return (
        f'<div class="rr-meter-legend" style="font-size:11.5px;color:#52525b;margin-top:8px">'
        f"{METER_LEGEND}</div>"
    )


def _trajectory_card(
    tr: FoldedTrajectory,
    title: str,
    agents: list[dict],
    gold: bool,
    tags: bool,
    strip: str = "",
    stopped: bool = False,
) -> str:
    shown = [
        replace(c, text=t)
        for c, t in zip(tr.chunks, plain_chunks([c.text for c in tr.chunks]), strict=True)
    ]
    body = "".join(chunk_html(c, agents, show_tag=tags) for c in shown) or (
        '<span style="color:#a1a1aa">waiting for the first token…</span>'
    )
    return (
        f'<div class="rr-trajectory" data-index="{tr.index}" style="{_CARD}">'
        f'<div style="font-size:12.5px;margin-bottom:4px">{title}</div>{strip}'
        f'<div style="{_TEXT}">{body}</div>'
        f'<div class="rr-answer" style="margin-top:6px;font-size:12.5px;border-top:1px solid #e4e4e7;'
        f'padding-top:4px">Answer: {_answer_badge(tr.answer, gold, stopped)}</div></div>'
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
            f"<span>{_role(corrupted)}</span>"
        )
        strip = z_line(tr.measures, agents)
        cards.append(_trajectory_card(tr, title, agents, gold, False, strip, state.stopped))
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
        cards.append(_trajectory_card(tr, title, agents, gold, True, strip, state.stopped))
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
