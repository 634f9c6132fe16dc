"""``graphpar gcn`` arguments run through :func:`graphpar.mpi.cli_gcn.run_distributed`.

Used by the tests until ``graphpar.cli.gcn`` hands over to the distributed path
itself; ``--partition METHOD`` is taken out of the arguments here because the
serial parser does not define it.
"""

from __future__ import annotations

import sys

from graphpar.cli import build_parser
from graphpar.cli._errors import run_reporting_errors
from graphpar.mpi.cli_gcn import run_distributed


def main(argv: list[str]) -> int:
    method = None
    if "--partition" in argv:
        i = argv.index("--partition")
        method = argv[i + 1]
        del argv[i:i + 2]
    args = build_parser().parse_args(argv)
    if getattr(args, "partition", None) is None:
        args.partition = method
    return run_reporting_errors(run_distributed, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
