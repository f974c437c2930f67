"""Shingles: the sets of word k-grams or character n-grams that MinHash compares.

Texts are NFKC-normalized and lowercased, then cut into tokens (maximal runs of letters and
digits; punctuation and white space separate). Long texts give word k-grams (default 3); short
texts and Korean give character n-grams (default 5) over the letters and digits with the
separators removed, because Korean spacing is unreliable ("안녕 하세요" and "안녕하세요" must
shingle alike).

The whole batch is hashed at once in numpy: the texts are joined, encoded as UTF-32 code points,
and every span (a word, a character n-gram, a run of k word hashes) is hashed as a polynomial in
uint64 arithmetic (wrapping mod 2^64), then mixed with MurmurHash3's 64-bit finalizer. Words take
their polynomial from prefix sums over the characters (one gather for both ends of every word);
k-grams of up to 8 units sum k shifted slices directly (no prefix sums, no gathers), which gives
the same values. Batches are capped at `BATCH_CHARS` characters so their work arrays stay in cache,
and ASCII texts are batched apart from the others (which need NFKC and UTF-32), then put back.
No Python `hash()` (it is salted per process), no loop per shingle, and the result is the same on
every machine and run. The output is CSR: one flat uint64 array of shingle hashes and
an offsets array, document `d` owning `hashes[offsets[d]:offsets[d + 1]]` (duplicates kept;
`unique_sets` removes them).
"""

from __future__ import annotations

import functools
import sys
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from linkage._schema import check
from linkage.errors import ParameterError
from linkage.options import ShingleMode

WORD_K = 3
CHAR_K = 5
AUTO_MIN_WORDS = 8

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
# Odd multipliers: odd numbers are invertible mod 2^64, which the prefix-sum span hash needs.
_BASE = _U64(0x9E3779B97F4A7C15)
_BASE_INV = _U64(pow(0x9E3779B97F4A7C15, -1, 2**64))
_LEN_SALT = _U64(0xC2B2AE3D27D4EB4F)
_KIND_SALT = {
    "token": _U64(0x85EBCA77C2B2AE63),
    "word": _U64(0x165667B19E3779F9),
    "char": _U64(0x27D4EB2F165667C5),
}

_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF))


def normalize_text(text: str) -> str:
    """NFKC, then lowercase: full-width forms, ligatures and case fold to one spelling."""
    return unicodedata.normalize("NFKC", text).lower()


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, vectorised; a bijection that mixes every bit."""
    return _fmix64_inplace(np.array(h, dtype=_U64))


def _fmix64_inplace(h: np.ndarray) -> np.ndarray:
    """`fmix64` overwriting `h` (uint64), with one scratch array for the shifts."""
    tmp = np.empty_like(h)
    shift = _U64(33)
    np.right_shift(h, shift, out=tmp)
    h ^= tmp
    h *= _U64(0xFF51AFD7ED558CCD)
    np.right_shift(h, shift, out=tmp)
    h ^= tmp
    h *= _U64(0xC4CEB9FE1A85EC53)
    np.right_shift(h, shift, out=tmp)
    h ^= tmp
    return h


@functools.cache
def _class_table() -> np.ndarray:
    """Per code point: bit 1 a word character, bit 2 Hangul."""
    table = _word_table().astype(np.uint8)
    for lo, hi in _HANGUL:
        table[lo : hi + 1] |= 2
    return table


@functools.cache
def _word_table() -> np.ndarray:
    """`True` for code points that belong to words (`str.isalnum`, plus combining marks).

    Planes 0-3 hold every letter and digit Unicode assigns; above them (tags, private use) all
    count as separators, which keeps this one-off table cheap to build (about 30 ms).
    """
    table = np.zeros(sys.maxunicode + 1, dtype=bool)
    table[:0x40000] = [chr(c).isalnum() for c in range(0x40000)]
    # Combining marks continue a word (NFKC leaves some uncomposed, e.g. in Devanagari).
    table[0x300:0x370] = True
    return table


class _Powers:
    """Cached powers base^j and base^-j mod 2^64, grown on demand."""

    def __init__(self) -> None:
        self.up = np.ones(1, dtype=_U64)
        self.down = np.ones(1, dtype=_U64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.up) < n:
            size = max(n, 2 * len(self.up))
            up = np.full(size, _BASE, dtype=_U64)
            up[0] = 1
            down = np.full(size, _BASE_INV, dtype=_U64)
            down[0] = 1
            self.up, self.down = np.cumprod(up), np.cumprod(down)
        return self.up[:n], self.down[:n]


_POWERS = _Powers()


_SCRATCH = threading.local()


def _scratch(n: int) -> np.ndarray:
    """A reused uint64 buffer: fresh multi-megabyte arrays per batch cost a page fault a page."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or len(buf) < n:
        buf = _SCRATCH.buf = np.empty(max(n, 1 << 16), dtype=_U64)
    return buf[:n]


def _prefix(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """C[j] = sum_{i<j} values[i] * base^-i (mod 2^64), with C[0] = 0."""
    _, down = _POWERS.get(len(values))
    out = np.empty(len(values) + 1, dtype=_U64) if out is None else out
    out[0] = 0
    np.multiply(values, down, out=out[1:], casting="unsafe")
    np.cumsum(out[1:], out=out[1:])
    return out


def _span_hash(prefix: np.ndarray, starts: np.ndarray, ends: np.ndarray, salt: np.uint64):
    """Hash of values[s:e] for each span: sum values[s+t] * base^-t, position-free, mixed."""
    up, _ = _POWERS.get(int(starts.max()) + 1 if len(starts) else 1)
    poly = (prefix[ends] - prefix[starts]) * up[starts]
    length = (ends - starts).astype(_U64)
    return _fmix64_inplace(poly + length * _LEN_SALT + salt)


def _word_hash(cp: np.ndarray, edges: np.ndarray, salt: np.uint64) -> np.ndarray:
    """`_span_hash` of the words cp[edges[2i]:edges[2i + 1]] (edges ascending), with one
    gather from the prefix sums for both ends of every word."""
    if len(edges) == 0:
        return np.zeros(0, dtype=_U64)
    prefix = _prefix(cp, out=_scratch(len(cp) + 1))
    at = prefix[edges]
    starts = edges[0::2]
    up, _ = _POWERS.get(int(starts[-1]) + 1)
    poly = at[1::2] - at[0::2]
    poly *= up[starts]
    length = (edges[1::2] - starts).view(_U64)
    length *= _LEN_SALT
    poly += length
    poly += salt
    return _fmix64_inplace(poly)


def _windows(seg_starts: np.ndarray, seg_lens: np.ndarray, width: int):
    """Every window of `width` inside each segment; a shorter, non-empty segment is one window.

    Returns (window starts, window ends, windows per segment).
    """
    counts = np.where(seg_lens >= width, seg_lens - width + 1, (seg_lens > 0).astype(np.int64))
    total = int(counts.sum())
    first = np.cumsum(counts) - counts
    starts = np.repeat(seg_starts, counts) + (np.arange(total, dtype=np.int64)
                                              - np.repeat(first, counts))
    ends = np.minimum(starts + width, np.repeat(seg_starts + seg_lens, counts))
    return starts, ends, counts


_DIRECT_MAX_K = 8


def _kgrams(values: np.ndarray, seg_lens: np.ndarray, width: int, salt: np.uint64):
    """Hashes of every window of `width` values inside each segment (a shorter, non-empty
    segment is one window), the same as `_span_hash` over `_windows`, and the windows per segment.

    Up to `_DIRECT_MAX_K` the polynomial sum values[s+t] * base^-t is summed directly over
    shifted slices of the whole array: `width` contiguous passes, no prefix sums and no gathers.
    """
    seg_starts = np.cumsum(seg_lens) - seg_lens
    if width > _DIRECT_MAX_K:
        ws, we, counts = _windows(seg_starts, seg_lens, width)
        return _span_hash(_prefix(values), ws, we, salt), counts
    n = len(values)
    _, down = _POWERS.get(width)
    # poly[i] = sum_{t < width} values[i + t] * base^-t, the values beyond the end read as 0
    poly = np.zeros(n, dtype=_U64)
    poly[:] = values
    tmp = np.empty(n, dtype=_U64)
    for t in range(1, min(width, n)):
        np.multiply(values[t:], down[t], out=tmp[: n - t], casting="unsafe")
        poly[: n - t] += tmp[: n - t]
    counts = np.where(seg_lens >= width, seg_lens - width + 1, (seg_lens > 0).astype(np.int64))
    # windows start at the first counts[j] positions of segment j
    pattern = np.empty(2 * len(seg_lens), dtype=np.int64)
    pattern[0::2] = counts
    pattern[1::2] = seg_lens - counts
    h = poly[np.repeat(np.tile(np.array([True, False]), len(seg_lens)), pattern)]
    h += _U64((width * int(_LEN_SALT) + int(salt)) & _MASK64)
    short = np.flatnonzero((seg_lens > 0) & (seg_lens < width))
    if len(short):  # one window over the whole (short) segment: its own sum and length
        s, lens = seg_starts[short], seg_lens[short]
        acc = lens.astype(_U64) * _LEN_SALT + salt
        for t in range(int(lens.max())):
            part = lens > t
            acc[part] += values[s[part] + t].astype(_U64) * down[t]
        h[(np.cumsum(counts) - counts)[short]] = acc
    return _fmix64_inplace(h), counts


@dataclass
class Shingles:
    """Shingle hashes of a batch of texts, CSR: `hashes[offsets[d]:offsets[d+1]]` is text `d`."""

    hashes: np.ndarray  # uint64
    offsets: np.ndarray  # int64, len n + 1
    char: np.ndarray  # bool per text: character n-grams were used
    tokens: np.ndarray  # int64 per text: words (Hangul texts: max(words, letters // 3))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def doc(self, d: int) -> np.ndarray:
        return self.hashes[self.offsets[d] : self.offsets[d + 1]]

    def take(self, docs: np.ndarray) -> Shingles:
        """The shingles of some texts, in the given order."""
        docs = np.asarray(docs, dtype=np.int64)
        counts = self.counts[docs]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        src = np.repeat(self.offsets[docs] - offsets[:-1], counts) + np.arange(offsets[-1])
        return Shingles(self.hashes[src], offsets, self.char[docs], self.tokens[docs])


def _codepoints(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Normalized code points of all texts joined by a 0 (uint8 when all are ASCII, else
    uint32), and the start of each text."""
    cp, seps = _encode("\x00".join(texts))
    if len(seps) != max(len(texts) - 1, 0):  # a text held a NUL of its own
        cp, seps = _encode("\x00".join(t.replace("\x00", " ") for t in texts))
    starts = np.empty(len(seps) + 1, dtype=np.int64)
    starts[0] = 0
    np.add(seps, 1, out=starts[1:])
    return cp, starts


def _encode(joined: str) -> tuple[np.ndarray, np.ndarray]:
    """Code points of the normalized text, and the positions of its NULs."""
    if joined.isascii():  # NFKC leaves ASCII as it is: lowercasing is all the work
        cp = np.frombuffer(joined.encode("ascii").lower(), dtype=np.uint8)
    else:
        joined = normalize_text(joined)
        if joined.isascii():
            cp = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        else:
            cp = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return cp, np.flatnonzero(cp == 0)


def _doc_of(positions: np.ndarray, doc_starts: np.ndarray) -> np.ndarray:
    return np.searchsorted(doc_starts, positions, side="right") - 1


def _classes(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Word-character mask, and the Hangul mask (None for ASCII, which has no Hangul)."""
    if cp.dtype == np.uint8:
        # ASCII letters and digits, the same as the table but without a gather
        return ((cp | np.uint8(0x20)) - np.uint8(97) < 26) | (cp - np.uint8(48) < 10), None
    cls = _class_table()[cp]
    return (cls & 1).view(bool), (cls & 2).astype(bool)


def is_missing(value: object) -> bool:
    """None, NaN, pandas.NA and NaT: no text, so no shingles."""
    try:
        return value is None or bool(value != value) or type(value).__name__ in ("NAType",
                                                                                  "NaTType")
    except (TypeError, ValueError):
        return type(value).__name__ in ("NAType", "NaTType")


def shingle(
    texts: Iterable[str | None],
    *,
    mode: ShingleMode = "auto",
    k: int | None = None,
    batch_size: int = 512,
) -> Shingles:
    """Shingle hashes of every text (None and empty texts get none).

    `k` is the shingle size in the unit of `mode` (words or characters); None picks 3 words or
    5 characters. In `auto` mode each text gets its own unit, so `k` must stay None.
    """
    if mode not in ("auto", "word", "char"):
        msg = f"`mode` must be one of 'auto', 'word', 'char'. Got {mode!r} instead."
        raise ParameterError(msg)
    if k is not None and (mode == "auto" or not isinstance(k, int) or k < 1):
        msg = (f"`k` must be a positive integer with mode 'word' or 'char' (None in 'auto', "
               f"which picks {WORD_K} words or {CHAR_K} characters per text). Got {k!r} instead.")
        raise ParameterError(msg)
    items = [t if isinstance(t, str) else "" if is_missing(t) else str(t) for t in texts]
    ascii_ = np.fromiter(map(str.isascii, items), dtype=bool, count=len(items))
    if 0 < ascii_.sum() < len(items):
        # ASCII texts apart from the others: one text with an accent or a (R) sends its whole
        # batch down the NFKC and UTF-32 path, about twice the cost a character. A text hashes
        # the same in any batch, so the two groups are shingled alone and put back in order.
        groups = [np.flatnonzero(ascii_), np.flatnonzero(~ascii_)]
        parts = [_shingle_all([items[i] for i in g.tolist()], mode, k, batch_size)
                 for g in groups]
        return _interleave(parts, groups, len(items))
    return _shingle_all(items, mode, k, batch_size)


def _interleave(parts: list[Shingles], groups: list[np.ndarray], n: int) -> Shingles:
    """One Shingles of `n` texts from parts, part `i` holding the texts `groups[i]` in order:
    each part's hashes scattered once into their place (no concatenated copy in between)."""
    counts = np.zeros(n, dtype=np.int64)
    char = np.zeros(n, dtype=bool)
    tokens = np.zeros(n, dtype=np.int64)
    for part, g in zip(parts, groups, strict=True):
        counts[g], char[g], tokens[g] = part.counts, part.char, part.tokens
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    hashes = np.empty(int(offsets[-1]), dtype=_U64)
    for part, g in zip(parts, groups, strict=True):
        size = part.counts
        dst = np.repeat(offsets[g] - part.offsets[:-1], size)
        dst += np.arange(len(part.hashes), dtype=np.int64)
        hashes[dst] = part.hashes
    return Shingles(hashes, offsets, char, tokens)


def _shingle_all(items: list[str], mode: str, k: int | None, batch_size: int) -> Shingles:
    return _concat([_shingle_batch(items[s:e], mode, k) for s, e in _batches(items, batch_size)])


def _concat(parts: list[Shingles]) -> Shingles:
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Shingles(np.zeros(0, _U64), np.zeros(1, np.int64), np.zeros(0, bool), empty)
    if len(parts) == 1:
        return parts[0]
    shift = np.cumsum([0] + [int(p.offsets[-1]) for p in parts[:-1]])
    offsets = np.concatenate([[0]] + [p.offsets[1:] + s for p, s in zip(parts, shift, strict=True)])
    return Shingles(
        np.concatenate([p.hashes for p in parts]),
        offsets.astype(np.int64),
        np.concatenate([p.char for p in parts]),
        np.concatenate([p.tokens for p in parts]),
    )


BATCH_CHARS = 1 << 18
"""A batch also ends before it holds more characters than this: its uint64 work arrays (8 bytes
a character) then stay in cache, which is worth about 20% over batches of 512 long texts."""


def _batches(items: list[str], batch_size: int):
    """[start, end) of each batch: at most `batch_size` texts and about `BATCH_CHARS`
    characters (a longer text alone)."""
    n = len(items)
    if n == 0:
        return
    ends = np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=n) + 1)
    start = 0
    while start < n:
        base = int(ends[start - 1]) if start else 0
        end = min(start + max(batch_size, 1), n,
                  int(np.searchsorted(ends, base + BATCH_CHARS, side="right")))
        end = max(end, start + 1)
        yield start, end
        start = end


def _shingle_batch(texts: list[str], mode: str, k: int | None) -> Shingles:
    n = len(texts)
    cp, doc_starts = _codepoints(texts)
    word, hangul_mask = _classes(cp)
    # word-run boundaries alternate start, end, start, end, ...
    # (on a bool array: np.flatnonzero of an int8 diff is several times slower)
    padded = np.zeros(len(word) + 2, dtype=bool)
    padded[1:-1] = word
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    bounds = np.searchsorted(edges[0::2], np.append(doc_starts, len(cp)))
    words = np.diff(bounds)

    hangul = np.zeros(n, dtype=bool)
    tokens = words
    if hangul_mask is not None and hangul_mask.any():
        hangul[_doc_of(np.flatnonzero(hangul_mask), doc_starts)] = True
        letters = np.bincount(_doc_of(np.flatnonzero(word), doc_starts), minlength=n)
        tokens = np.where(hangul, np.maximum(words, letters // 3), words)

    if mode == "word":
        char = np.zeros(n, dtype=bool)
    elif mode == "char":
        char = np.ones(n, dtype=bool)
    else:
        char = hangul | (words < AUTO_MIN_WORDS)

    hashes_parts, docs_parts = [], []
    if not char.all():
        is_word = ~char
        if char.any():
            edges = edges.reshape(-1, 2)[np.repeat(is_word, words)].reshape(-1)
        tok_hash = _word_hash(cp, edges, _KIND_SALT["token"])
        hashes, counts = _kgrams(tok_hash, words[is_word], k or WORD_K, _KIND_SALT["word"])
        hashes_parts.append(hashes)
        docs_parts.append(np.repeat(np.flatnonzero(is_word), counts))
    if char.any():
        doc_lens = np.diff(np.append(doc_starts, len(cp)))
        keep = word & np.repeat(char, doc_lens)
        letter_doc = _doc_of(np.flatnonzero(keep), doc_starts)
        seg_lens = np.bincount(letter_doc, minlength=n)[char]
        hashes, counts = _kgrams(cp[keep], seg_lens, k or CHAR_K, _KIND_SALT["char"])
        hashes_parts.append(hashes)
        docs_parts.append(np.repeat(np.flatnonzero(char), counts))

    if len(hashes_parts) == 1:
        hashes, docs = hashes_parts[0], docs_parts[0]
    else:
        docs = np.concatenate(docs_parts)
        order = np.argsort(docs, kind="stable")
        hashes, docs = np.concatenate(hashes_parts)[order], docs[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(docs, minlength=n), out=offsets[1:])
    return Shingles(hashes, offsets, char, tokens.astype(np.int64))


def unique_sets(sh: Shingles) -> Shingles:
    """The same texts with each shingle set sorted and duplicates removed (for exact Jaccard)."""
    docs = np.repeat(np.arange(len(sh), dtype=np.int64), sh.counts)
    order = np.lexsort((sh.hashes, docs))
    h, d = sh.hashes[order], docs[order]
    keep = np.ones(len(h), dtype=bool)
    keep[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    h, d = h[keep], d[keep]
    offsets = np.zeros(len(sh) + 1, dtype=np.int64)
    np.cumsum(np.bincount(d, minlength=len(sh)), out=offsets[1:])
    return Shingles(h, offsets, sh.char, sh.tokens)


def check_shingling(owner: object, shingle: str, k: int | None, min_tokens: int) -> None:
    """The shingling keys the text blockers share (`shingle`, `k`, `min_tokens`), checked as
    the rules schema checks a key: the error names `owner`'s class and the key."""
    check(shingle in ("auto", "word", "char"), owner, "shingle",
          "must be one of 'auto', 'word', 'char'", shingle)
    check(k is None or (isinstance(k, int) and k >= 1 and shingle != "auto"), owner, "k",
          "must be a positive integer with shingle 'word' or 'char' (leave it out with "
          "'auto', which picks 3 words or 5 characters per text)", k)
    check(isinstance(min_tokens, int) and min_tokens >= 0, owner, "min_tokens",
          "must be a non-negative integer", min_tokens)
