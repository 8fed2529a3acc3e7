"""rrdemo: token-level round-robin collaboration (RR, RRMaj) vs majority voting (MAJ) with corrupted agents.

Reproduces "The Consensus Trap: Rescuing Multi-Agent LLMs from Adversarial Majorities via
Token-Level Collaboration". Importing this package loads nothing: models load on first use.
"""

__version__ = "0.1.0"
