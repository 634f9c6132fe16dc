"""The names of the vertex partition methods, importable without SciPy.

:mod:`graphpar.mpi.vertex_partitioners` implements them; the CLI's parser
needs only their names (``graphpar gcn --partition``), and importing the
partitioners would import ``scipy.sparse`` (0.3 s) for every ``--help``.

Examples
--------
>>> from graphpar.mpi.partition_methods import METHODS
>>> METHODS[0]
'block'
"""

METHODS = ("block", "edge", "random", "metis", "hypergraph")
EXTRA = "graphpar[partition]"  # the extra that installs the metis and hypergraph partitioners
