"""``python -m leaderboard``: the commands of :mod:`leaderboard.cli`."""

import sys

from leaderboard.cli import main

if __name__ == "__main__":
    sys.exit(main())
