"""Hand-built outcome rows for the analysis tests: the consensus trap, whose right answers follow from the scenario."""

from __future__ import annotations

from rrdemo.runs.log import Outcome

GOLD, TARGET, OTHER = "(B)", "(C)", "(A)"


def row(c, n, qid, method, j, key, *, corrupted, task="logic3", k=4, m_star=5, strength="strong"):
    return Outcome(
        condition=f"{task}:{c}c{n - c}t:k{k}:{strength}",
        ensemble="m",
        task=task,
        strength=strength,
        k=k,
        max_tokens=64,
        n=n,
        c=c,
        m=m_star,
        question_id=qid,
        method=method,
        trajectory=j,
        vote_key=key,
        correct=key == GOLD,
        corrupted=corrupted,
    )


def trap(c, n=5, questions=8, m_star=5, rr_right=None, task="logic3", k=4):
    """The consensus trap: every corrupted MAJ answer is the target, every truthful one the gold;
    RR trajectories are right `rr_right` times out of M* (default all), else the target."""
    rr_right = m_star if rr_right is None else rr_right
    rows = []
    for q in range(questions):
        qid = f"q{q}"
        for j in range(m_star):
            bad = (
                j % n < c
            )  # MAJ answer j comes from agent j mod N; the first c seats are corrupted
            rows.append(
                row(
                    c,
                    n,
                    qid,
                    "MAJ",
                    j,
                    TARGET if bad else GOLD,
                    corrupted=bad,
                    task=task,
                    k=k,
                    m_star=m_star,
                )
            )
            rows.append(
                row(
                    c,
                    n,
                    qid,
                    "RRMaj",
                    j,
                    GOLD if j < rr_right else TARGET,
                    corrupted=(j % n) < c,
                    task=task,
                    k=k,
                    m_star=m_star,
                )
            )
    return rows
