"""The graph reader's messages name keywords for Python callers and flags for the CLI.

The wording is chosen where each message is made (graphpar.io._wording), so the
same failing read says ``weight='km'`` to a Python caller and ``--weight-col 'km'``
inside ``flag_wording()``; the CLI's own tests check the command's output.
"""

import threading
import warnings

import pytest

from graphpar.errors import LimitError
from graphpar.io import read_graph
from graphpar.io._wording import FLAGS, KEYWORDS, flag_wording, wording

CASES = [
    # (file name, contents, read_graph keywords, the keyword text, the flag text)
    ("r.csv", "from,to,km\n0,1,2\n", {"weight": "miles"},
     "weight='miles' is not a column", "--weight-col 'miles' is not a column"),
    ("r.csv", "from,to,km\n0,1,2\n", {"target": "from"},
     "source and target are the same column", "--source-col and --target-col are the same"),
    ("s.csv", "from,to,road\n0,1,main\n", {},
     "pass weight=False for unweighted edges, or weight=<column>",
     "pick another with --weight-col NAME"),
    ("g.gr", "p sp 2 1\na 1 2 3\n", {"weight": "km"},
     "source=, target= and weight= choose the columns",
     "--source-col, --target-col and --weight-col choose the columns"),
    ("g.gr", "p sp 2 1\na 1 2 3\n", {"relabel": True},
     "relabel=True applies to edge lists", "--relabel applies to edge lists"),
    ("huge.el", "0 1\n9000000000 1\n", {},
     "or renumber the vertices compactly)",
     "or renumber the vertices compactly, as --relabel does for an edge list)"),
]


def _message(path, kw):
    with pytest.raises((ValueError, LimitError)) as info:
        read_graph(path, **kw)
    return str(info.value)


@pytest.mark.parametrize("name, text, kw, as_keywords, as_flags", CASES,
                         ids=[f"{c[0]}-{sorted(c[2])}" for c in CASES])
def test_each_message_in_both_wordings(tmp_path, name, text, kw, as_keywords, as_flags):
    path = tmp_path / name
    path.write_text(text)
    msg = _message(path, kw)
    assert as_keywords in msg and "--" not in msg
    with flag_wording():
        msg = _message(path, kw)
    assert as_flags in msg
    assert "=True" not in msg and "weight=" not in msg and "source=" not in msg


def test_sparse_ids_warning_in_both_wordings(tmp_path):
    path = tmp_path / "sparse.el"
    path.write_text("0 1\n5000000 1\n")
    for scope, words in ((None, "read it with relabel=True"), (flag_wording, "run with --relabel")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if scope is None:
                read_graph(path)
            else:
                with scope():
                    read_graph(path)
        assert len(caught) == 1 and words in str(caught[0].message)


def test_the_wording_is_restored_after_an_error_and_is_per_thread(tmp_path):
    path = tmp_path / "g.gr"
    path.write_text("p sp 2 1\na 1 2 3\n")
    seen = []
    with flag_wording():
        with pytest.raises(ValueError, match="--relabel"):
            read_graph(path, relabel=True)
        # another thread starts from the default: a Python caller there is not affected
        t = threading.Thread(target=lambda: seen.append(wording()))
        t.start()
        t.join()
        assert wording() is FLAGS
    assert seen == [KEYWORDS]
    assert wording() is KEYWORDS
    with pytest.raises(ValueError, match=r"relabel=True applies"):
        read_graph(path, relabel=True)
