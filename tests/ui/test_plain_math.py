"""LaTeX in the panels: delimiters dropped, boxes, fractions and symbols made readable, and a
command split across two agents' chunks still rewritten, in the chunk where it starts."""

from __future__ import annotations

from ui.plain_math import plain_chunks, plain_math


def test_the_latex_models_write_reads_as_plain_text() -> None:
    text = r"\[ L = \frac{3000}{100} = 30 \] so \( L \) is 30. The answer is \(\boxed{D}\)."
    assert plain_math(text) == " L = 3000/100 = 30  so  L  is 30. The answer is [D]."
    assert (
        plain_math(r"5 \times 6 \leq 30, 90^\circ, \text{Area}, 50\%")
        == "5 × 6 ≤ 30, 90°, Area, 50%"
    )
    assert plain_math(r"\left( \frac{a+b}{2} \right)") == "( (a+b)/2 )"
    assert plain_math("plain text, $5 and C:\\path") == "plain text, $5 and C:\\path"


def test_a_command_split_between_chunks_is_rewritten_in_the_chunk_where_it_starts() -> None:
    chunks = [r"The answer is \(\bo", r"xed{D}\). Next \fr", r"ac{1}{2}", ""]
    assert plain_chunks(chunks) == ["The answer is [D]", ". Next 1/2", "", ""]
    assert plain_chunks(["no", " latex"]) == ["no", " latex"]
    assert plain_chunks([]) == []


def test_the_panels_show_no_raw_latex() -> None:
    from rrdemo.fold import FoldedChunk, FoldedTrajectory
    from ui.trajectory_html import trajectory_card

    chunks = [FoldedChunk(0, 0, False, text=r"so \( x = \frac{1}{2} \), \bo", done=True),
              FoldedChunk(1, 1, True, text=r"xed{B}", done=True)]  # fmt: skip
    trajectory = FoldedTrajectory("RRMaj", 0)
    trajectory.chunks.extend(chunks)
    agents = [{"corrupted": False, "model": "m"}, {"corrupted": True, "model": "m"}]
    html = trajectory_card(trajectory, "t", agents, gold=True, tags=True)
    assert "x = 1/2" in html and "[B]" in html
    assert "\\(" not in html and "boxed" not in html and "frac" not in html
