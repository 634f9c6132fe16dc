"""graphpar.plot: real PNGs, what the figures show, the missing-matplotlib message, bad input."""

from __future__ import annotations

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from graphpar import plot  # noqa: E402
from graphpar.plot import (  # noqa: E402
    distance_histogram,
    hazard_ratios,
    survival_curves,
    training_curves,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path, width, height):
    """A real PNG of the figure's size (inches x 100 dpi) with more than one colour."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    img = imread(path)
    assert img.shape[:2] == (height, width)
    assert np.unique(img.reshape(-1, img.shape[-1]), axis=0).shape[0] > 2  # not blank
    return img


def history(epochs=20):
    e = np.arange(1, epochs + 1)
    return {"loss": list(2.0 / e), "train_accuracy": list(1 - 0.5 / e),
            "val_loss": list(2.2 / e), "val_accuracy": list(0.9 - 0.5 / e)}


def test_distance_histogram_counts_and_png(tmp_path):
    rng = np.random.default_rng(0)
    d = np.concatenate([rng.exponential(10.0, 500), [np.inf] * 7, [0.0]])
    out = tmp_path / "hist.png"
    fig = distance_histogram(d, out, bins=12)
    assert isinstance(fig, Figure)
    assert_png(out, 640, 420)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    counts, _ = np.histogram(d[np.isfinite(d)], bins=12)
    np.testing.assert_array_equal(heights, counts)
    legend = ax.get_legend().get_texts()[0].get_text()
    assert legend == "501 reached; 7 unreachable (not shown)"
    assert ax.get_title() == "Shortest-path distances"


def test_distance_histogram_pools_sources_takes_edges_and_title():
    d = np.array([[0.0, 1.0, np.inf], [2.0, 0.0, 3.0]])
    fig = distance_histogram(d, bins=[0.0, 1.5, 3.0], title="two sources")
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == [3, 2]
    assert "5 reached; 1 unreachable" in ax.get_legend().get_texts()[0].get_text()
    assert ax.get_title() == "two sources"


def test_distance_histogram_nothing_reached(tmp_path):
    out = tmp_path / "none.png"
    fig = distance_histogram([np.inf, np.inf], out)
    assert not fig.axes[0].patches
    assert "no finite distances" in fig.axes[0].texts[0].get_text()
    assert_png(out, 640, 420)


def test_training_curves_draw_the_history(tmp_path):
    h = history(20)
    out = tmp_path / "curves.png"
    fig = training_curves(h, out, title="cora")
    assert_png(out, 1000, 400)
    loss_ax, acc_ax = fig.axes
    assert [ax.get_ylabel() for ax in fig.axes] == ["loss", "accuracy"]
    lines = {ln.get_label(): ln for ax in fig.axes for ln in ax.get_lines()}
    for key, label in (("loss", "training loss"), ("val_loss", "validation loss"),
                       ("train_accuracy", "training accuracy"),
                       ("val_accuracy", "validation accuracy")):
        x, y = lines[label].get_data()
        np.testing.assert_array_equal(x, np.arange(1, 21))
        np.testing.assert_array_equal(y, h[key])
    assert {ln.get_label() for ln in loss_ax.get_lines()} == {"training loss",
                                                              "validation loss"}
    assert fig.get_suptitle() == "cora"


def test_training_curves_missing_keys_and_nan(tmp_path):
    # no validation split: NaN values; only loss recorded: an empty accuracy panel
    fig = training_curves({"loss": [1.0, 0.5], "val_loss": [np.nan, np.nan],
                           "epoch_seconds": [0.1, 0.1]}, tmp_path / "c.png")
    loss_ax, acc_ax = fig.axes
    assert len(loss_ax.get_lines()) == 2 and not acc_ax.get_lines()
    assert acc_ax.texts[0].get_text() == "no accuracy recorded"
    assert_png(tmp_path / "c.png", 1000, 400)


def test_survival_curves(tmp_path):
    t = [0.5, 1.0, 2.0, 4.0]
    s = [[1.0, 0.8, 0.6, 0.3], [0.9, 0.5, 0.2, 0.0]]
    out = tmp_path / "surv.png"
    fig = survival_curves(t, s, labels=["low risk", "high risk"], path=out)
    assert_png(out, 640, 420)
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["low risk", "high risk"]
    np.testing.assert_array_equal(lines[1].get_data()[1], s[1])
    one = survival_curves(t, s[0])
    assert len(one.axes[0].get_lines()) == 1 and one.axes[0].get_legend() is None


def test_hazard_ratios(tmp_path):
    names = ["age", "sex", "ph.ecog"]
    hr, lo, hi = [1.011, 0.575, 1.59], [0.993, 0.415, 1.24], [1.03, 0.798, 2.04]
    out = tmp_path / "hr.png"
    fig = hazard_ratios(names, hr, lo, hi, out)
    img = assert_png(out, 640, int(round(100 * (1.2 + 0.45 * 3))))
    assert img.size
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    assert ax.get_xscale() == "log"
    x, y = ax.get_lines()[0].get_data()  # the points, first row at the top
    np.testing.assert_array_equal(x, hr)
    np.testing.assert_array_equal(y, [2, 1, 0])


def test_png_write_is_atomic(tmp_path, monkeypatch):
    out = tmp_path / "keep.png"
    out.write_bytes(b"old")

    def broken(self, f, **kw):
        f.write(b"\x89PNG half")
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(OSError, match="disk full"):
        distance_histogram([1.0, 2.0], out)
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.png"]


def test_backend_and_pyplot_left_alone():
    before = matplotlib.get_backend()
    had_pyplot = "matplotlib.pyplot" in sys.modules
    training_curves(history(3))
    assert matplotlib.get_backend() == before
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot


@pytest.mark.parametrize("call", [
    lambda: distance_histogram([1.0]),
    lambda: training_curves({"loss": [1.0]}),
    lambda: survival_curves([1.0], [1.0]),
    lambda: hazard_ratios(["a"], [1.0], [0.5], [2.0]),
])
def test_missing_matplotlib_says_how_to_install(monkeypatch, call):
    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, mod, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError) as info:
        call()
    assert str(info.value) == ("graphpar's plots need matplotlib; install it with: "
                               "pip install 'graphpar[plot]'")
    assert plot.INSTALL_HINT in str(info.value)


@pytest.mark.parametrize("call, kind, message", [
    (lambda: distance_histogram([1.0, np.nan]), ValueError, "distances contains nan at index 1"),
    (lambda: distance_histogram([[0.0, 1.0], [2.0, -np.inf]]), ValueError,
     "distances contains -inf at index 1, 1"),
    (lambda: distance_histogram(["a", "b"]), TypeError, "distances must be numeric"),
    (lambda: distance_histogram(np.zeros((2, 2, 2))), ValueError,
     "distances must be 1-D or 2-D, got shape (2, 2, 2)"),
    (lambda: distance_histogram([1.0], bins=0), ValueError, "bins must be >= 1, got 0"),
    (lambda: distance_histogram([1.0], bins=2.5), TypeError,
     "bins must be an integer >= 1 or a sequence of edges, got 2.5"),
    (lambda: distance_histogram([1.0], bins=[2.0, 1.0]), ValueError,
     "bins must be an integer >= 1 or at least 2 increasing edges, got [2.0, 1.0]"),
    (lambda: distance_histogram([1.0], title=3), TypeError, "title must be a string, got 3"),
    (lambda: training_curves([1.0, 2.0]), TypeError,
     "history must be a dict of per-epoch lists, got list"),
    (lambda: training_curves({"acc": [1.0]}), ValueError,
     "history has none of the keys loss, val_loss, train_accuracy, val_accuracy; got ['acc']"),
    (lambda: training_curves({"loss": [1.0, "x"]}), TypeError,
     "history['loss'] must be numeric"),
    (lambda: training_curves({"loss": [[1.0], [2.0]]}), ValueError,
     "history['loss'] must be 1-D, got shape (2, 1)"),
    (lambda: training_curves({"loss": [1.0, -np.inf]}), ValueError,
     "history['loss'] contains -inf at index 1"),
    (lambda: survival_curves([1.0, 2.0], [1.0, 0.5, 0.2]), ValueError,
     "survival has 3 time points per curve (shape (3,)) but times has 2"),
    (lambda: survival_curves([2.0, 1.0], [1.0, 0.5]), ValueError,
     "times must be nondecreasing, got 1.0 after 2.0 at index 1"),
    (lambda: survival_curves([1.0, 2.0], [[1.0, 0.5], [1.0, 1.5]]), ValueError,
     "survival must be in [0, 1], got 1.5 at index 1, 1"),
    (lambda: survival_curves([1.0, np.inf], [1.0, 0.5]), ValueError,
     "times contains inf at index 1"),
    (lambda: survival_curves([1.0], [[1.0], [0.5]], labels=["a"]), ValueError,
     "labels has 1 entries but there are 2 curves"),
    (lambda: survival_curves([1.0], [1.0], labels="ab"), TypeError,
     "labels must be a sequence of strings"),
    (lambda: hazard_ratios(["a", "b"], [1.0], [0.5], [2.0]), ValueError,
     "hr has length 1 but names has 2"),
    (lambda: hazard_ratios(["a"], [1.0], [0.0], [2.0]), ValueError,
     "lower must be positive, got 0.0 for 'a'"),
    (lambda: hazard_ratios(["a"], [1.0], [0.5], [np.inf]), ValueError,
     "upper contains inf at index 0"),
    (lambda: hazard_ratios(["a"], [3.0], [0.5], [2.0]), ValueError,
     "the interval [0.5, 2.0] of 'a' does not contain its hazard ratio 3.0"),
    (lambda: hazard_ratios("age", [1.0], [0.5], [2.0]), TypeError,
     "names must be a sequence of strings"),
])
def test_bad_input_messages(call, kind, message):
    with pytest.raises(kind) as info:
        call()
    assert message in str(info.value)
