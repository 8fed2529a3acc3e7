"""Replays of logged units: the events fold back to exactly what the log recorded, in the recorded
order, paced to the asked time."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.fold import fold
from rrdemo.replay import finished_units, read_unit, recorded_events, replay
from rrdemo.runs.log import read_log
from rrdemo.runs.record import done_record, read_done, read_trajectory, trajectory_record

ASSETS = Path(__file__).resolve().parents[2] / "assets"
# every committed run log; assets/calibration/ holds calibration logs (single answers, no units)
LOGS = [
    path
    for path in sorted(ASSETS.glob("*.jsonl")) + sorted(ASSETS.glob("*/*.jsonl"))
    if path.relative_to(ASSETS).parts[0] != "calibration"
]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_logged_unit_folds_back_to_its_records(path: Path) -> None:
    log = read_log(path)
    units = finished_units(log)
    if not units:
        pytest.skip(f"{path.name} has no finished question yet (a sweep just begun)")
    for key, qid in units:
        unit = read_unit(log, qid, key)
        events = [event for _, event in recorded_events(unit)]
        shown = fold(events)
        for method in ("MAJ", "RRMaj"):  # answers come in the order the log wrote them
            answered = [
                e.trajectory for e in events if (e.kind, e.method) == ("answer_extracted", method)
            ]
            assert answered == [r["trajectory"] for r in unit.trajectories if r["method"] == method]
        for record in unit.trajectories:
            trajectory = shown.methods[record["method"]].trajectories[record["trajectory"]]
            logged = read_trajectory(record)[0]
            assert trajectory_record(logged, trajectory) == record, (key, qid, record["method"])
        assert done_record(read_done(unit.done)[0], shown.methods.values()) == unit.done
        assert shown.target == unit.done["target"]


def test_chunks_arrive_in_the_recorded_order_side_by_side() -> None:
    log = read_log(ASSETS / "experiment_small_shuffled.jsonl")
    key, qid = next((k, q) for k, q in finished_units(log) if k.startswith("logic3:eac1"))
    unit = read_unit(log, qid, key)
    timeline = recorded_events(unit)
    steps = [at for at, _ in timeline]
    assert steps == sorted(steps)
    chunks = [e for _, e in timeline if e.kind == "chunk_written"]
    for method in ("MAJ", "RRMaj"):
        for record in (r for r in unit.trajectories if r["method"] == method):
            mine = [c for c in chunks if (c.method, c.trajectory) == (method, record["trajectory"])]
            assert [c.text for c in mine] == [c["text"] for c in record["chunks"]]
    # RR turns in lockstep: every turn-t chunk before any turn-(t+1) chunk
    turns = [c.turn for c in chunks if c.method == "RRMaj"]
    assert turns == sorted(turns)
    # both methods stream at once: an MAJ event comes after the first RRMaj chunk
    kinds = [(e.method, e.kind) for _, e in timeline]
    first_rr = kinds.index(("RRMaj", "chunk_written"))
    assert ("MAJ", "decision") in kinds[first_rr:]
    # chunks grow on screen before they are finished
    assert any(e.kind == "token_delta" for _, e in timeline)


def test_replay_is_paced_to_the_asked_time() -> None:
    log = read_log(ASSETS / "experiment_small_shuffled.jsonl")
    key, qid = finished_units(log)[0]
    unit = read_unit(log, qid, key)
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    events = list(replay(unit, 12.0, clock=lambda: now[0], sleep=sleep))
    assert len(events) == len(recorded_events(unit))
    assert now[0] == pytest.approx(12.0, abs=0.01)
    assert list(replay(unit, 0.0, clock=lambda: now[0], sleep=sleep))  # at once
    assert now[0] == pytest.approx(12.0, abs=0.01)


def test_bad_questions_and_files_get_plain_messages(tmp_path: Path) -> None:
    log = read_log(ASSETS / "experiment_small_shuffled.jsonl")
    with pytest.raises(RRError, match="no finished question 'logic3-9999'.*logic3-0009"):
        read_unit(log, "logic3-9999")
    with pytest.raises(RRError, match="several conditions; pick one: logic3:.*3c2t"):
        read_unit(log, "logic3-0009")
    text = tmp_path / "notes.jsonl"
    text.write_text("hello\n")
    with pytest.raises(RRError, match="not an rrdemo experiment log"):
        read_log(text)


class _CountedRecords(list):
    """A log's records that count how often they are walked through."""

    passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()


def crafted_log(path: Path, units: int) -> Path:
    """The probe's upload: a real header and `units` minimal "done" records of one condition."""
    header = (ASSETS / "experiment_small_shuffled.jsonl").read_text().splitlines()[0]
    import json

    key = json.loads(header)["conditions"][0]["key"]
    lines = [header] + [
        json.dumps({"type": "done", "condition": key, "question_id": f"q{i}"}) for i in range(units)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_picking_every_unit_of_a_large_log_walks_its_records_once(tmp_path: Path) -> None:
    """24,053 minimal units (the probe's 2 MB upload): the index is built in one pass over the
    records and every unit is picked from it, never by a pass per unit."""
    log = read_log(crafted_log(tmp_path / "crafted.jsonl", 24_053))
    log.records = _CountedRecords(log.records)
    units = finished_units(log)
    assert len(units) == 24_053
    for key, qid in units:
        unit = read_unit(log, qid, key, with_text=False)
        assert unit.verdict() == "MAJ no answer · RRMaj no answer"
    assert log.records.passes == 1
