"""Span deduplication: boilerplate repeated inside many documents, removed from each of them.

As datatrove's sentence dedup: every text is cut into sentences; a span of `span_sentences`
consecutive sentences (one sentence by default) that occurs in at least `min_documents`
documents is boilerplate (a cookie banner, a signature, a "copyright ..." line) and is removed
from every document that holds it; the rest of each text is kept as it was, byte for byte.

Sentences end at `.`, `!`, `?` before white space or the end (`3.5` does not end one) or after
a Hangul syllable (`했다.그리고`), at `。！？` and at a line break: Korean, CJK and English alike.
Sentences are compared after NFKC, lowercasing and collapsing white space, hashed once
(`pandas.util.hash_array`: a fixed key, so the same on every machine and run), and spans are
counted per document in numpy; only the cutting and the final joining loop over texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.text.shingles import is_missing, normalize_text

# An end of sentence, with the white space after it (kept with the sentence it closes).
# After a Hangul syllable (`했다.`, `요?`) a mark ends the sentence even with no space after it.
_END = re.compile(r"(?:[.!?]+[\"'”’)\]]*(?=\s|$)|(?<=[가-힣])[.!?]+|[。！？]+[\"'”’)\]」』]*|\n)"
                  r"\s*")
_SPACE = re.compile(r"\s+")
_MIX = np.uint64(0x100000001B3)


def split_sentences(text: str) -> list[str]:
    """`text` cut into sentences, each with the white space that follows it, so that
    `"".join(split_sentences(text)) == text`."""
    pieces, start = [], 0
    for match in _END.finditer(text):
        if match.end() > start:
            pieces.append(text[start:match.end()])
            start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


@dataclass
class SpanDedup:
    """The cleaned texts, what was removed from each, and the boilerplate found."""

    text: pd.Series
    removed_spans: np.ndarray  # runs of consecutive removed sentences, per document
    removed_chars: np.ndarray
    boilerplate: list[dict] = field(default_factory=list)  # the spans removed, most common first
    params: dict = field(default_factory=dict)

    def summary(self) -> dict:
        changed = self.removed_chars > 0
        return {**self.params,
                "documents": len(self.text),
                "documents_changed": int(changed.sum()),
                "documents_emptied": int((changed & (self.text.fillna("x").str.len() == 0))
                                         .sum()),
                "removed_spans": int(self.removed_spans.sum()),
                "removed_chars": int(self.removed_chars.sum()),
                "boilerplate": self.boilerplate[:20]}


def _span_keys(hashes: np.ndarray, doc: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A key for each span of `width` sentences inside one document, and where each starts."""
    starts = np.arange(len(hashes) - width + 1)
    inside = doc[starts] == doc[starts + width - 1]
    for c in range(width):  # a span holding an empty sentence is never boilerplate
        inside &= hashes[starts + c] != 0
    starts = starts[inside]
    key = np.full(len(starts), np.uint64(width), dtype=np.uint64)
    for c in range(width):
        key = (key ^ hashes[starts + c]) * _MIX
    return key, starts


def _documents_per_key(key: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """For each span, in how many documents its key occurs (a repeat inside one counts once)."""
    order = np.lexsort((doc, key))
    k, d = key[order], doc[order]
    first = np.ones(len(k), bool)
    first[1:] = (k[1:] != k[:-1]) | (d[1:] != d[:-1])
    distinct, documents = np.unique(k[first], return_counts=True)
    return documents[np.searchsorted(distinct, key)]


def strip_spans(texts: pd.Series | list, *, min_documents: int = 3, span_sentences: int = 1,
                min_chars: int = 0) -> SpanDedup:
    """Remove from every text each span of `span_sentences` consecutive sentences that occurs
    in at least `min_documents` documents and holds at least `min_chars` characters (so short
    common sentences, "Thank you.", can be kept). Missing texts stay missing; a text with
    nothing removed is returned unchanged."""
    if not isinstance(min_documents, int) or min_documents < 2:
        msg = (f"`min_documents` must be a whole number of at least 2. Got {min_documents!r} "
               "instead.")
        raise ParameterError(msg)
    if not isinstance(span_sentences, int) or span_sentences < 1:
        msg = (f"`span_sentences` must be a whole number of at least 1. Got {span_sentences!r} "
               "instead.")
        raise ParameterError(msg)
    if not isinstance(min_chars, int) or min_chars < 0:
        msg = f"`min_chars` must be a whole number of at least 0. Got {min_chars!r} instead."
        raise ParameterError(msg)
    texts = pd.Series(texts).reset_index(drop=True)
    pieces = [[] if is_missing(t) else split_sentences(str(t)) for t in texts]
    doc = np.repeat(np.arange(len(pieces)), [len(p) for p in pieces])
    flat = [s for p in pieces for s in p]
    keys = [_SPACE.sub(" ", normalize_text(s)).strip() for s in flat]
    hashes = pd.util.hash_array(np.array(keys, dtype=object)) if keys else np.zeros(0, np.uint64)
    hashes = np.where(np.array([k != "" for k in keys], bool), hashes | np.uint64(1),
                      np.uint64(0))
    key, starts = _span_keys(hashes, doc, span_sentences)
    chars = np.concatenate([[0], np.cumsum([len(k) for k in keys])])
    long_enough = chars[starts + span_sentences] - chars[starts] >= min_chars
    found = (_documents_per_key(key, doc[starts]) >= min_documents) & long_enough
    delta = np.zeros(len(flat) + 1, dtype=np.int64)
    np.add.at(delta, starts[found], 1)
    np.add.at(delta, starts[found] + span_sentences, -1)
    removed = np.cumsum(delta[:-1]) > 0
    run_start = removed & np.append(True, (~removed[:-1]) | (doc[1:] != doc[:-1]))
    removed_spans = np.bincount(doc[run_start], minlength=len(texts))
    # A column of numbers comes back as text, all of it, so it stays one type.
    cleaned = pd.Series([t if is_missing(t) else str(t) for t in texts], dtype=object)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pieces])])
    removed_chars = np.zeros(len(texts), dtype=np.int64)
    for d in np.flatnonzero(removed_spans):
        lo, hi = offsets[d], offsets[d + 1]
        kept = "".join(s for s, gone in zip(flat[lo:hi], removed[lo:hi], strict=True)
                       if not gone).strip()
        removed_chars[d] = len(str(texts[d])) - len(kept)
        cleaned[d] = kept
    return SpanDedup(cleaned, removed_spans, removed_chars,
                     _boilerplate(key[found], starts[found], doc, flat, span_sentences),
                     {"min_documents": min_documents, "span_sentences": span_sentences,
                      "min_chars": min_chars})


def _boilerplate(key: np.ndarray, starts: np.ndarray, doc: np.ndarray, flat: list[str],
                 width: int) -> list[dict]:
    """Each removed span once (its first occurrence's text) with its number of documents,
    most documents first, then in order of first occurrence: what a reader checks."""
    if len(key) == 0:
        return []
    table = pd.DataFrame({"key": key, "start": starts, "doc": doc[starts]})
    first = table.groupby("key", sort=False).agg(start=("start", "min"),
                                                  documents=("doc", "nunique"))
    first = first.sort_values(["documents", "start"], ascending=[False, True], kind="stable")
    return [{"text": "".join(flat[s:s + width]).strip(), "documents": int(n)}
            for s, n in zip(first["start"], first["documents"], strict=True)]
