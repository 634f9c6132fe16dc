"""Every docstring example of graphpar and its kernels runs and shows what the code returns.

The examples are the numpydoc ``Examples`` sections (and any other ``>>>`` lines)
of every module under ``graphpar`` (with ``graphpar.kernels``), run as pytest's
``--doctest-modules`` runs them (``ELLIPSIS``), one test per module. Examples
marked ``# doctest: +SKIP`` (those that need a data set or ``mpiexec``) are
skipped as there. An example may change the process's thread count; it is
restored after each module so that the tests after it run as before.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numba
import pytest

import graphpar
import graphpar.kernels

OPTIONAL = {"matplotlib", "pandas", "networkx", "torch", "pymetis", "mtkahypar"}


def _module_names() -> list[str]:
    names = {"graphpar", "graphpar.kernels"}
    for package in (graphpar, graphpar.kernels):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.add(info.name)
    # running __main__ would run the CLI
    return sorted(n for n in names if n.rsplit(".", 1)[-1] != "__main__")


MODULES = _module_names()


def test_the_walk_finds_every_layer():
    assert {"graphpar._cox", "graphpar.kernels.sssp", "graphpar.mpi._sssp",
            "graphpar.cli._driver", "graphpar.io"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional {exc.name}")
        raise
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    if not any(t.examples for t in tests):
        pytest.skip(f"{name} has no examples")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    threads = numba.get_num_threads()
    try:
        for t in sorted(tests, key=lambda t: t.name):
            runner.run(t, out=report.append)
    finally:
        numba.set_num_threads(threads)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
