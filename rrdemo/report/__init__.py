"""The report: a run log in, the paper's analyses out, as tables, figures and a leaderboard
submission. Pure functions up to `write.py` and `submission.py`, which write files.

    stats.py       outcome pools, votes over pool draws, estimates with bootstrap intervals
    tables.py      the main table, M scaling, K ablation, asymmetric yield, accuracy against rho
    speakers.py    who spoke last (the final-speaker test) and who wrote the trajectories
    lengths.py     answer lengths per condition
    adversary.py   MAJ vs RRMaj per adversary strategy
    pooled.py      MAJ vs RRMaj paired per question, runs pooled stratified by run, power
    pool_report.py several logs pooled at one config: the table and the forest plot (forest.py)
    render.py      markdown and CSV for every table
    figures.py     the plots (plotly, PNG)
    paper/         the paper's tables as data, and the same numbers of a run beside them
    write.py       `write_report`: the report directory of one run log
    submission.py  the leaderboard submission built from a run log

This package's `__init__` imports nothing, so the light modules (stats, paper tables) load without
plotly.
"""
