"""Byte-scanning parsers for the bodies of text graph files (DIMACS, Matrix Market, edge lists).

The kernels read a ``uint8`` buffer that starts at the beginning of a line and
ends at the end of a line (or of the file), so that a distributed reader can
hand each rank its own slice of one file. They never raise: they stop at the
first problem and report its kind and byte offset in ``res``; the caller
(:mod:`graphpar.io`) turns the offset into a line number only on error.

Result slots (``res``, int64, length :data:`RES_SIZE`):

``res[0]`` records parsed, ``res[1]`` error code (:data:`OK` when none),
``res[2]`` byte offset of the problem (start of the offending token or line),
``res[3]`` number of weights left for the exact slow path (see below),
``res[4]`` column (0 = first vertex, 1 = second vertex, 2 = weight) of the problem.

Weights are scanned, not converted, in the kernel: each record stores its
decimal mantissa and exponent (``mant``, ``e10``), which
:func:`decimal_values` turns into float64 exactly, vectorised in NumPy, when
the mantissa has at most 18 significant digits and the decimal exponent is
within +-22: up to 15 digits by one correctly rounded IEEE operation, 16 to 18
digits (e.g. Python's 17-digit ``repr``) by a candidate certified with an
error-free double-double residual (:func:`_verified_scale`). Keeping floating
point out of the kernel halves its compile time. Any other numeric-looking
token (``inf``, ``nan``, more digits, huge exponents) and any 16 to 18 digit
one has its record index and byte offset stored in ``slow[j, 0]`` and
``slow[j, 1]``; the caller converts the tokens :func:`decimal_values` leaves
NaN with a correctly rounded parser (:func:`gather_tokens` + ``numpy.astype``).
"""

import numpy as np
from numba import njit

# kinds of body
GR = 0  # DIMACS: 'c' comments, 'a u v w' arcs
MTX = 1  # Matrix Market coordinate entries, '%' comments
EDGELIST = 2  # 'u v [w]', '#' or '%' comments

# error codes
OK = 0
E_BAD_LINE = 1  # a line that is not a record nor a comment (e.g. 'p' in a .gr body)
E_MISSING = 2  # the line ends before all columns are read
E_NOT_INTEGER = 3  # a vertex token that is not a non-negative integer
E_RANGE = 4  # a vertex id outside [base, base + nbound)
E_NOT_NUMBER = 5  # a weight token that is not a number
E_EXTRA = 6  # more columns than expected
E_TOO_MANY = 7  # more records than max_records
E_TOO_LARGE = 8  # an integer with more than 18 digits

RES_SIZE = 5

_POW10 = np.array([10.0**k for k in range(23)])


@njit(cache=True, inline="always")
def _is_blank(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, inline="always")
def _is_delim(c):
    # a token ends at blanks or the end of the line
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12 or c == 10


@njit(cache=True)
def _skip_line(buf, i):
    n = buf.size
    while i < n and buf[i] != 10:
        i += 1
    return i + 1


@njit(cache=True)
def _parse_weight(buf, i):
    """Scan a number token at ``buf[i]``. Returns ``(mant, e10, end, status)``.

    status 0: the value is ``mant * 10**(e10 >> 1)``, negated when ``e10 & 1``,
    with ``0 <= mant < 10**18`` and ``|e10 >> 1| <= 22``; 1: numeric but for the
    slow path (``mant`` -1); 2: not a number. No floating point here: the
    conversion is :func:`decimal_values`, vectorised (compiling it costs seconds).
    """
    n = buf.size
    start = i
    neg = 0
    if i < n and (buf[i] == 43 or buf[i] == 45):  # '+' or '-'
        if buf[i] == 45:
            neg = 1
        i += 1
    mant = np.int64(0)
    sig = 0
    exp10 = 0
    ndig = 0
    while i < n and 48 <= buf[i] <= 57:
        d = buf[i] - 48
        if sig > 0 or d != 0:
            if sig < 18:
                mant = mant * 10 + d
            else:
                exp10 += 1
            sig += 1
        ndig += 1
        i += 1
    if i < n and buf[i] == 46:  # '.'
        i += 1
        while i < n and 48 <= buf[i] <= 57:
            d = buf[i] - 48
            if sig > 0 or d != 0:
                if sig < 18:
                    mant = mant * 10 + d
                    exp10 -= 1
                sig += 1
            else:
                exp10 -= 1
            ndig += 1
            i += 1
    status = 0
    if ndig == 0:
        status = 2
    elif i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' or 'E'
        i += 1
        eneg = False
        if i < n and (buf[i] == 43 or buf[i] == 45):
            eneg = buf[i] == 45
            i += 1
        e = 0
        edig = 0
        while i < n and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            edig += 1
            i += 1
        if edig == 0:
            status = 2
        exp10 += -e if eneg else e
    if status == 0 and i < n and not _is_delim(buf[i]):
        status = 2
    if status == 2:
        # inf, nan, infinity and similar letters: let the exact parser decide
        j = start
        if j < n and (buf[j] == 43 or buf[j] == 45):
            j += 1
        allowed = True
        k = j
        while k < n and not _is_delim(buf[k]):
            c = buf[k] | 32  # lower case
            if not (c == 105 or c == 110 or c == 102 or c == 97 or c == 116 or c == 121):
                allowed = False
                break
            k += 1
        if allowed and k > j:
            return np.int64(-1), 0, k, 1
        while i < n and not _is_delim(buf[i]):
            i += 1
        return np.int64(-1), 0, i, 2
    if sig == 0:
        return mant, neg, i, 0
    if sig > 18 or exp10 > 22 or exp10 < -22:
        return np.int64(-1), 0, i, 1
    return mant, 2 * exp10 + neg, i, 0


EXACT_MANTISSA = 10**15  # mantissas below this convert by one correctly rounded operation


def decimal_values(mant, e10, out):
    """Write the float64 values of scanned decimals (:func:`parse_edges`) into ``out``, exactly.

    ``mant`` (int64, ``0 <= mant < 10**18``) and ``e10`` (``2 * exp10 + negative``,
    ``|exp10| <= 22``) as the kernel stores them. Mantissas below 10**15 (at
    most 15 digits) take Clinger's fast path: both operands are exact, so one
    IEEE multiplication or division is correctly rounded. Longer ones (16 to
    18 digits, e.g. Python's 17-digit ``repr``) take :func:`_verified_scale`;
    the few it cannot certify come out NaN, for the caller's correctly rounded
    slow path. NumPy, not compiled: the same IEEE operations, no compile time.

    Examples
    --------
    >>> out = np.empty(3)
    >>> decimal_values(np.array([5, 25, 1]), np.array([0, 2 * -1 + 1, 2 * 3]), out)
    >>> out.tolist()
    [5.0, -2.5, 1000.0]
    """
    e = e10 >> 1
    np.copyto(out, mant, casting="unsafe")
    if e.any():
        up = np.flatnonzero(e > 0)
        out[up] *= _POW10[e[up]]
        down = np.flatnonzero(e < 0)
        out[down] /= _POW10[-e[down]]
    long = np.flatnonzero(mant >= EXACT_MANTISSA)
    if long.size:
        out[long] = _verified_scale(mant[long], e[long])
    neg = np.flatnonzero(e10 & 1)
    if neg.size:
        out[neg] = -out[neg]


def _split(a):
    c = 134217729.0 * a  # Dekker's split: 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    # a * b == p + err exactly (Dekker), barring overflow and underflow
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def _verified_scale(mant, exp10):
    """``mant * 10**exp10`` correctly rounded, element by element, or NaN where that cannot
    be certified.

    For ``0 < mant < 10**18`` and ``|exp10| <= 22``: a candidate ``q`` from two
    rounded operations is within an ulp or so; the residual ``exact - q`` is
    computed in double-double (error-free products, Sterbenz subtractions)
    and ``q`` is accepted only when the residual is clearly below half an ulp,
    i.e. ``q`` is the correctly rounded value; otherwise the neighbour towards
    the exact value is tried. Rare near-ties give NaN (slow path).
    """
    lo_i = mant % 2048
    hi = (mant - lo_i).astype(np.float64)  # at most 53 significant bits: exact
    lo = lo_i.astype(np.float64)
    mul = exp10 >= 0
    d = _POW10[np.abs(exp10)]
    with np.errstate(all="ignore"):  # both branches of np.where are computed
        return _verify(hi, lo, d, mul)


def _verify(hi, lo, d, mul):
    q = np.where(mul, (hi + lo) * d, (hi + lo) / d)
    scale = np.where(mul, 1.0, d)
    # (exact - q) for exact = (hi + lo) * d, or (exact - q) * d for (hi + lo) / d
    p1, e1 = _two_prod(hi, d)
    p2, e2 = _two_prod(lo, d)
    out = np.full(q.size, np.nan)
    open_ = np.ones(q.size, dtype=bool)
    for _ in range(3):
        fr, ex = np.frexp(q)
        open_ &= fr != 0.5  # a power of two: the ulp below is half as large
        ulp = np.ldexp(1.0, ex - 53)
        p, e = _two_prod(q, d)
        resid = np.where(mul, (p1 - q) + e1 + p2 + e2, ((hi - p) + lo) - e)
        ok = open_ & (np.abs(resid) < 0.5 * ulp * scale * (1.0 - 1.0 / 1048576.0))
        out[ok] = q[ok]
        open_ &= ~ok
        q = np.where(resid > 0, q + ulp, q - ulp)
    return out


@njit(cache=True)
def parse_edges(buf, kind, base, nbound, ncols, max_records, src, dst, mant, e10, slow, res):
    """Parse the records of a body slice into preallocated edge arrays.

    Parameters
    ----------
    buf : uint8[:]
        The body bytes; starts at a line start, ends at a line end or the file end.
    kind : int
        :data:`GR`, :data:`MTX` or :data:`EDGELIST`: which lines are comments
        and whether records start with ``a``.
    base : int
        1 for 1-based files (DIMACS, Matrix Market), 0 for edge lists.
    nbound : int
        Vertex ids minus ``base`` must lie in ``[0, nbound)``.
    ncols : int
        Numeric columns per record: 2 (no weight; ``w`` gets 1.0) or 3.
    max_records : int
        More records than this is error :data:`E_TOO_MANY`.
    src, dst : int64[:]
        Output vertex ids (0-based), capacity at least the number of records
        (the number of newlines in ``buf`` plus one always suffices).
    mant, e10 : int64[:]
        Output weights as scanned decimals, same capacity (with ``ncols`` 2:
        mantissa 1, ``e10`` 0); :func:`decimal_values` converts them.
    slow : int64[:, 2]
        Record index and byte offset of each weight that :func:`decimal_values`
        may not convert (16 to 18 digits) or cannot (``mant`` -1), same capacity.
    res : int64[RES_SIZE]
        Output status (see the module docstring).
    """
    n = buf.size
    i = 0
    count = 0
    nslow = 0
    code = OK
    where = 0
    col = 0
    while i < n:
        line_start = i
        while i < n and _is_blank(buf[i]):
            i += 1
        if i >= n:
            break
        c = buf[i]
        if c == 10:
            i += 1
            continue
        if kind == GR:
            if c == 99:  # 'c'
                i = _skip_line(buf, i)
                continue
            if c != 97 or (i + 1 < n and not _is_delim(buf[i + 1])):  # 'a'
                code = E_BAD_LINE
                where = line_start
                break
            i += 1
        elif kind == MTX:
            if c == 37:  # '%'
                i = _skip_line(buf, i)
                continue
        else:
            if c == 35 or c == 37:  # '#' or '%'
                i = _skip_line(buf, i)
                continue
        if count >= max_records:
            code = E_TOO_MANY
            where = line_start
            break
        # two vertex columns
        u = np.int64(0)
        v = np.int64(0)
        for col in range(2):
            while i < n and _is_blank(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                code = E_MISSING
                where = i
                break
            tok = i
            x = np.int64(0)
            nd = 0
            if buf[i] == 43:  # '+'
                i += 1
            while i < n and 48 <= buf[i] <= 57:
                if nd < 18:
                    x = x * 10 + (buf[i] - 48)
                nd += 1
                i += 1
            if nd == 0 or (i < n and not _is_delim(buf[i])):
                code = E_NOT_INTEGER
                where = tok
                break
            if nd > 18:
                code = E_TOO_LARGE
                where = tok
                break
            x -= base
            if x < 0 or x >= nbound:
                code = E_RANGE
                where = tok
                break
            if col == 0:
                u = x
            else:
                v = x
        if code != OK:
            break
        src[count] = u
        dst[count] = v
        if ncols >= 3:
            col = 2
            while i < n and _is_blank(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                code = E_MISSING
                where = i
                break
            tok = i
            m, e, i, status = _parse_weight(buf, i)
            if status == 2:
                code = E_NOT_NUMBER
                where = tok
                break
            if status == 1 or m >= EXACT_MANTISSA:
                slow[nslow, 0] = count
                slow[nslow, 1] = tok
                nslow += 1
            mant[count] = m
            e10[count] = e
        else:
            mant[count] = 1
            e10[count] = 0
        while i < n and _is_blank(buf[i]):
            i += 1
        if i < n and buf[i] != 10:
            code = E_EXTRA
            where = i
            col = ncols
            break
        i += 1
        count += 1
    res[0] = count
    res[1] = code
    res[2] = where
    res[3] = nslow
    res[4] = col


@njit(cache=True)
def token_width(buf, offsets, k):
    """Return the length of the longest of the first ``k`` tokens starting at ``offsets``."""
    n = buf.size
    best = 1
    for j in range(k):
        i = offsets[j]
        e = i
        while e < n and not _is_delim(buf[e]):
            e += 1
        if e - i > best:
            best = e - i
    return best


@njit(cache=True)
def gather_tokens(buf, offsets, k, out):
    """Copy the first ``k`` tokens starting at ``offsets`` into the rows of ``out`` (zero padded).

    ``out`` is a ``uint8[k, width]`` array; viewed as ``S{width}`` it can be
    converted with ``astype(np.float64)``.
    """
    n = buf.size
    width = out.shape[1]
    for j in range(k):
        i = offsets[j]
        t = 0
        while i < n and t < width and not _is_delim(buf[i]):
            out[j, t] = buf[i]
            i += 1
            t += 1
        while t < width:
            out[j, t] = 0
            t += 1


@njit(cache=True)
def find_newline(buf, start):
    """Return the index of the first ``\\n`` at or after ``start`` in ``buf``, or -1."""
    for i in range(max(start, 0), buf.size):
        if buf[i] == 10:
            return i
    return -1


@njit(cache=True)
def count_newlines(buf):
    """Return the number of ``\\n`` bytes in ``buf``."""
    c = 0
    for i in range(buf.size):
        if buf[i] == 10:
            c += 1
    return c


# ---------------------------------------------------------------- writers


@njit(cache=True)
def _write_uint(out, p, x):
    if x == 0:
        out[p] = 48
        return p + 1
    nd = 0
    y = x
    while y > 0:
        y //= 10
        nd += 1
    q = p + nd - 1
    while x > 0:
        out[q] = 48 + x % 10
        x //= 10
        q -= 1
    return p + nd


@njit(cache=True)
def format_int_records(prefix, src, dst, w, base, with_weight, out):
    """Write ``prefix u v [w]\\n`` lines (integral weights) into ``out``; return bytes used.

    ``prefix`` is a uint8 array written at the start of each line (e.g. ``b"a "``
    for DIMACS, empty for edge lists). Vertex ids get ``base`` added. ``w`` must
    hold integral values with ``|w| < 2**53``. ``out`` needs at most
    ``len(src) * (len(prefix) + 63)`` bytes.
    """
    p = 0
    for k in range(src.size):
        for j in range(prefix.size):
            out[p] = prefix[j]
            p += 1
        p = _write_uint(out, p, src[k] + base)
        out[p] = 32
        p += 1
        p = _write_uint(out, p, dst[k] + base)
        if with_weight:
            out[p] = 32
            p += 1
            x = w[k]
            if x < 0:
                out[p] = 45
                p += 1
                x = -x
            p = _write_uint(out, p, np.int64(x))
        out[p] = 10
        p += 1
    return p


@njit(cache=True)
def format_text_records(prefix, src, dst, base, wtext, out):
    """Like :func:`format_int_records`, with the weights given as text.

    ``wtext`` holds one weight token per edge, each followed by ``\\n``; it is
    copied as is after ``u v``. ``out`` needs at most
    ``len(src) * (len(prefix) + 42) + len(wtext)`` bytes. Returns bytes used.
    """
    p = 0
    t = 0
    for k in range(src.size):
        for j in range(prefix.size):
            out[p] = prefix[j]
            p += 1
        p = _write_uint(out, p, src[k] + base)
        out[p] = 32
        p += 1
        p = _write_uint(out, p, dst[k] + base)
        out[p] = 32
        p += 1
        while wtext[t] != 10:
            out[p] = wtext[t]
            p += 1
            t += 1
        out[p] = 10
        p += 1
        t += 1
    return p
