import sys

from .conformance import main

sys.exit(main())
