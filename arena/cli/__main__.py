"""``python -m arena.cli``: the same command as the ``arena`` script."""

import sys

from arena.cli import main

sys.exit(main())
