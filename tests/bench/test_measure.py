"""The accounting of bench.measure, on recorded passes: who spoke and how often the prompt changed."""

from __future__ import annotations

from bench.measure import prefill_ratios, speaker_stats


def test_speakers_and_prompt_changes_are_counted_from_the_turns():
    prompts = [["corrupt", "corrupt", "honest"], ["c", "c", "h"]]  # per question, per agent
    result = {
        "trajectories": [  # (question, writers, tokens, writer of each turn)
            (0, [0, 1, 2], 6, [2, 0, 1]),  # honest -> corrupted (change), corrupted -> corrupted
            (0, [0], 6, [0]),  # one turn: nothing to change
            (1, [1, 2], 6, [1, 2, 1, 2]),  # three changes
        ]
    }
    stats = speaker_stats(result, prompts)
    assert stats["speakers_per_trajectory"] == round((3 + 1 + 2) / 3, 3)
    assert stats["turns"] == 8 and stats["prompt_changes"] == 4
    assert stats["prompt_change_share"] == round(4 / 5, 3)


def test_prefill_is_compared_with_the_speakers_prompts_and_with_everyones():
    prompts = [[10, 20, 30], [5, 6, 7]]  # prompt tokens per question, per agent
    result = {
        "prefill_tokens": 50,
        "trajectories": [(0, [0, 1], 6, [0, 1]), (1, [2], 4, [2])],
    }
    ratios = prefill_ratios(result, prompts)
    assert ratios["speakers_prompt_tokens"] == (10 + 20) + 7
    assert ratios["prefill_tokens_per_trajectory"] == 50 / 2
    assert ratios["ratio_speakers"] == round(50 / ((10 + 20 + 6) + (7 + 4)), 3)
    assert ratios["ratio_all_agents"] == round(50 / ((60 + 6) + (18 + 4)), 3)
