"""All distributed GCN checks in one launch (Numba compiles once per rank)."""

from __future__ import annotations

import aggregate_checks
import train_checks
from _common import run

from graphpar.threads import set_threads


def main(comm):
    set_threads(None)
    return aggregate_checks.main(comm) + train_checks.main(comm)


if __name__ == "__main__":
    run(main)
