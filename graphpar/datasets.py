"""Public data sets: the Planetoid citation graphs (Cora, CiteSeer, PubMed).

The files are the original Planetoid ones (``ind.NAME.{x,y,tx,ty,allx,ally,
graph,test.index}``, Yang, Cohen and Salakhutdinov 2016), Python 2 pickles.
They are read with a restricted unpickler that admits only the few numpy and
scipy classes these files hold; any other class or function in a pickle is an
error and is never called.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["PLANETOID_NAMES", "Planetoid", "load_planetoid", "planetoid_files"]

PLANETOID_NAMES = ("cora", "citeseer", "pubmed")
PLANETOID_URL = "https://raw.githubusercontent.com/kimiyoung/planetoid/master/data/"
ENV_DATA = "GRAPHPAR_DATA"
_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")
# The sums the project keeps, in ``sha256sum`` format, installed with the package.
SUMS_FILE = Path(__file__).resolve().parent / "data" / "planetoid.sha256"
_TIMEOUT = 60.0


class Planetoid(NamedTuple):
    """A Planetoid data set with its standard public split.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array of float64, shape (n, n)
        Undirected, binary (a self-loop in the file is a 1 on the diagonal).
    features : scipy.sparse.csr_array of float32, shape (n, f)
        Raw bag-of-words features (not normalised).
    labels : ndarray of int64, shape (n,)
        Class of each vertex; -1 where the files give none (CiteSeer's
        isolated vertices outside the test set).
    train_mask, val_mask, test_mask : ndarray of bool, shape (n,)
        The public split (140/500/1000 for Cora).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> d = Planetoid(sp.csr_array((2, 2)), sp.csr_array((2, 3)), np.array([0, 2]),
    ...               np.array([True, False]), np.array([False, True]), np.zeros(2, bool))
    >>> d.num_classes
    3
    """

    adjacency: sp.csr_array
    features: sp.csr_array
    labels: np.ndarray
    train_mask: np.ndarray
    val_mask: np.ndarray
    test_mask: np.ndarray

    @property
    def num_classes(self) -> int:
        """Number of classes."""
        return int(self.labels.max()) + 1


# ---------------------------------------------------------------- unpickling
class _PickledSparse:
    """Stand-in for scipy's ``csr_matrix``: receives the pickled state, runs nothing."""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("unexpected csr_matrix state")
        self.state = state


def _latin1_encode(text, encoding="latin1"):
    """The one use of ``_codecs.encode`` in protocol-2 pickles: text to bytes."""
    if not isinstance(text, str) or encoding.replace("-", "").lower() != "latin1":
        raise pickle.UnpicklingError("_codecs.encode is admitted only for latin-1 text")
    return text.encode("latin1")


def _allowed_globals() -> dict:
    reconstruct = np.zeros(0).__reduce__()[0]  # numpy's ndarray reconstructor
    scalar = np.float64(0).__reduce__()[0]
    allowed = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("collections", "defaultdict"): defaultdict,
        ("__builtin__", "list"): list,
        ("builtins", "list"): list,
        ("_codecs", "encode"): _latin1_encode,
    }
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(mod, "_reconstruct")] = reconstruct
        allowed[(mod, "scalar")] = scalar
    for mod in ("scipy.sparse.csr", "scipy.sparse._csr"):
        allowed[(mod, "csr_matrix")] = _PickledSparse
    return allowed


class _RestrictedUnpickler(pickle.Unpickler):
    _allowed = _allowed_globals()

    def find_class(self, module, name):
        try:
            return self._allowed[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refusing to load global '{module}.{name}': only the numpy and scipy "
                "classes of the Planetoid files are admitted"
            ) from None


def _unpickle(path: Path):
    data = path.read_bytes()
    try:
        obj = _RestrictedUnpickler(io.BytesIO(data), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: not a valid Planetoid pickle: {exc}") from exc
    return _materialise(obj, path)


def _materialise(obj, path: Path):
    """Turn the stand-ins into scipy arrays and check that nothing unexpected came in."""
    if isinstance(obj, _PickledSparse):
        st = obj.state
        shape = st.get("_shape", st.get("shape"))
        try:
            arrs = [np.asarray(st[k]) for k in ("data", "indices", "indptr")]
            if any(a.dtype == object for a in arrs):
                raise ValueError("object arrays")
            return sp.csr_array(tuple(arrs), shape=tuple(int(s) for s in shape))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: malformed sparse matrix in the pickle: {exc}") from exc
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise ValueError(f"{path}: object arrays are not admitted")
        return obj
    if isinstance(obj, dict):
        return obj
    raise ValueError(f"{path}: unexpected content of type {type(obj).__name__}")


# ---------------------------------------------------------------- files
def planetoid_files(name: str) -> list[str]:
    """The eight file names of a Planetoid data set.

    Examples
    --------
    >>> planetoid_files("cora")[:2]
    ['ind.cora.x', 'ind.cora.y']
    """
    name = _check_name(name)
    return [f"ind.{name}.{part}" for part in _PARTS]


def _check_name(name) -> str:
    if not isinstance(name, str) or name.lower() not in PLANETOID_NAMES:
        raise ValueError(f"name must be one of {', '.join(PLANETOID_NAMES)}; got {name!r}")
    return name.lower()


def known_sums(path: Path | None = None) -> dict[str, str]:
    """The SHA-256 sums kept in the project (``graphpar/data/planetoid.sha256``).

    Examples
    --------
    >>> len(known_sums()["ind.cora.x"])
    64
    """
    path = SUMS_FILE if path is None else Path(path)
    sums = {}
    if not path.is_file():
        return sums
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            digest, fname = line.split()
            sums[fname.lstrip("*")] = digest.lower()
    return sums


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _default_root() -> Path:
    env = os.environ.get(ENV_DATA)
    if env:
        return Path(env)
    return Path.home() / ".cache" / "graphpar"


def _find_dir(root: Path, files: list[str]) -> Path | None:
    for d in (root / "planetoid", root):
        if all((d / f).is_file() for f in files):
            return d
    return None


def _download(files: list[str], dest: Path, sums: dict[str, str], url: str) -> None:
    unverifiable = [f for f in files if f not in sums]
    if unverifiable:
        where = SUMS_FILE.name if SUMS_FILE.is_file() else f"{SUMS_FILE} is missing"
        raise FileNotFoundError(
            f"missing {', '.join(unverifiable)} in {dest}, and the project keeps no "
            f"SHA-256 sum for them ({where}), so a download could not be "
            f"verified and is refused. Fetch them yourself from {url} into {dest}, "
            f"or set {ENV_DATA} to a folder holding planetoid/ with them."
        )
    dest.mkdir(parents=True, exist_ok=True)
    for fname in files:
        target = dest / fname
        tmp = dest / (fname + ".part")
        with urllib.request.urlopen(url + fname, timeout=_TIMEOUT) as resp, open(tmp, "wb") as f:
            while block := resp.read(1 << 20):
                f.write(block)
        digest = _sha256(tmp)
        if digest != sums[fname]:
            tmp.unlink()
            raise ValueError(
                f"downloaded {fname} from {url} has SHA-256 {digest}, expected "
                f"{sums[fname]}; the file was discarded"
            )
        tmp.replace(target)


def _locate(name: str, root, download: bool, url: str) -> Path:
    files = planetoid_files(name)
    base = Path(root).expanduser() if root is not None else _default_root()
    found = _find_dir(base, files)
    if found is not None:
        return found
    dest = base / "planetoid"
    missing = [f for f in files if not (dest / f).is_file()]
    hint = (
        f"Planetoid {name!r}: missing {', '.join(missing)} in {dest}. Put the files "
        f"there (from {url}), pass root=... (--data-dir on the command line), or set "
        f"{ENV_DATA} to a folder holding "
        f"planetoid/ind.{name}.*"
    )
    if not download:
        raise FileNotFoundError(hint)
    try:
        _download(missing, dest, known_sums(), url)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise FileNotFoundError(f"{hint}. Download failed: {exc}") from exc
    return dest


# ---------------------------------------------------------------- split
def _test_index(path: Path) -> np.ndarray:
    try:
        idx = np.array([int(t) for t in path.read_text().split()], dtype=np.int64)
    except ValueError as exc:
        raise ValueError(f"{path}: test index file must hold integers: {exc}") from exc
    if idx.size == 0:
        raise ValueError(f"{path}: no test indices")
    return idx


def _as_dense(m) -> np.ndarray:
    return m.toarray() if sp.issparse(m) else np.asarray(m)


def _build(objs: dict, test_idx: np.ndarray, d: Path, name: str) -> Planetoid:
    """The public split, step by step as Kipf and Welling's ``gcn/utils.py`` builds it."""
    y, ty, ally, graph = objs["y"], objs["ty"], objs["ally"], objs["graph"]
    tx, allx = (sp.csr_array(objs[p] if sp.issparse(objs[p]) else _as_dense(objs[p]))
                for p in ("tx", "allx"))
    y, ty, ally = _as_dense(y), _as_dense(ty), _as_dense(ally)
    if not isinstance(graph, dict):
        raise ValueError(f"{d / f'ind.{name}.graph'}: expected a dict of adjacency lists")
    if tx.shape[0] != test_idx.size or ty.shape[0] != test_idx.size:
        raise ValueError(
            f"{d}: ind.{name}.tx/ty have {tx.shape[0]}/{ty.shape[0]} rows but "
            f"ind.{name}.test.index lists {test_idx.size} vertices"
        )
    n_all = allx.shape[0]
    test_sorted = np.sort(test_idx)
    lo, hi = int(test_sorted[0]), int(test_sorted[-1])
    if lo != n_all:
        raise ValueError(
            f"{d}: the test vertices must follow the {n_all} rows of allx, but the "
            f"smallest test index is {lo}"
        )
    # Test indices with gaps (CiteSeer): pad tx and ty to the full range with zero
    # rows, tx row i going to row test_sorted[i] - lo as in gcn/utils.py.
    span = hi - lo + 1
    txc = tx.tocoo()
    tx_ext = sp.csr_array(
        (txc.data, (test_sorted[txc.row] - lo, txc.col)), shape=(span, tx.shape[1])
    )
    ty_ext = np.zeros((span, ty.shape[1]))
    ty_ext[test_sorted - lo, :] = ty
    # features[test_idx, :] = features[test_sorted, :], as a row permutation.
    perm = np.arange(n_all + span)
    perm[test_idx] = test_sorted
    features = sp.vstack([sp.csr_array(allx), tx_ext], format="csr")[perm]
    labels_1h = np.vstack([ally, ty_ext])[perm]
    n = labels_1h.shape[0]
    labels = np.where(labels_1h.any(axis=1), labels_1h.argmax(axis=1), -1).astype(np.int64)

    n_train = y.shape[0]
    train = np.zeros(n, dtype=bool)
    val = np.zeros(n, dtype=bool)
    test = np.zeros(n, dtype=bool)
    train[:n_train] = True
    val[n_train:n_train + 500] = True
    test[test_sorted] = True

    src, dst = [], []
    for u, nbrs in graph.items():
        for v in nbrs:
            src.append(int(u))
            dst.append(int(v))
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    bad = (src < 0) | (src >= n) | (dst < 0) | (dst >= n)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"{d / f'ind.{name}.graph'}: edge ({src[k]}, {dst[k]}) names a vertex "
            f"outside [0, {n})"
        )
    # An undirected simple graph, as networkx.from_dict_of_lists makes it: each
    # pair once, both directions, a self-loop once.
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    adj = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return Planetoid(
        adjacency=adj,
        features=sp.csr_array(features, dtype=np.float32),
        labels=labels,
        train_mask=train,
        val_mask=val,
        test_mask=test,
    )


def load_planetoid(
    name: str, root: str | os.PathLike | None = None, *, download: bool = True
) -> Planetoid:
    """Load a Planetoid citation graph with the standard public split.

    Parameters
    ----------
    name : {"cora", "citeseer", "pubmed"}
        The data set.
    root : path, optional
        Folder holding the files, either directly or in a ``planetoid/``
        subfolder. Default: ``$GRAPHPAR_DATA``, else ``~/.cache/graphpar``.
    download : bool, default True
        Download missing files from the Planetoid repository
        (:data:`PLANETOID_URL`) into ``root/planetoid``. Every downloaded file
        must match the SHA-256 sum the project keeps (``graphpar/data/planetoid.sha256``);
        a file without a kept sum is not downloaded at all. Files already on
        disk are checked against the kept sums too.

    Returns
    -------
    Planetoid
        ``(adjacency, features, labels, train_mask, val_mask, test_mask)``,
        built exactly as Kipf and Welling's ``load_data``: training vertices
        are the first ``len(y)``, validation the next 500, test the vertices
        of ``test.index``; with gaps in the test indices (CiteSeer) the
        missing vertices get zero features and label -1 and are in no mask.

    Raises
    ------
    FileNotFoundError
        When files are missing and cannot be downloaded; the message names
        the files, the folder and ``GRAPHPAR_DATA``.
    ValueError
        For an unknown name, a checksum mismatch, or a file that is not a
        Planetoid pickle (including any pickle that names a class or
        function other than the admitted numpy and scipy ones).

    Examples
    --------
    >>> data = load_planetoid("cora")  # doctest: +SKIP
    >>> data.adjacency.shape, int(data.train_mask.sum()), data.num_classes  # doctest: +SKIP
    ((2708, 2708), 140, 7)
    """
    name = _check_name(name)
    d = _locate(name, root, download, PLANETOID_URL)
    sums = known_sums()
    for fname in planetoid_files(name):
        if fname in sums:
            digest = _sha256(d / fname)
            if digest != sums[fname]:
                raise ValueError(
                    f"{d / fname} has SHA-256 {digest}, expected {sums[fname]} "
                    f"({SUMS_FILE.name}); the file is corrupt or not the Planetoid original"
                )
    objs = {p: _unpickle(d / f"ind.{name}.{p}") for p in _PARTS[:7]}
    test_idx = _test_index(d / f"ind.{name}.test.index")
    return _build(objs, test_idx, d, name)
