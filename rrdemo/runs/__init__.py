"""Experiment runs: the sweep and its plan (`spec`), the runner (`runner`), and the run log (`log`),
the one JSONL format that the runner writes, a resume scans and the report and the app read."""
