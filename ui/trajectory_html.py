"""HTML of the agents and their trajectories, the pieces the arena panels are made of: each
agent's hue and mark, the legend, a chunk, who wrote which share of a trajectory (the speaker
strip), the truth meter's z line and its legend, and the card around one trajectory and its answer.
Pure functions, no gradio; every string a model or a user wrote goes through `html.escape`.

Colours: each agent has its own hue; honest agents get blues and greens, corrupted agents reds and
oranges, and every corrupted chunk also carries a warning marker, so the roles stay apart without
colour vision.
"""

from __future__ import annotations

from dataclasses import replace
from html import escape

from rrdemo.events import AnswerExtracted, Decision, TurnMeasured
from rrdemo.fold import FoldedChunk, FoldedTrajectory, TrajectorySpeakers
from ui.plain_math import plain_chunks
from ui.state import ArenaState

HONEST_HUES = ("#1d4ed8", "#047857", "#0e7490", "#4338ca", "#15803d", "#0369a1", "#6d28d9")
CORRUPTED_HUES = ("#dc2626", "#c2410c", "#be185d", "#a16207", "#9f1239", "#ea580c", "#e11d48")
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


def role_word(corrupted: bool) -> str:
    """What the panels call a seat: "honest" or "corrupted" (also its CSS class, `rr-honest`)."""
    return "corrupted" if corrupted else "honest"


def legend(agents: list[dict]) -> str:
    """One swatch per agent: its tag, role and model."""
    items = []
    for i, spec in enumerate(agents):
        hue, corrupted = agent_hue(i, agents), bool(spec["corrupted"])
        items.append(
            f'<span class="rr-legend-item rr-{role_word(corrupted)}" style="display:inline-flex;'
            f"align-items:center;gap:4px;margin:2px 10px 2px 0;padding:1px 6px;border-radius:4px;"
            f'background:{_tint(hue, corrupted)};border-left:4px solid {hue}">'
            f'<b style="color:{hue}">{escape(agent_label(i, agents))}</b>'
            f"<span>{role_word(corrupted)} · {escape(str(spec['model']))}</span></span>"
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
    classes = f"rr-chunk rr-{role_word(corrupted)}" + ("" if chunk.done else " rr-live")
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
        f'title="{escape(agent_label(chunk.agent, agents))} ({role_word(corrupted)}), turn {chunk.turn + 1}" '
        f'style="background:{_tint(hue, corrupted)};border-left:3px {border} {hue};'
        f'padding:0 2px;border-radius:2px">{tag}{escape(chunk.text)}{cursor}</span>'
    )


def answer_badge(
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


def speaker_strip(speakers: TrajectorySpeakers | None, agents: list[dict]) -> str:
    """One line: who wrote which share of an RR trajectory, a bar segment per agent in its hue."""
    if speakers is None or not speakers.total:
        return ""
    segments, words = [], []
    for a in speakers.order:
        hue, share = agent_hue(a, agents), speakers.share(a)
        role = role_word(bool(speakers.corrupted[a]))
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


def trajectory_card(
    tr: FoldedTrajectory,
    title: str,
    agents: list[dict],
    gold: bool,
    tags: bool,
    strip: str = "",
    stopped: bool = False,
) -> str:
    """One trajectory's card: its title, a strip above the text (the speaker strip, the z line),
    its chunks with their LaTeX made plain, and its answer."""
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
        f'padding-top:4px">Answer: {answer_badge(tr.answer, gold, stopped)}</div></div>'
    )
