"""Shared test fixtures: the real data sets (through GRAPHPAR_DATA) and helpers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import naive`


def data_root() -> Path | None:
    """Where the shared real data sets are: GRAPHPAR_DATA, else ../shared/datasets."""
    env = os.environ.get("GRAPHPAR_DATA")
    candidates = [Path(env)] if env else [ROOT.parent / "shared" / "datasets"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; in CI its absence is an error, elsewhere a skip."""
    root = data_root()
    if root is None:
        if os.environ.get("CI"):
            pytest.fail("GRAPHPAR_DATA is not set to the shared data sets in CI")
        pytest.skip("real data not found: set GRAPHPAR_DATA")
    return root


@pytest.fixture(scope="session")
def rome_path(shared_data) -> Path:
    return shared_data / "dimacs" / "rome99.gr"


@pytest.fixture(scope="session")
def planetoid_dir(shared_data) -> Path:
    return shared_data / "planetoid"


def graphpar_cmd() -> list[str]:
    """The command that runs the installed CLI in a subprocess."""
    return [sys.executable, "-m", "graphpar"]


def mpiexec() -> str:
    """The mpiexec from the mpich wheel, next to this Python."""
    exe = Path(sys.executable).parent / "mpiexec"
    return str(exe) if exe.exists() else "mpiexec"
