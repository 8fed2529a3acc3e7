"""The paper's analysis tables as data (`tables`) and the pure functions that set them beside a
run's numbers (`beside`), for `rrdemo report` and the app's Experiments tab.

The main and appendix-C tables (Ceiling | MAJ, RRMaj, Delta | Floor) live with the leaderboard's
seed (leaderboard/paper_seed.py); this package carries the paper's other tables.
"""
