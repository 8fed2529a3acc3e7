"""`rrdemo experiment --ensemble FILE`: ensemble files (local and served agents) in sweeps."""

from __future__ import annotations

from rrdemo.cli import main

ENSEMBLE = """
endpoints:
  box: {base_url: "http://127.0.0.1:9/v1", served_model: smol, tokenizer: smollm2}
agents:
  - {model: smollm2, corrupted: true}
  - {backend: openai, endpoint: box, model: smol-served, corrupted: true}
  - {model: smollm2, count: 3}
"""


def test_a_sweep_takes_an_ensemble_file_with_served_agents(tmp_path, capsys):
    path = tmp_path / "mixed.yaml"
    path.write_text(ENSEMBLE)
    code = main(
        [
            "experiment",
            "--tasks",
            "logic3",
            "--ensemble",
            str(path),
            "--strengths",
            "strong",
            "--k",
            "8",
            "--max-tokens",
            "16",
            "--n",
            "2",
            "--dry-run",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "2c3t" in out.out  # the file's seats: two corrupted (one of them served), three truthful


def test_a_bad_ensemble_file_is_one_clear_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("agents: [{model: smollm2, corrupted: maybe}]")
    code = main(
        [
            "experiment",
            "--tasks",
            "logic3",
            "--ensemble",
            str(path),
            "--dry-run",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "corrupted" in err[0]
    assert not (tmp_path / "r.jsonl").exists()
