"""Allow ``python -m htcpool``."""

import sys

from htcpool.cli import main

sys.exit(main())
