"""The paper's tables as data and the same numbers of a run set beside them.

tables.py       the analysis tables (M scaling, K ablation, final speaker, ...) and model names
main_tables.py  the main and appendix-C tables (Ceiling | MAJ, RRMaj, Delta | Floor)
beside.py       one table of the paper beside a run's numbers, as markdown and CSV
settings.py     the paper's settings beside a run's, and the heterogeneous-ensemble table
match.py        `run_beside`: which of a run's conditions match which paper table
"""
