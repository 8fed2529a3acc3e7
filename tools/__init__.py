"""Research and upkeep tools run from a checkout: `python -m tools.NAME` (docs/development.md)."""
