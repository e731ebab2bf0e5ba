"""`python -m arena.cli`: the command line, as the `arena` script runs it."""

import sys

from . import main

sys.exit(main())
