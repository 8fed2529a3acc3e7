"""Shared test helpers (no tests here): fakes, a loopback hub, the Space venv, the LaTeX reader, leaderboard samples."""
