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
