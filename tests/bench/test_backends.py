"""The backends benchmark: the Arena on several questions. Bad options are refused before any
model loads; the speedups are computed from the medians as documented (checked by hand); the
table says all three; a tiny real pass on llama.cpp fills every new key."""

from __future__ import annotations

import pytest

from bench.backends import (
    arena_pass,
    arena_questions,
    main,
    render_table,
    run_benchmark,
    speedups,
    summarize_questions,
)
from bench.ratios import at_least, at_most, ratio
from rrdemo.backends.llamacpp_rows import HEADS
from tests.support.fakes import FakeBackend, obeys_injection
from tests.support.llama import cached_keys, llama, needs_llama


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--arena-questions", "0"], "--arena-questions must be at least 1"),
        (["--arena-questions", "-2"], "--arena-questions must be at least 1"),
        (["--arena-questions", "100000"], "does not exist"),  # more than Logic3 has
    ],
)
def test_bad_arena_questions_exit_2_with_one_line_and_write_nothing(argv, words, capsys, tmp_path):
    out, readme = tmp_path / "r.json", tmp_path / "README.md"
    assert main([*argv, "--out", str(out), "--readme", str(readme)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and words in err
    assert not out.exists() and not readme.exists()


def test_arena_questions_are_the_arenas_own_picks_with_one_config():
    picked = arena_questions("smollm2", 3)
    assert [q.qid for _, q, _ in picked] == ["logic3-0000", "logic3-0001", "logic3-0002"]
    assert {t.name for _, _, t in picked} == {"logic3"}
    configs = {c for c, _, _ in picked}
    assert len(configs) == 1  # the Arena's default run, whatever the question
    config = configs.pop()
    assert (config.n, config.c, config.k, config.max_tokens, config.order) == (
        5,
        3,
        4,
        256,
        "shuffled",
    )


def _pass(wall: float, decode: int, prefill: int) -> dict:
    return {"wall_s": wall, "decode_tokens": decode, "prefill_tokens": prefill}


def test_summarize_questions_sums_per_round_and_keeps_the_median_rounds_walls():
    rounds = [
        [_pass(2.0, 10, 5), _pass(3.0, 20, 6)],  # sum 5.0
        [_pass(1.0, 10, 5), _pass(1.5, 20, 6)],  # sum 2.5
        [_pass(4.0, 12, 5), _pass(4.0, 20, 6)],  # sum 8.0
    ]
    out = summarize_questions(rounds)
    assert out["wall_s"] == 5.0 and out["wall_s_all"] == [5.0, 2.5, 8.0]
    assert out["decode_tokens"] == 30 and out["prefill_tokens"] == 11  # first round's sums
    assert out["decode_tokens_all"] == [30, 30, 32]
    assert out["decode_tokens_per_s"] == 6.0  # 30 / 5.0
    assert out["questions"] == 2 and out["median_round"] == 1
    assert out["wall_s_per_question"] == [2.0, 3.0]
    assert out["wall_s_per_question_all"] == [[2.0, 3.0], [1.0, 1.5], [4.0, 4.0]]
    assert out["decode_tokens_per_question"] == [10, 20]
    # two rounds: the median is their mean; the per-question walls are the first round's
    assert summarize_questions(rounds[1:])["wall_s"] == 5.25
    assert summarize_questions(rounds[1:])["wall_s_per_question"] == [1.0, 1.5]


def _engine(maj, rrmaj, arena, arena_tokens, questions_wall, questions_tokens) -> dict:
    def summary(wall, decode):
        return {
            "wall_s": wall,
            "decode_tokens": decode,
            "prefill_tokens": 100,
            "decode_tokens_per_s": round(decode / wall, 1),
        }

    return {
        "load_s": 1.0,
        "maj": summary(maj, 1280),
        "rrmaj": summary(rrmaj, 1280),
        "rrmaj_over_maj": round(rrmaj / maj, 3),
        "arena": summary(arena, arena_tokens),
        "arena_questions": summary(questions_wall, questions_tokens),
    }


def hand_results() -> dict:
    """Numbers whose ratios can be checked by hand (not a real run)."""
    results = {
        "engines": {
            "transformers": _engine(24.0, 36.0, 9.0, 180, 30.0, 300),
            "llamacpp": _engine(10.0, 15.0, 4.5, 270, 10.0, 150),
        },
        "settings": {
            "model": "smollm2",
            "label": "3c2t",
            "strength": "strong",
            "n": 5,
            "m": 5,
            "order": "shuffled",
            "temperature": 0.7,
            "seed": 0,
            "task": "logic3",
            "question": "logic3-0000",
            "k": 50,
            "max_tokens": 256,
            "repeats": 3,
            "arena_k": 4,
            "arena_max_tokens": 256,
            "arena_questions": 5,
        },
        "machine": {
            "cpu": "cpu",
            "cores": 2,
            "torch": "t",
            "torch_threads": 2,
            "llama_cpp": "l",
            "llama_threads": 2,
            "load_average_start": "1",
            "load_average_end": "2",
        },
    }
    results["comparison"] = speedups(results)
    return results


def test_speedups_are_ratios_of_the_median_walls_and_of_the_walls_per_decoded_token():
    assert speedups(hand_results()) == {
        "arena_speedup_llamacpp_over_transformers": 2.0,  # 9.0 / 4.5
        "arena_questions_speedup": 3.0,  # 30 / 10
        "arena_per_token_speedup": 1.5,  # (30 / 300) / (10 / 150) = 0.1 / 0.0667
        "equal_budget_speedup_llamacpp_over_transformers": 2.4,  # (24 + 36) / (10 + 15)
    }


def test_the_table_gives_the_three_speedups_and_says_why_they_differ():
    table = render_table(hand_results())
    header = next(line for line in table.splitlines() if line.startswith("| engine"))
    assert "| Arena, question 0: s | tok/s | Arena, 5 questions: s | tok/s |" in header
    rows = [line for line in table.splitlines() if line.startswith("| transformers")]
    assert rows == [
        "| transformers | 1.0 | 24.0 | 36.0 | 1.5 | 53.3 | 35.6 | 100 | 9.0 | 20.0 | 30.0 | 10.0 |"
    ]
    assert "questions 0-4" in table
    assert "(target: at least 3x faster end to end)" in table
    assert "**2.0x** end to end on question 0" in table
    assert "**3.0x** end to end on questions 0-4 (summed walls)" in table
    assert "**1.5x** per decoded token" in table
    assert "at an equal budget: 2.4x" in table
    assert "sample different texts" in table
    assert "question 0 decoded 180 tokens on transformers and 270 on llama.cpp" in table
    assert "the 5 questions 300 and 150" in table


class _Clock:
    """A `time` stand-in whose perf_counter advances by `step` seconds per read: the benchmark's
    walls are then exact, whatever the machine is doing (0.0 each with step 0)."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_ratio_of_a_zero_or_missing_time_is_undefined():
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(1.0, 3.0, 2) == 0.33
    assert ratio(1.0, 0.0) is None and ratio(0.0, 0.0) is None and ratio(1.0, -1.0) is None
    assert ratio(None, 1.0) is None and ratio(1.0, None) is None
    assert at_least(None, 3) is None and at_most(None, 1.05) is None
    assert at_least(3.0, 3) is True and at_most(1.06, 1.05) is False


@pytest.mark.parametrize("step", [0.0, 0.25])
def test_run_benchmark_fills_every_new_key(monkeypatch, step):
    """The wiring, on scripted engines: "transformers" writes two sentences per turn, "llamacpp" one.
    The clock is scripted too: with every wall 0.0 (step 0, what fast fakes used to measure now
    and then) every ratio is undefined (None) instead of a ZeroDivisionError; with a clock that
    moves they are numbers, and the table renders either way."""
    import bench.backends as bb

    monkeypatch.setattr(bb, "time", _Clock(step))
    fakes = {
        "transformers": FakeBackend(
            "smollm2", lambda p: obeys_injection(p) + " " + obeys_injection(p)
        ),
        "llamacpp": FakeBackend("smollm2", obeys_injection),
    }
    monkeypatch.setattr(bb, "load", lambda engine, model: (fakes[engine], 0.5))
    opts = bb.argparse.Namespace(model="smollm2", k=4, max_tokens=8, repeats=3, arena_questions=2)
    results = run_benchmark(opts, log=lambda *_: None)
    assert results["settings"]["arena_questions"] == 2
    assert results["settings"]["arena_question_ids"] == ["logic3-0000", "logic3-0001"]
    for engine in ("transformers", "llamacpp"):
        e = results["engines"][engine]
        assert {"maj", "rrmaj", "arena", "arena_questions"} <= set(e)
        aq = e["arena_questions"]
        assert (
            aq["questions"] == 2 and len(aq["wall_s_all"]) == 3 and aq["median_round"] in (1, 2, 3)
        )
        assert [len(walls) for walls in aq["wall_s_per_question_all"]] == [2, 2, 2]
        assert aq["wall_s_per_question"] == aq["wall_s_per_question_all"][aq["median_round"] - 1]
        # question 0 of the Q questions is the Arena row's own run
        assert aq["decode_tokens_per_question"][0] == e["arena"]["decode_tokens"] > 0
        assert aq["decode_tokens"] == sum(aq["decode_tokens_per_question"])
        assert aq["decode_tokens_all"] == [aq["decode_tokens"]] * 3
        assert fakes[engine].fixed_length is False  # the Arena's run allows end-of-sequence
    t, ll = results["engines"]["transformers"], results["engines"]["llamacpp"]
    assert t["arena_questions"]["decode_tokens"] > ll["arena_questions"]["decode_tokens"]
    c = results["comparison"]
    assert c == speedups(results)
    assert set(results["targets"]) == {
        "arena_speedup_at_least_3",
        "arena_questions_speedup_at_least_3",
        "llamacpp_rrmaj_over_maj_at_most_1.05",
    }
    if step == 0:
        assert set(c.values()) == {None} and set(results["targets"].values()) == {None}
        for engine in ("transformers", "llamacpp"):
            assert results["engines"][engine]["rrmaj_over_maj"] is None
    else:
        assert None not in c.values() and None not in results["targets"].values()
        assert results["targets"]["arena_questions_speedup_at_least_3"] == (
            c["arena_questions_speedup"] >= 3
        )
        for engine in ("transformers", "llamacpp"):
            assert results["engines"][engine]["rrmaj_over_maj"] > 0
    assert "Arena, 2 questions: s" in render_table(results)
    assert "Arena, 2 questions: s" in render_table(results)


@needs_llama
def test_the_arenas_run_on_two_questions_on_llama_cpp():
    """A real pass, shortened to L = 8: both questions decode, EOS allowed, nothing but the
    agents' prompts (heads) left cached."""
    from rrdemo.backends.pool import ModelPool

    backend = llama(ModelPool(), "smollm2")
    picked = [(c.with_(max_tokens=8), q, t) for c, q, t in arena_questions("smollm2", 2)]
    outs = arena_pass(backend, picked)
    assert len(outs) == 2
    for out in outs:  # N answers and M trajectories of at most L tokens each
        assert 0 < out["decode_tokens"] <= 10 * 8 and out["prefill_tokens"] > 0
        assert out["wall_s"] > 0
    assert summarize_questions([outs])["decode_tokens"] == sum(o["decode_tokens"] for o in outs)
    assert {key[0] for key in cached_keys(backend)} == {HEADS}
