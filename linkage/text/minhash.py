"""MinHash signatures, computed for a whole batch of texts at once in numpy.

Hash family. Each 64-bit shingle hash (already mixed by MurmurHash3's finalizer) is folded to its
top 32 bits `x`, and permutation `i` maps it to

    h_i(x) = (a_i * x + b_i) mod 2^32,    a_i odd, b_i uniform,

in wrapping uint32 arithmetic: one vectorised multiply and one add per (shingle, permutation), about
twice as fast as any exact 64-bit scheme in numpy (which has no 64x64->128 multiply; the
Mersenne-prime (a*x + b) mod (2^61 - 1) needs a split product and a reduction, five or more passes
over the biggest array of the computation). The choice, and what it costs:

* With `a` odd, each h_i is a bijection of the 32-bit values: two shingles tie in a permutation
  only if their folded hashes are equal, probability 2^-32 per pair of distinct shingles (for two
  300-shingle texts, about 2e-5 that any of their pairs does, moving their Jaccard by 1/600).
* A signature row of two texts agrees by chance, without a shared minimum, with probability
  2^-32: far below the sampling error of 128 rows (sd sqrt(J(1-J)/128), about 0.04 at J = 0.8).
* The family is not 2-independent (low bits of h_i depend only on low bits of x), which would
  bias MinHash on structured keys; the keys here are outputs of a 64-bit mixer, and the tests
  check that the estimates are unbiased with binomial spread at every J.

Layout: products are computed as a (num_perm, chunk) block so that `np.minimum.reduceat` runs
along contiguous rows; runs of whole texts of about `chunk_size` shingles keep the block in cache
(4-8 MiB) and bound memory whatever the number of texts; a text longer than that is split.
Texts of at most `SHORT_MAX` shingles skip `reduceat` (its fixed cost per text and permutation
dominates them): padded to a few widths, they are reduced by vectorised minimum passes over a
(texts, num_perm) block. Every path gives the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from linkage.errors import ParameterError
from linkage.text.shingles import Shingles

SCHEME = "affine-mod-2^32/v1"
EMPTY = np.uint32(0xFFFFFFFF)  # signature row of a text without shingles
_U64 = np.uint64
_MASK64 = (1 << 64) - 1


def _splitmix64(state: int) -> int:
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def permutations(num_perm: int = 128, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients (a, b) of the `num_perm` hash functions, from `seed` by SplitMix64.

    Defined here rather than by numpy's generators so that signatures never change with the
    numpy version.
    """
    if not isinstance(num_perm, int) or num_perm < 1:
        msg = f"`num_perm` must be a positive integer. Got {num_perm!r} instead."
        raise ParameterError(msg)
    base = (int(seed) * 0x632BE59BD9B4E019) & _MASK64
    coeffs = [_splitmix64(base + i) for i in range(2 * num_perm)]
    a = np.array([c & 0xFFFFFFFF | 1 for c in coeffs[0::2]], dtype=np.uint32)
    b = np.array([c & 0xFFFFFFFF for c in coeffs[1::2]], dtype=np.uint32)
    return a, b


def chunks(offsets: np.ndarray, chunk_size: int):
    """Runs of whole texts [d0, d1) holding about `chunk_size` shingles; a longer text alone."""
    n = len(offsets) - 1
    bucket = offsets[:-1] // chunk_size
    cuts = np.flatnonzero(np.diff(bucket)) + 1
    edges = np.concatenate([[0], cuts, [n]])
    yield from zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)


SHORT_MAX = 16
"""Texts with at most this many shingles take the padded path of `_short_signatures`."""
_SHORT_WIDTHS = np.array([1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16])
_SHORT_GROUP = 512


def signatures(
    shingles: Shingles, num_perm: int = 128, seed: int = 0, *, chunk_size: int = 8192
) -> np.ndarray:
    """MinHash signatures, one uint32 row of `num_perm` values per text.

    A text without shingles gets a row of `EMPTY` (0xFFFFFFFF), which LSH ignores.
    """
    a, b = permutations(num_perm, seed)
    n = len(shingles)
    out = np.full((n, num_perm), EMPTY, dtype=np.uint32)
    offsets = shingles.offsets
    if int(offsets[-1]) == 0:
        return out
    x = (shingles.hashes >> _U64(32)).astype(np.uint32)
    counts = np.diff(offsets)
    short = (counts > 0) & (counts <= SHORT_MAX)
    if not short.any():
        _reduceat_signatures(x, offsets, a, b, out, chunk_size)
        return out
    _short_signatures(x, offsets, counts, np.flatnonzero(short), a, b, out)
    long = np.flatnonzero(counts > SHORT_MAX)
    if len(long):
        sizes = counts[long]
        sub = np.zeros(len(long) + 1, dtype=np.int64)
        np.cumsum(sizes, out=sub[1:])
        take = np.repeat(offsets[long] - sub[:-1], sizes) + np.arange(sub[-1], dtype=np.int64)
        part = np.full((len(long), num_perm), EMPTY, dtype=np.uint32)
        _reduceat_signatures(x[take], sub, a, b, part, chunk_size)
        out[long] = part
    return out


def _short_signatures(x, offsets, counts, docs, a, b, out) -> None:
    """Rows of texts with 1 to `SHORT_MAX` shingles, without `reduceat` (whose fixed cost per
    text and permutation dominates for a handful of shingles): texts grouped by their count
    rounded up to one of `_SHORT_WIDTHS`, each padded to that width by repeating its last
    shingle (a repeat cannot change a minimum), then `width` vectorised multiply-add-minimum
    passes over a (texts, num_perm) block, which is the signature rows themselves."""
    width_of = np.searchsorted(_SHORT_WIDTHS, counts[docs])
    order = np.argsort(width_of, kind="stable")
    docs, width_of = docs[order], width_of[order]
    cuts = np.flatnonzero(np.diff(width_of)) + 1
    num_perm = len(a)
    acc = np.empty((_SHORT_GROUP, num_perm), dtype=np.uint32)
    tmp = np.empty_like(acc)
    a, b = a[None, :], b[None, :]
    for s, e in zip([0, *cuts.tolist()], [*cuts.tolist(), len(docs)], strict=True):
        width = int(_SHORT_WIDTHS[width_of[s]])
        steps = np.arange(width)[:, None]
        for g in range(s, e, _SHORT_GROUP):
            d = docs[g : min(g + _SHORT_GROUP, e)]
            xs = x[offsets[d][None, :] + np.minimum(steps, counts[d][None, :] - 1)]
            h, t = acc[: len(d)], tmp[: len(d)]
            np.multiply(xs[0][:, None], a, out=h)
            h += b
            for j in range(1, width):
                np.multiply(xs[j][:, None], a, out=t)
                t += b
                np.minimum(h, t, out=h)
            out[d] = h


def _reduceat_signatures(x, offsets, a, b, out, chunk_size: int) -> None:
    """Rows of all texts of the CSR (x, offsets) by `minimum.reduceat` over (num_perm, chunk)
    blocks of whole texts; rows of texts without shingles are left as they are."""
    num_perm = len(a)
    a, b = a[:, None], b[:, None]
    # a run holds at most `chunk_size` shingles plus its last text, unless that text is longer
    block = np.empty((num_perm, 2 * chunk_size), dtype=np.uint32)
    for d0, d1 in chunks(offsets, chunk_size):
        lo, hi = int(offsets[d0]), int(offsets[d1])
        if hi == lo:
            continue
        if hi - lo > 2 * chunk_size:  # one long text (a short one may ride along): split it
            for d in range(d0, d1):
                if offsets[d + 1] > offsets[d]:
                    out[d] = _long_signature(x[offsets[d] : offsets[d + 1]], a, b, block)
            continue
        sizes = np.diff(offsets[d0 : d1 + 1])
        docs = np.flatnonzero(sizes) + d0
        h = block[:, : hi - lo]
        np.multiply(a, x[lo:hi], out=h)
        h += b
        mins = np.minimum.reduceat(h, offsets[docs] - lo, axis=1)
        if len(docs) == d1 - d0:
            out[d0:d1] = mins.T
        else:
            out[docs] = mins.T


def _long_signature(x: np.ndarray, a: np.ndarray, b: np.ndarray, block: np.ndarray):
    best = np.full(len(a), EMPTY, dtype=np.uint32)
    step = block.shape[1]
    for lo in range(0, len(x), step):
        part = x[lo : lo + step]
        h = block[:, : len(part)]
        np.multiply(a, part, out=h)
        h += b
        np.minimum(best, h.min(axis=1), out=best)
    return best


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Share of equal rows: an unbiased estimate of the Jaccard similarity of the two sets."""
    return np.mean(np.asarray(sig_a) == np.asarray(sig_b), axis=-1)


def save_signatures(
    path: str | Path, sig: np.ndarray, ids: Sequence[Any] | np.ndarray, params: Mapping[str, Any]
) -> None:
    """Write signatures to Parquet: column `id`, column `signature` (a fixed-size list of
    uint32), and `params` (num_perm, seed, shingling, ...) as JSON in the file's metadata, so a
    new threshold or a new band layout reuses them without recomputing.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    sig = np.ascontiguousarray(sig, dtype=np.uint32)
    if sig.ndim != 2 or len(sig) != len(ids):
        msg = (f"`sig` must be a 2-d array with one row per id ({len(ids)} ids). "
               f"Got shape {sig.shape!r} instead.")
        raise ParameterError(msg)
    meta = {"scheme": SCHEME, "num_perm": int(sig.shape[1]), **dict(params)}
    values = pa.array(sig.reshape(-1), type=pa.uint32())
    column = pa.FixedSizeListArray.from_arrays(values, sig.shape[1])
    table = pa.table({"id": pa.array(np.asarray(ids) if not isinstance(ids, list) else ids),
                      "signature": column})
    table = table.replace_schema_metadata({b"linkage.minhash": json.dumps(meta).encode()})
    pq.write_table(table, str(path))


def load_signatures(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Read what `save_signatures` wrote: (signatures, ids, params)."""
    import pyarrow.parquet as pq

    table = pq.read_table(str(path))
    raw = (table.schema.metadata or {}).get(b"linkage.minhash")
    if raw is None:
        msg = f"{path}: not a signatures file (no `linkage.minhash` metadata); write it with " \
              "`save_signatures`."
        raise ParameterError(msg)
    params = json.loads(raw)
    if params.get("scheme") != SCHEME:
        msg = (f"{path}: signatures use hash scheme {params.get('scheme')!r}, this version "
               f"computes {SCHEME!r}; recompute them.")
        raise ParameterError(msg)
    column = table.column("signature").combine_chunks()
    width = column.type.list_size
    sig = column.values.to_numpy(zero_copy_only=False).astype(np.uint32).reshape(-1, width)
    ids = table.column("id").to_numpy()
    return sig, ids, params
