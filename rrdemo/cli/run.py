"""`python -m rrdemo run`: MAJ and RRMaj on one question, streamed to the terminal."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

from rrdemo.config import BACKEND_CHOICES, ORDERS, STRENGTHS, RunConfig, beyond_paper
from rrdemo.defaults import EXPERIMENT_DEFAULTS, INTERACTIVE_DEFAULTS
from rrdemo.errors import RRError
from rrdemo.events import (
    METHODS,
    AnswerExtracted,
    ChunkWritten,
    ComputeUsed,
    Decision,
    Event,
    RunStarted,
    TurnMeasured,
    Vote,
)
from rrdemo.fold import Fold, SpeakerTally
from rrdemo.seats import homogeneous_agents, with_corrupted_seats
from rrdemo.settings import add_flags, given
from rrdemo.speakers import silence_warning

# Honest agents in cool colours, corrupted agents in warm ones (ANSI 256-colour codes).
HONEST_COLOURS = (39, 42, 33, 48, 75, 114, 27, 36)
CORRUPTED_COLOURS = (196, 208, 201, 160, 214, 199, 124, 166)


def register(subparsers) -> None:
    """Add the `run` command: its options in groups (question, ensemble, corruption and protocol,
    output)."""
    p = subparsers.add_parser(
        "run",
        help="run MAJ and RRMaj on one question and stream the chunks",
        description="Run MAJ and RRMaj side by side on one question with c of N agents corrupted.",
    )
    _question_options(p)
    _ensemble_options(p)
    _protocol_options(p)
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print every event as a JSON line")
    o.add_argument("--deltas", action="store_true", help="with --json, include token-level deltas")
    o.add_argument("--no-color", action="store_true", help="plain text (also when NO_COLOR is set)")
    p.set_defaults(func=handle)


def _question_options(p) -> None:
    """Which question: one of your own, or one of a task's."""
    q = p.add_argument_group("question")
    q.add_argument(
        "--question", help="a question of your own (multiple choice if it lists (A) ... options)"
    )
    q.add_argument("--gold", help="the correct answer of --question, if known (e.g. '(B)' or '42')")
    q.add_argument(
        "--task",
        default="custom",
        help="benchmark to draw from: gsm8k, aqua, math500, logic3, logic7, track7, or demo "
        "(our own 40 easy questions)",
    )
    q.add_argument(
        "--index", type=int, default=0, help="which question of --task (0-based, seeded order)"
    )


def _ensemble_options(p) -> None:
    """Who answers: the models, N, c and which seats, or an ensemble file."""
    d = INTERACTIVE_DEFAULTS
    e = p.add_argument_group("ensemble")
    e.add_argument(
        "--models",
        default="smollm2",
        help="model for every agent, or a comma list cycled over the seats",
    )
    e.add_argument("--revision", help="hub revision of the model(s)")
    e.add_argument(
        "--agents", "-n", type=int, default=d.n, help=f"N, the number of agents (default {d.n})"
    )
    e.add_argument(
        "--corrupt",
        "-c",
        type=int,
        default=d.c,
        help=f"c, corrupted agents (default {d.c}: the {d.label} setting)",
    )
    e.add_argument(
        "--corrupt-seats", help="which seats are corrupted, e.g. 0,2,4 (default: the first c)"
    )
    e.add_argument("--ensemble", help="an ensemble file (YAML/JSON) describing agents and backends")
    e.add_argument(
        "--backend",
        default="auto",
        choices=BACKEND_CHOICES,
        help="engine of the offline GGUF models (default auto: llama.cpp when installed, else "
        "transformers); hub models always use transformers",
    )


def _protocol_options(p) -> None:
    """The injection, the protocol's settings (the paper's), then those beyond the paper."""
    d = INTERACTIVE_DEFAULTS
    c = p.add_argument_group("corruption")
    c.add_argument(
        "--strength",
        choices=STRENGTHS,
        help=f"injection strength (default {d.strength})",
    )
    c.add_argument(
        "--template", help="custom injection text with a {target} slot (implies --strength custom)"
    )
    c.add_argument("--target", help="the wrong answer to push (default: a seeded distractor)")
    r = p.add_argument_group(
        "protocol",
        "defaults: rrdemo.defaults.INTERACTIVE_DEFAULTS (an --ensemble file's own settings win)",
    )
    r.add_argument(
        "--k",
        type=int,
        help=f"K, tokens per RR turn (default {d.k}; the paper's is {EXPERIMENT_DEFAULTS.k})",
    )
    r.add_argument("--m", type=int, help="M, RR trajectories voted by RRMaj (default N)")
    r.add_argument(
        "--max-tokens",
        "-L",
        type=int,
        help=f"L, new tokens per trajectory/answer (default {d.max_tokens})",
    )
    r.add_argument(
        "--order",
        choices=ORDERS,
        help="RR speaking order: a seeded shuffle per trajectory, or seat order (the paper's "
        f"agent t mod N) (default {d.order})",
    )
    r.add_argument("--temperature", type=float, help=f"default {d.temperature}")
    r.add_argument("--top-p", type=float, help=f"default {d.top_p}")
    r.add_argument("--seed", type=int, help=f"default {d.seed}")
    r.add_argument("--methods", default="MAJ,RRMaj", help="MAJ, RRMaj or both (default)")
    add_flags(p.add_argument_group("beyond the paper"), beyond_paper())


_SETTINGS = ("strength", "k", "max_tokens", "order")
_SAMPLING = ("temperature", "top_p", "seed")


def _config(args) -> tuple[RunConfig, object | None]:
    """The RunConfig the flags describe, and the ensemble's model source if one was given.

    A flag left out is None: it takes the ensemble file's setting when there is one, else
    `INTERACTIVE_DEFAULTS` with what the models need (`Defaults.for_models`); a flag given on
    the command line always wins.
    """
    chosen = {name: getattr(args, name) for name in _SETTINGS if getattr(args, name) is not None}
    chosen.update(given(args, beyond_paper()))
    if args.template:
        chosen.update(strength="custom", custom_template=args.template)
    if args.m is not None:
        chosen["m"] = args.m
    sampling_given = {
        name: getattr(args, name) for name in _SAMPLING if getattr(args, name) is not None
    }
    if args.ensemble:
        from rrdemo.ensemble import load_ensemble  # loaded on use: every command builds this parser

        ensemble = load_ensemble(args.ensemble)
        config = ensemble.config
        sampling = replace(config.sampling, **sampling_given)
        return config.with_(**chosen, sampling=sampling), ensemble
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    agents = homogeneous_agents(models, args.agents, args.corrupt, revision=args.revision)
    if args.corrupt_seats is not None:
        if not args.corrupt_seats.strip(" ,"):
            raise RRError(
                "--corrupt-seats is empty: name the corrupted seats like 0,2,4 "
                "(for no corrupted agent, give --corrupt 0 instead)"
            )
        agents = with_corrupted_seats(agents, args.corrupt_seats)
    from rrdemo.tasks import canonical_name  # loaded on use: every command builds this parser

    task = None if args.question is not None else canonical_name(args.task)
    defaults = INTERACTIVE_DEFAULTS.for_models(models, task)
    return defaults.run_config(agents, **chosen, **sampling_given), None


def _question(args, seed: int):
    from rrdemo.tasks import get_task, load_questions  # loaded on use, like the models below

    if args.question is not None:
        if not args.question.strip():
            raise RRError("--question is empty; type a question or use --task with --index")
        task = get_task("custom")
        return task, task.question(args.question, gold=args.gold)
    if args.task == "custom":
        raise RRError(
            "give --question TEXT, or --task NAME (gsm8k, aqua, math500, logic3, logic7, track7)"
        )
    task = get_task(args.task)
    size = len(load_questions(task, seed=seed))
    if not 0 <= args.index < size:
        raise RRError(
            f"--index {args.index} is out of range: {task.name} has {size} questions, "
            f"so --index takes 0 to {size - 1}"
        )
    questions = load_questions(task, n=args.index + 1, seed=seed)
    return task, questions[args.index]


def handle(args) -> int:
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise RRError(f"--methods takes MAJ, RRMaj or MAJ,RRMaj; got {args.methods!r}")
    config, ensemble = _config(args)
    task, question = _question(args, config.sampling.seed)
    if "RRMaj" in methods:  # before anything loads: agents the settings leave without a turn
        warning = silence_warning(config, [question.qid])
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
    from rrdemo.backends.choice import with_backends
    from rrdemo.backends.pool import ModelPool
    from rrdemo.backends.registry import resolve

    served = set(ensemble.served) if ensemble is not None else set()
    config = with_backends(config, args.backend, served)
    from rrdemo.protocols import run_question

    pool = ModelPool()
    if ensemble is not None:
        ensemble.register(pool)
    else:
        for agent in config.agents:  # a typo fails now, before anything loads
            resolve(agent.model)
    from rrdemo.memory import check_memory

    check_memory([config], pool, public=False, methods=methods)  # before anything loads
    if args.target and config.strength != "none":
        target = task.extract(args.target) or args.target
    else:
        target = None
    printer = (
        _JsonPrinter(args.deltas) if args.json else _TextPrinter(config, colour=_use_colour(args))
    )
    from rrdemo.pace import Pace, question_time

    expected = question_time(config, task.name, methods, backend=config.agents[0].backend)
    if not args.json:
        print(f"loading {', '.join(sorted({a.model for a in config.agents}))} ...", file=sys.stderr)
        print(expected.line().replace("**", ""), file=sys.stderr)
    shown, pace = Fold(), None
    for event in run_question(config, question, task, pool, methods=methods, target=target):
        pace = pace or Pace(expected)  # from the first event: the models are loaded
        shown.apply(event)
        printer(event)
    if pace is not None and not args.json:
        print(f"{pace.summary()}, after loading", file=sys.stderr)
    if "RRMaj" in methods:
        if args.json:
            print(json.dumps(shown.speakers.to_dict(), ensure_ascii=False), flush=True)
        else:
            print(speaker_summary(shown.speakers, config))
    return 0


def speaker_summary(speakers: SpeakerTally, config: RunConfig) -> str:
    """Who wrote each RR trajectory: a headline, then one line per trajectory with token shares."""
    lines = [f"=== RRMaj speakers: {speakers.headline()}"]
    for j, tr in sorted(speakers.trajectories.items()):
        shares = ", ".join(
            f"agent {a} ({'corrupted' if tr.corrupted[a] else 'honest'}) "
            f"{tr.tokens[a]} tok {100 * tr.share(a):.0f}%"
            for a in tr.order
        )
        lines.append(f"    #{j} {tr.kind}: {shares or 'no tokens'}")
    return "\n".join(lines)


def _use_colour(args) -> bool:
    return not args.no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()


class _JsonPrinter:
    def __init__(self, deltas: bool) -> None:
        self.deltas = deltas

    def __call__(self, event: Event) -> None:
        if event.kind == "token_delta" and not self.deltas:
            return
        print(json.dumps(event.to_dict(), ensure_ascii=False), flush=True)


def answer_mark(event: AnswerExtracted) -> str:
    """One answer's word: correct / wrong / no answer, and where it is the target, whose it is.
    A MAJ answer is one agent's own: an honest agent never saw the target, so its target answer
    is a coincidence, not a fooling; a corrupted one obeyed. An RR answer is the shared text's."""
    if event.correct:
        return "correct"
    if not event.fooled:
        return "wrong" if event.answer else "no answer"
    if event.method != "MAJ":
        return "the target: fooled"
    return "the target: obeyed" if event.last_corrupted else "the target, by its own reasoning"


class _TextPrinter:
    """Chunks as they are written, each headed by who wrote it; then answers, votes and decisions."""

    def __init__(self, config: RunConfig, colour: bool) -> None:
        self.config = config
        self.colour = colour

    def paint(self, text: str, agent: int, corrupted: bool) -> str:
        if not self.colour:
            return text
        palette = CORRUPTED_COLOURS if corrupted else HONEST_COLOURS
        return f"\033[38;5;{palette[agent % len(palette)]}m{text}\033[0m"

    def role(self, agent: int) -> str:
        corrupted = self.config.agents[agent].corrupted
        return self.paint(
            f"agent {agent} ({'CORRUPTED' if corrupted else 'honest'})", agent, corrupted
        )

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            cfg = self.config
            print(
                f"\n=== {event.method} · {cfg.label} (rho={cfg.rho:.1f}) · {cfg.strength} · N={cfg.n} "
                f"K={cfg.k} M={cfg.resolved_m} L={cfg.max_tokens} {cfg.order} order · gold={event.gold} target={event.target} "
                f"· config {event.config_hash}"
            )
        elif isinstance(event, ChunkWritten):
            where = (
                f"answer {event.trajectory}"
                if event.method == "MAJ"
                else f"trajectory {event.trajectory} turn {event.turn}"
            )
            print(
                f"--- {event.method} {where} · {self.role(event.agent)} · {event.n_tokens} tokens"
            )
            print(self.paint(event.text, event.agent, event.corrupted), flush=True)
        elif isinstance(event, TurnMeasured):
            where = "answer" if event.method == "MAJ" else "trajectory"
            readings = " · ".join(
                f"{role} reader z {r['z']:+.2f} (p_gold {r['p_gold']:.3f}, p_target {r['p_target']:.3f})"
                for role, r in event.readers.items()
            )
            print(
                f"    meter {event.method} {where} {event.trajectory} @{event.n_tokens} tok: {readings}"
            )
        elif isinstance(event, AnswerExtracted):
            mark = answer_mark(event)
            print(
                f"    {event.method} #{event.trajectory}: answer {event.answer} ({mark}); last speaker {self.role(event.last_agent)}"
            )
        elif isinstance(event, Vote):
            print(f"    {event.method} vote: {event.counts} (abstained {event.abstained})")
        elif isinstance(event, Decision):
            verdict = (
                "correct"
                if event.correct
                else ("FOOLED" if event.fooled else "wrong" if event.answer else "no answer")
            )  # the ensemble's decision: the target means the injection won the vote
            tie = f" (tie between {', '.join(event.tied)} broken by seed)" if event.tied else ""
            print(f">>> {event.method} decision: {event.answer} -> {verdict}{tie}")
        elif isinstance(event, ComputeUsed):
            print(
                f"    {event.method} compute: {event.decode_tokens} decode + {event.prefill_tokens} prefill tokens, {event.wall_s:.1f} s"
            )
