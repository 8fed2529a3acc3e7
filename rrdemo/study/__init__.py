"""Studies: one file per committed result, and how it is run, watched and rebuilt.

A study file (`rrdemo.study.file`) holds what defines a result: its kind (an experiment sweep or a
calibration), its settings, how many shards run it, and what is published from its log (the
report, the board rows, the gallery's settings). `rrdemo.study.build` turns the logs into those
files; `rrdemo study FILE run | status | build` (rrdemo/cli/study.py) is the one command.
"""
