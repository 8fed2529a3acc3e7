"""`python -m leaderboard ...`: see `leaderboard.cli`."""

from leaderboard.cli import main

raise SystemExit(main())
