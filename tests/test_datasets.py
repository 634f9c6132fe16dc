"""load_planetoid: the real Cora files, fake files with test-index gaps, the restricted
unpickler, checksums, and the downloader against a local HTTP server."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import pickle
import threading
import warnings
from collections import defaultdict

import naive_gcn
import numpy as np
import pytest
import scipy.sparse as sp

from graphpar import datasets
from graphpar.datasets import load_planetoid, planetoid_files


def check_against_reference(data, ref):
    adj, feats, labels, train, val, test = ref
    np.testing.assert_array_equal(data.adjacency.toarray(), adj)
    np.testing.assert_allclose(data.features.toarray(), feats, rtol=1e-7)
    np.testing.assert_array_equal(data.labels, labels)
    for got, want in zip((data.train_mask, data.val_mask, data.test_mask), (train, val, test),
                         strict=True):
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ real Cora
def test_cora_public_split(planetoid_dir):
    data = load_planetoid("cora", root=planetoid_dir.parent, download=False)
    # the facts the shared data's README states: 2708 nodes, 5278 edges, 1433 features,
    # 7 classes, split 140/500/1000
    assert data.adjacency.shape == (2708, 2708)
    assert data.adjacency.nnz == 2 * 5278
    assert (data.adjacency != data.adjacency.T).nnz == 0
    assert data.features.shape == (2708, 1433)
    assert data.num_classes == 7
    assert (data.train_mask.sum(), data.val_mask.sum(), data.test_mask.sum()) == (140, 500, 1000)
    assert not (data.train_mask & data.val_mask).any()
    assert not ((data.train_mask | data.val_mask) & data.test_mask).any()
    # the public split has 20 training vertices per class
    np.testing.assert_array_equal(np.bincount(data.labels[data.train_mask]), [20] * 7)
    # against the obvious construction from the same files, read by plain pickle
    d = planetoid_dir
    objs = {}
    for part in ("x", "y", "tx", "ty", "allx", "ally", "graph"):
        with open(d / f"ind.cora.{part}", "rb") as f:
            with warnings.catch_warnings():  # scipy.sparse.csr module path is deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                objs[part] = pickle.load(f, encoding="latin1")  # trusted local test data
    test_index = [int(t) for t in (d / "ind.cora.test.index").read_text().split()]
    ref = naive_gcn.planetoid_reference(
        objs["x"], objs["y"], objs["tx"], objs["ty"], objs["allx"], objs["ally"],
        objs["graph"], test_index,
    )
    check_against_reference(data, ref)
    # the same folder given directly, and through GRAPHPAR_DATA
    again = load_planetoid("CORA", root=planetoid_dir, download=False)
    np.testing.assert_array_equal(again.labels, data.labels)


def test_cora_through_env(planetoid_dir, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_DATA", str(planetoid_dir.parent))
    assert load_planetoid("cora", download=False).adjacency.shape == (2708, 2708)


# ------------------------------------------------------------------ fake files
def fake_planetoid(rng, n_train=6, n_other=504, n_test_slots=12, gaps=(3, 7, 8), f=9, c=3):
    """Planetoid-like objects; test indices have ``gaps`` (like CiteSeer)."""
    n_all = n_train + n_other
    test_index = [n_all + s for s in range(n_test_slots) if s not in gaps]
    rng.shuffle(test_index)
    def onehot(k):
        m = np.zeros((k, c))
        m[np.arange(k), rng.integers(0, c, k)] = 1
        return m
    allx = sp.csr_matrix((rng.random((n_all, f)) < 0.3).astype(np.float32))
    ally = onehot(n_all)
    ally[n_train + 3] = 0  # an unlabeled vertex, as CiteSeer has
    tx = sp.csr_matrix((rng.random((len(test_index), f)) < 0.3).astype(np.float32))
    ty = onehot(len(test_index))
    n = n_all + n_test_slots
    graph = defaultdict(list)
    for u in range(n):
        graph[u] = [int(v) for v in rng.integers(0, n, 2)]
    graph[1].append(1)  # a self-loop
    graph[2].extend([5, 5])  # a duplicate
    return {"x": allx[:n_train], "y": ally[:n_train], "tx": tx, "ty": ty, "allx": allx,
            "ally": ally, "graph": graph}, test_index


def write_fake(folder, name, objs, test_index):
    folder.mkdir(parents=True, exist_ok=True)
    for part, obj in objs.items():
        (folder / f"ind.{name}.{part}").write_bytes(pickle.dumps(obj, protocol=2))
    (folder / f"ind.{name}.test.index").write_text("\n".join(map(str, test_index)) + "\n")


def sums_of(folder, name):
    return "".join(
        f"{hashlib.sha256((folder / fn).read_bytes()).hexdigest()}  {fn}\n"
        for fn in planetoid_files(name)
    )


@pytest.fixture
def fake(tmp_path, monkeypatch):
    objs, test_index = fake_planetoid(np.random.default_rng(0))
    src = tmp_path / "src"
    write_fake(src, "citeseer", objs, test_index)
    sums = tmp_path / "planetoid.sha256"
    sums.write_text("# test sums\n" + sums_of(src, "citeseer"))
    monkeypatch.setattr(datasets, "SUMS_FILE", sums)
    return src, objs, test_index


def test_fake_with_test_gaps(fake):
    src, objs, test_index = fake
    data = load_planetoid("citeseer", root=src, download=False)
    ref = naive_gcn.planetoid_reference(
        objs["x"], objs["y"], objs["tx"], objs["ty"], objs["allx"], objs["ally"],
        objs["graph"], test_index,
    )
    check_against_reference(data, ref)
    gap_rows = [510 + s for s in (3, 7, 8)]
    assert (data.labels[gap_rows] == -1).all()
    assert data.features[gap_rows].nnz == 0
    assert data.adjacency[1, 1] == 1.0 and data.adjacency[2, 5] == 1.0


def test_checksum_mismatch(fake):
    src, _, _ = fake
    p = src / "ind.citeseer.y"
    raw = bytearray(p.read_bytes())
    raw[len(raw) // 2] ^= 1
    p.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"ind\.citeseer\.y has SHA-256 .* expected"):
        load_planetoid("citeseer", root=src, download=False)


class Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class EvalEvil:
    def __reduce__(self):
        return (eval, ("__import__('os').getpid()",))


@pytest.mark.parametrize("payload", ["system", "eval", "nested"])
def test_malicious_pickle_refused(fake, tmp_path, monkeypatch, payload):
    src, objs, test_index = fake
    marker = tmp_path / "pwned"
    evil = {"system": Evil(marker), "eval": EvalEvil(),
            "nested": defaultdict(list, {0: [Evil(marker)]})}[payload]
    (src / "ind.citeseer.graph").write_bytes(pickle.dumps(evil, protocol=2))
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "no-sums")
    with pytest.raises(ValueError, match=r"ind\.citeseer\.graph.*refusing to load global"):
        load_planetoid("citeseer", root=src, download=False)
    assert not marker.exists()


def test_unexpected_content_refused(fake, tmp_path, monkeypatch):
    src, _, _ = fake
    (src / "ind.citeseer.x").write_bytes(pickle.dumps(np.array([1, "a"], dtype=object)))
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "no-sums")
    with pytest.raises(ValueError, match=r"ind\.citeseer\.x"):
        load_planetoid("citeseer", root=src, download=False)


def test_bad_name():
    with pytest.raises(ValueError, match="cora, citeseer, pubmed; got 'reddit'"):
        load_planetoid("reddit")


# ------------------------------------------------------------------ download
class Server:
    """A local HTTP server over a folder, recording the paths requested."""

    def __init__(self, folder):
        self.requests = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                return super().do_GET()

            def log_message(self, *args):
                pass

        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/data/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def served(tmp_path, src, name="citeseer"):
    site = tmp_path / "site" / "data"
    site.mkdir(parents=True)
    for fn in planetoid_files(name):
        (site / fn).write_bytes((src / fn).read_bytes())
    return site


def test_download_verified(fake, tmp_path, monkeypatch):
    src, objs, test_index = fake
    served(tmp_path, src)
    root = tmp_path / "cache"
    with Server(tmp_path / "site") as srv:
        monkeypatch.setattr(datasets, "PLANETOID_URL", srv.url)
        data = load_planetoid("citeseer", root=root)
        assert sorted(srv.requests) == sorted(f"/data/{f}" for f in planetoid_files("citeseer"))
        again = load_planetoid("citeseer", root=root)  # now from disk: no new request
        assert len(srv.requests) == 8
    for fn in planetoid_files("citeseer"):
        assert (root / "planetoid" / fn).read_bytes() == (src / fn).read_bytes()
    assert not list((root / "planetoid").glob("*.part"))
    np.testing.assert_array_equal(data.labels, again.labels)


def test_download_default_root_is_env_then_cache(fake, tmp_path, monkeypatch):
    src, _, _ = fake
    served(tmp_path, src)
    with Server(tmp_path / "site") as srv:
        monkeypatch.setattr(datasets, "PLANETOID_URL", srv.url)
        monkeypatch.setenv("GRAPHPAR_DATA", str(tmp_path / "envroot"))
        load_planetoid("citeseer")
        assert (tmp_path / "envroot" / "planetoid" / "ind.citeseer.x").is_file()
        monkeypatch.delenv("GRAPHPAR_DATA")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        load_planetoid("citeseer")
        cache = tmp_path / "home" / ".cache" / "graphpar" / "planetoid"
        assert (cache / "ind.citeseer.x").is_file()


def test_download_corrupt_file_discarded(fake, tmp_path, monkeypatch):
    src, _, _ = fake
    site = served(tmp_path, src)
    (site / "ind.citeseer.tx").write_bytes(b"not the file")
    root = tmp_path / "cache"
    with Server(tmp_path / "site") as srv:
        monkeypatch.setattr(datasets, "PLANETOID_URL", srv.url)
        with pytest.raises(ValueError, match=r"downloaded ind\.citeseer\.tx .* discarded"):
            load_planetoid("citeseer", root=root)
    assert not (root / "planetoid" / "ind.citeseer.tx").exists()
    assert not (root / "planetoid" / "ind.citeseer.tx.part").exists()


def test_download_refused_without_sums(fake, tmp_path, monkeypatch):
    src, _, _ = fake
    served(tmp_path, src)
    (tmp_path / "partial.sha256").write_text(
        "".join(line + "\n" for line in sums_of(src, "citeseer").splitlines()
                if "graph" not in line)
    )
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "partial.sha256")
    with Server(tmp_path / "site") as srv:
        monkeypatch.setattr(datasets, "PLANETOID_URL", srv.url)
        with pytest.raises(FileNotFoundError, match=r"ind\.citeseer\.graph.*no SHA-256 sum.*"
                                                    r"refused.*GRAPHPAR_DATA"):
            load_planetoid("citeseer", root=tmp_path / "cache")
        assert srv.requests == []


def test_real_sums_refuse_unverified_names(tmp_path, monkeypatch):
    sums = datasets.known_sums()
    assert set(planetoid_files("cora")) <= set(sums)
    monkeypatch.setattr(datasets, "PLANETOID_URL", "http://127.0.0.1:9/")
    for name in ("citeseer", "pubmed"):
        if not set(planetoid_files(name)) <= set(sums):
            with pytest.raises(FileNotFoundError, match="refused"):
                load_planetoid(name, root=tmp_path)


def test_offline_error_names_files_and_variable(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "PLANETOID_URL", "http://127.0.0.1:9/")  # discard port
    with pytest.raises(FileNotFoundError) as info:
        load_planetoid("cora", root=tmp_path)
    msg = str(info.value)
    assert "ind.cora.x" in msg and "ind.cora.test.index" in msg and "GRAPHPAR_DATA" in msg
    assert "Download failed" in msg
    with pytest.raises(FileNotFoundError, match=r"missing ind\.cora\.x.*GRAPHPAR_DATA"):
        load_planetoid("cora", root=tmp_path, download=False)


# ------------------------------------------------------------------ hostile files
# Each malformed file must give one ValueError (GraphFormatError or LimitError) that
# names the file, allocate nothing in proportion to what it declares, and never
# change the result silently.
from graphpar.errors import GraphFormatError, LimitError  # noqa: E402

MB = 1 << 20


class Reduce:
    """Pickles as ``func(*args)``: what a hand-made hostile pickle calls."""

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


@pytest.fixture
def unsummed(fake, tmp_path, monkeypatch):
    """The fake CiteSeer files with no kept sums, so that edited files are read."""
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "no-sums")
    return fake


def load_error(src, part, *needles, kind=ValueError, peak=64 * MB):
    """Load; expect one error of ``kind`` naming ind.citeseer.PART and the needles,
    with at most ``peak`` bytes allocated on the way."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(kind) as info:
            load_planetoid("citeseer", root=src, download=False)
        used = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(info.value)
    assert f"ind.citeseer.{part}" in msg and "\n" not in msg, msg
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert used < peak, (used, msg)
    return msg


def write_index(src, lines):
    (src / "ind.citeseer.test.index").write_text("\n".join(map(str, lines)) + "\n")


def test_test_index_duplicate(unsummed):
    src, _, test_index = unsummed
    bad = list(test_index)
    bad[4] = bad[1]  # 9 entries still, one vertex twice, one missing
    write_index(src, bad)
    load_error(src, "test.index", f"line 5: test vertex {bad[1]} is listed twice (first on line 2)",
               kind=GraphFormatError)


@pytest.mark.parametrize("value, needle", [
    (400000000, "test vertex 400000000 is outside [510, 522)"),
    (522, "test vertex 522 is outside [510, 522)"),  # one past the graph's last vertex
    (3, "test vertex 3 is outside [510, 522)"),  # a training vertex
    (-1, "test vertex -1 is outside"),
    ("9" * 25, f"test vertex {'9' * 25} is outside [510, 522)"),
    ("9" * 5000, "is out of range"),
])
def test_test_index_out_of_range(unsummed, value, needle):
    src, _, test_index = unsummed
    bad = list(test_index)
    bad[6] = value
    write_index(src, bad)
    # no allocation in proportion to 400000000: a few MB at most
    load_error(src, "test.index", "line 7: ", needle, kind=GraphFormatError, peak=16 * MB)


def test_test_index_count_and_start(unsummed):
    src, _, test_index = unsummed
    write_index(src, test_index[:-1])
    load_error(src, "test.index", "lists 8 test vertices", "ind.citeseer.tx", "have 9 rows",
               kind=GraphFormatError)
    write_index(src, list(test_index) + [513])  # a gap vertex: unique, in range
    load_error(src, "test.index", "lists 10 test vertices", kind=GraphFormatError)
    # unique, in range and one per row, but not starting right after allx: slot 0
    # (vertex 510) replaced by slot 3, a gap
    bad = [511 + 2 if v == 510 else v for v in test_index]
    write_index(src, bad)
    line = bad.index(511) + 1
    load_error(src, "test.index", f"line {line}: the smallest test vertex is 511",
               kind=GraphFormatError)


@pytest.mark.parametrize("content, needle", [
    (b"510\nabc\n", "line 2: expected one vertex id (an integer) per line, got 'abc'"),
    (b"510\n511 512\n", "line 2: expected one vertex id"),
    (b"510\n5.5\n", "line 2: expected one vertex id"),
    (b"510\n\xff\xfe\n", "line 2: expected one vertex id"),
    (b"\n \n", "no test indices"),
])
def test_test_index_not_integers(unsummed, content, needle):
    src, _, _ = unsummed
    (src / "ind.citeseer.test.index").write_bytes(content)
    load_error(src, "test.index", needle, kind=GraphFormatError)


def test_test_index_blank_lines_and_crlf_accepted(unsummed):
    src, objs, test_index = unsummed
    body = "\r\n".join(map(str, test_index)) + "\r\n\r\n"
    (src / "ind.citeseer.test.index").write_bytes(("\n" + body).encode())
    data = load_planetoid("citeseer", root=src, download=False)
    ref = naive_gcn.planetoid_reference(
        objs["x"], objs["y"], objs["tx"], objs["ty"], objs["allx"], objs["ally"],
        objs["graph"], test_index,
    )
    check_against_reference(data, ref)


def write_part(src, part, obj, protocol=2):
    (src / f"ind.citeseer.{part}").write_bytes(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("graph, needle", [
    ({"0": [1]}, "vertex ids must be non-negative integers, got '0' (str) as a key"),
    ({0: [1], 1: ["2"]}, "got '2' (str) in the list of vertex 1"),
    ({0: [1.0]}, "got 1.0 (float) in the list of vertex 0"),
    ({0: [-1]}, "got -1 (int) in the list of vertex 0"),
    ({True: [1]}, "got True (bool) as a key"),
    ({0: 5}, "the neighbours of vertex 0 must be a list of vertex ids, got int"),
    ({0: [[1]]}, "got a list (list) in the list of vertex 0"),
    ([[1], [0]], "unexpected content of type list"),
])
def test_graph_with_bad_ids(unsummed, graph, needle):
    src, _, _ = unsummed
    write_part(src, "graph", graph)
    load_error(src, "graph", needle, kind=GraphFormatError)


def test_graph_beyond_features_and_huge_ids(unsummed):
    src, objs, _ = unsummed
    graph = defaultdict(list, objs["graph"])
    graph[530].append(0)  # 522 vertices have features
    write_part(src, "graph", graph)
    load_error(src, "graph", "names vertex 530", "cover only vertices 0..521",
               kind=GraphFormatError)
    write_part(src, "graph", {0: [10**12]})  # one edge cannot back 10**12 vertices
    load_error(src, "graph", "names 1000000000001 vertices but holds only 1 edges",
               "GRAPHPAR_MAX_VERTICES", kind=LimitError, peak=16 * MB)


def test_graph_lists_repeated_by_reference(unsummed):
    src, _, _ = unsummed
    shared = list(range(20000))
    write_part(src, "graph", {u: shared for u in range(20000)})  # 4*10**8 "edges"
    load_error(src, "graph", "hold 400000000 neighbours in all", kind=LimitError,
               peak=16 * MB)


def huge_csr(shape, rows=2):
    m = sp.csr_matrix(np.eye(rows, dtype=np.float32))
    m._shape = shape
    return m


@pytest.mark.parametrize("part, obj, protocol, needles", [
    ("x", Reduce(np.ndarray, ((10**13,),)), 2,
     ["declares an array of shape (10000000000000,) and dtype float64 (80000000000000 bytes)",
      "bytes of the file can hold"]),
    ("allx", Reduce(np.ndarray, ((10**13,),)), 0, ["shape (10000000000000,)"]),
    ("ally", Reduce(np.ndarray, ((10**6, 10**6), np.dtype("i1"))), 2, ["shape (1000000, 1000000)"]),
    ("ty", Reduce(np.zeros(0).__reduce__()[0], (np.ndarray, (10**13,), b"b")), 2,
     ["shape (10000000000000,) and dtype int8"]),
    ("tx", huge_csr((2, 10**12)), 2,
     ["sparse matrix of declared shape (2, 1000000000000)", "GRAPHPAR_MAX_MEMORY"]),
    ("allx", huge_csr((10**13, 2)), 2, ["declared shape (10000000000000, 2)"]),
])
def test_pickle_declaring_huge_arrays(unsummed, part, obj, protocol, needles):
    src, _, _ = unsummed
    write_part(src, part, obj, protocol)
    size = (src / f"ind.citeseer.{part}").stat().st_size
    assert size < 1000
    load_error(src, part, *needles, kind=LimitError, peak=16 * MB)


def test_the_issues_54_byte_pickle(unsummed):
    src, _, _ = unsummed
    # numpy.ndarray((10**13,), 'f8') in protocol 0, written by hand
    payload = b"cnumpy\nndarray\n((I10000000000000\ntS'f8'\ntR."
    assert len(payload) < 60
    (src / "ind.citeseer.y").write_bytes(payload)
    load_error(src, "y", "declares an array of shape (10000000000000,)", kind=LimitError,
               peak=16 * MB)


def array_state(shape, dtype, raw):
    """A pickle of _reconstruct(ndarray, (0,), 'b') given the state (shape, dtype, raw)."""
    class Arr:
        def __reduce__(self):
            rec = np.zeros(0).__reduce__()[0]
            return (rec, (np.ndarray, (0,), b"b"), (1, shape, np.dtype(dtype), False, raw))
    return pickle.dumps(Arr(), protocol=2)


MALFORMED = {
    "empty": b"",
    "truncated": pickle.dumps(np.eye(3), protocol=2)[:-7],
    "not a pickle": b"hello world\n",
    "top-level list": pickle.dumps([1, 2, 3], protocol=2),
    "deep nesting": b"\x80\x02" + b"]" * 50000 + b".",
    "object array": pickle.dumps(np.array([1, "a"], dtype=object), protocol=2),
    "string array": pickle.dumps(np.array(["ab", "c"]), protocol=2),
    "short data": array_state((3,), "f8", b"12345"),
    "huge state": array_state((10**13,), "f8", b"123"),
    "negative shape": array_state((-1,), "f8", b""),
    "str shape": array_state(("3",), "f8", b"123"),
    "list called": pickle.dumps(Reduce(list, ("x" * 10,)), protocol=2),
    "dict as sparse state": pickle.dumps(Reduce(np.ndarray, ("abc",)), protocol=2),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_pickles_named(unsummed, case):
    src, _, _ = unsummed
    (src / "ind.citeseer.ally").write_bytes(MALFORMED[case])
    load_error(src, "ally", peak=16 * MB)


def test_sparse_with_bad_entries(unsummed):
    src, objs, _ = unsummed
    m = sp.csr_matrix(objs["tx"], copy=True)
    m.indices[0] = 10**6  # a column outside the 9 features
    write_part(src, "tx", m)
    load_error(src, "tx", "outside its shape", kind=GraphFormatError)
    m = sp.csr_matrix(objs["tx"], copy=True)
    m.data[0] = np.nan
    write_part(src, "tx", m)
    load_error(src, "tx", "non-finite value nan", kind=GraphFormatError)


def test_mismatched_matrices(unsummed):
    src, objs, _ = unsummed
    write_part(src, "tx", sp.csr_matrix(objs["tx"].toarray()[:, :5]))
    load_error(src, "tx", "ind.citeseer.allx and ind.citeseer.tx must have as many columns",
               kind=GraphFormatError)
    write_part(src, "tx", objs["tx"])
    ally = objs["ally"].copy()
    ally[0, 0] = np.nan
    write_part(src, "ally", ally)
    load_error(src, "ally", "non-finite value nan at row 0, column 0", kind=GraphFormatError)
    write_part(src, "ally", objs["ally"][:-1])
    load_error(src, "ally", "must have as many rows", kind=GraphFormatError)
    write_part(src, "ally", objs["ally"])
    write_part(src, "y", objs["ally"][:20])  # 20 + 500 validation > 510 rows of allx
    load_error(src, "y", "need 520 rows in ind.citeseer.allx, which has 510",
               kind=GraphFormatError)


def test_pickle_repeating_one_string_does_not_multiply(unsummed):
    # one 1 MB latin-1 string encoded 2000 times: 2 GB if each call made a copy
    src, _, _ = unsummed
    text = "\x00" * MB
    enc = Reduce(__import__("_codecs").encode, (text, "latin1"))
    write_part(src, "x", [enc] * 2000)
    load_error(src, "x", "unexpected content of type list", kind=GraphFormatError,
               peak=32 * MB)


def test_mutated_pickles_never_escape(unsummed):
    """Random byte edits of a real pickle: a named ValueError or a load, nothing else."""
    src, objs, _ = unsummed
    good = (src / "ind.citeseer.tx").read_bytes()
    rng = np.random.default_rng(11)
    for _ in range(300):
        raw = bytearray(good)
        for pos in rng.integers(0, len(raw), rng.integers(1, 4)):
            raw[pos] = rng.integers(0, 256)
        if rng.random() < 0.2:
            raw = raw[: rng.integers(0, len(raw))]
        (src / "ind.citeseer.tx").write_bytes(bytes(raw))
        try:
            data = load_planetoid("citeseer", root=src, download=False)
        except ValueError as exc:
            assert "ind.citeseer." in str(exc) and "\n" not in str(exc), str(exc)
        else:
            assert data.features.shape == (522, 9)


def test_real_cora_unchanged_by_the_checks(planetoid_dir, tmp_path, monkeypatch):
    """Cora's files under a name without kept sums go through every check and load alike."""
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "no-sums")
    d = tmp_path / "planetoid"
    d.mkdir()
    for part in datasets._PARTS:
        (d / f"ind.citeseer.{part}").write_bytes((planetoid_dir / f"ind.cora.{part}").read_bytes())
    got = load_planetoid("citeseer", root=tmp_path, download=False)
    want = load_planetoid("cora", root=planetoid_dir, download=False)
    for a, b in zip(got, want, strict=True):
        if sp.issparse(a):
            assert (a != b).nnz == 0 and a.nnz == b.nnz
        else:
            np.testing.assert_array_equal(a, b)
