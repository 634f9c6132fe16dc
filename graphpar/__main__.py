"""``python -m graphpar`` runs the command-line tool."""

import sys

from graphpar.cli import main

sys.exit(main())
