"""Train/eval contamination: which training records share text with an evaluation set.

A train record is *contaminated* when it shares at least one n-gram with an eval item, or when
its normalized text is identical to an eval item's (*exact match*, found with
`linkage.text.exact.row_hashes`).

Text is normalized with the `text` normalizer (NFKC, case-fold, punctuation to spaces, white
space collapsed) and split on white space into words. Word n-grams (default n = 13, as in the
GPT-3 and PaLM contamination studies) are hashed to 64 bits and looked up in a hash table of
the eval set's n-grams, so the cost is linear in the text size plus a sort, with no loop over
pairs. A text with fewer than n words has no n-grams: it can only be flagged as an exact match.

Texts in scripts often written without spaces (Hangul, and also Han and Kana) would yield too
few words, so every text containing such characters is also cut into *character* n-grams over
its normalized text with the spaces removed, of length `char_ngram` (default 3 × ngram = 39).
A Korean word (eojeol) averages about three to four syllables, so 39 characters are roughly 11
to 13 words: about as strict as the word test. Because spaces are removed first, a spaced and an
unspaced copy of the same Korean passage still match. Character n-grams are only compared with
character n-grams of other such texts.

N-gram hashes are 64-bit: with G train n-grams and E distinct eval n-grams the expected number
of false matches is about G·E/2^64 (2e-6 for 20 million × 2 million).

Output, one row per train record, in train order: the train id (`train_id` column, or `row_id`
holding row numbers), `contaminated`, `exact_match`, `eval_id` (the first eval item, in eval
order, that the record overlaps; missing when clean), `shared_ngrams` (distinct n-grams the
record shares with the eval set: word n-grams, or character n-grams when no word n-gram is
shared), `ngram_kind` ("word", "char" or missing) and `example_ngram` (one shared n-gram, from
the `eval_id` item, as normalized text).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import write_atomically, write_json, write_parquet
from linkage.normalize import normalize_text
from linkage.text.exact import row_hashes

RESULT_FILE = "contamination.parquet"
SUMMARY_FILE = "summary.json"

# Hangul jamo, compatibility jamo, syllables and extensions; Hiragana, Katakana; CJK ideographs.
_SPACELESS_SCRIPT = re.compile(
    "[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd, so invertible modulo 2^64
_INVERSE = np.uint64(pow(0x9E3779B97F4A7C15, -1, 2**64))
_WORD_DOMAIN = np.uint64(0x5A17_3C0D_E11A_0001)
_CHAR_DOMAIN = np.uint64(0x5A17_3C0D_E11A_0002)
_CHAR_SALT = np.uint64(0xC2B2AE3D27D4EB4F)
_TRAIN_CHUNK = 20_000  # train records per batch, to bound memory on large inputs


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, elementwise (uint64 arithmetic wraps, as intended)."""
    x = values.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _powers(base: np.uint64, count: int) -> np.ndarray:
    out = np.ones(count, dtype=np.uint64)
    if count > 1:
        out[1:] = np.cumprod(np.full(count - 1, base, dtype=np.uint64), dtype=np.uint64)
    return out


def _gram_hashes(
    units: np.ndarray, lengths: np.ndarray, n: int, domain: np.uint64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hash of every run of `n` consecutive units inside each document.

    `units` holds the uint64 hashes of all documents' units (words or characters) back to back;
    `lengths` says how many belong to each document. Returns (hash, document, position in the
    document) per n-gram. A polynomial hash over prefix sums, Σ u[i+k]·P^k mod 2^64, so the
    cost does not grow with n; it is then mixed so that nearby n-grams look unrelated.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = np.maximum(lengths - n + 1, 0)
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), empty, empty
    starts = np.cumsum(lengths) - lengths
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), counts)
    pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    flat = starts[doc] + pos
    size = len(units)
    prefix = np.zeros(size + 1, dtype=np.uint64)
    np.cumsum(units * _powers(_MULTIPLIER, size), dtype=np.uint64, out=prefix[1:])
    grams = (prefix[flat + n] - prefix[flat]) * _powers(_INVERSE, size)[flat]
    return _mix(grams ^ domain), doc, pos


def _word_grams(texts: list, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Word n-grams of normalized texts (single spaces between words, or None)."""
    lengths = np.array([t.count(" ") + 1 if t else 0 for t in texts], dtype=np.int64)
    present = [t for t in texts if t]
    if not present:
        return _gram_hashes(np.empty(0, dtype=np.uint64), lengths, n, _WORD_DOMAIN)
    tokens = np.array(" ".join(present).split(" "), dtype=object)
    units = pd.util.hash_array(tokens, categorize=True)
    return _gram_hashes(units, lengths, n, _WORD_DOMAIN)


def _spaceless(text: str | None) -> str | None:
    if text and _SPACELESS_SCRIPT.search(text):
        return text.replace(" ", "")
    return None


def _char_grams(texts: list, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Character n-grams, with spaces removed, of the texts written in a spaceless script."""
    squeezed = [_spaceless(t) for t in texts]
    lengths = np.array([len(s) if s else 0 for s in squeezed], dtype=np.int64)
    joined = "".join(s for s in squeezed if s)
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    units = _mix(codes.astype(np.uint64) ^ _CHAR_SALT)
    return _gram_hashes(units, lengths, n, _CHAR_DOMAIN)


def _all_grams(texts: list, ngram: int, char_ngram: int) -> pd.DataFrame:
    """Every n-gram of `texts`: hash, doc (index into texts), pos, kind (0 word, 1 char)."""
    parts = []
    for kind, grams in enumerate((_word_grams(texts, ngram), _char_grams(texts, char_ngram))):
        hashes, doc, pos = grams
        parts.append(
            pd.DataFrame(
                {"hash": hashes, "doc": doc, "pos": pos, "kind": np.full(len(doc), kind, np.int8)}
            )
        )
    return pd.concat(parts, ignore_index=True)


def _require_column(frame: pd.DataFrame, column: str, table: str, role: str, option: str) -> None:
    if column not in frame.columns:
        available = ", ".join(repr(str(c)) for c in frame.columns) or "none"
        raise InputError(
            f"{table} table: no column {column!r} to use as {role} (columns: {available}). "
            f"Name the column that holds it with `{option}`."
        )


def _ids(frame: pd.DataFrame, column: str | None) -> pd.Series:
    if column is None:
        return pd.Series(np.arange(len(frame), dtype=np.int64), name="row_id")
    return frame[column].reset_index(drop=True)


def decontaminate(
    train: pd.DataFrame,
    eval: pd.DataFrame,
    *,
    text_column: str,
    ngram: int = 13,
    train_id: str | None = None,
    eval_id: str | None = None,
    char_ngram: int | None = None,
) -> pd.DataFrame:
    """Flag every train record that shares an n-gram, or its whole normalized text, with an
    eval item. One row per train record, in train order; see the module docstring.

    Args:
        train, eval: the two tables; `text_column` must be in both.
        ngram: words per n-gram (13 by default). Texts shorter than this can only match exactly.
        train_id, eval_id: id columns; without one, row numbers are used (`row_id` for train).
        char_ngram: characters per n-gram for Hangul/Han/Kana texts (default 3 × ngram).
    """
    if not isinstance(ngram, int | np.integer) or ngram < 1:
        raise InputError(f"ngram must be a whole number of words ≥ 1, got {ngram!r}.")
    char_ngram = 3 * int(ngram) if char_ngram is None else char_ngram
    if not isinstance(char_ngram, int | np.integer) or char_ngram < 1:
        raise InputError(f"char_ngram must be a whole number ≥ 1, got {char_ngram!r}.")
    _require_column(train, text_column, "train", "the text", "--text-column")
    _require_column(eval, text_column, "eval", "the text", "--text-column")
    if train_id is not None:
        _require_column(train, train_id, "train", "the record id", "--train-id")
    if eval_id is not None:
        _require_column(eval, eval_id, "eval", "the record id", "--eval-id")

    train_ids, eval_ids = _ids(train, train_id), _ids(eval, eval_id)
    train_text = normalize_text(train[text_column].reset_index(drop=True))
    eval_text = normalize_text(eval[text_column].reset_index(drop=True))
    n_train = len(train_text)
    no_match = np.int64(len(eval_text))  # larger than any eval position

    # Exact leakage: identical normalized text (hashing the normalized text raw is the same
    # as row_hashes(..., normalize=True) on the original, without normalizing twice).
    exact_first = np.full(n_train, no_match, dtype=np.int64)
    if n_train and len(eval_text):
        train_hash = row_hashes(train_text.to_frame("text"), normalize=False)
        eval_hash = row_hashes(eval_text.to_frame("text"), normalize=False)
        eval_keys = pd.DataFrame(
            {"hi": eval_hash[:, 0], "lo": eval_hash[:, 1], "eval_pos": np.arange(len(eval_hash))}
        )[eval_text.notna().to_numpy()]
        eval_keys = eval_keys.groupby(["hi", "lo"], sort=False, as_index=False)["eval_pos"].min()
        train_keys = pd.DataFrame(
            {"hi": train_hash[:, 0], "lo": train_hash[:, 1], "doc": np.arange(n_train)}
        )[train_text.notna().to_numpy()]
        merged = train_keys.merge(eval_keys, on=["hi", "lo"], how="inner")
        exact_first[merged["doc"].to_numpy()] = merged["eval_pos"].to_numpy()

    # The eval index: each distinct n-gram hash with the first eval item holding it.
    eval_grams = _all_grams(eval_text.tolist(), ngram, char_ngram)
    index = eval_grams.groupby("hash", sort=False)["doc"].min()
    keys = pd.Index(index.index.to_numpy(dtype=np.uint64))  # a hash table on the n-gram hash
    first_eval = index.to_numpy(dtype=np.int64)

    hits = []
    texts = train_text.tolist()
    if len(keys):
        for start in range(0, n_train, _TRAIN_CHUNK):
            grams = _all_grams(texts[start : start + _TRAIN_CHUNK], ngram, char_ngram)
            where = keys.get_indexer(grams["hash"].to_numpy(dtype=np.uint64))
            found = where >= 0
            if found.any():
                chunk = grams[found].copy()
                chunk["doc"] += start
                chunk["eval_pos"] = first_eval[where[found]]
                hits.append(chunk)
    hits = (
        pd.concat(hits, ignore_index=True)
        if hits
        else pd.DataFrame({"hash": [], "doc": [], "pos": [], "kind": [], "eval_pos": []})
    )

    # Per train record: distinct shared n-grams of each kind; the first eval item overlapped.
    shared = np.zeros((2, n_train), dtype=np.int64)
    ngram_first = np.full(n_train, no_match, dtype=np.int64)
    if len(hits):
        distinct = hits.drop_duplicates(["doc", "kind", "hash"])
        for kind in (0, 1):
            docs = distinct.loc[distinct["kind"] == kind, "doc"].to_numpy(dtype=np.int64)
            shared[kind] = np.bincount(docs, minlength=n_train)
        np.minimum.at(
            ngram_first, hits["doc"].to_numpy(np.int64), hits["eval_pos"].to_numpy(np.int64)
        )
    first = np.minimum(ngram_first, exact_first)
    exact = exact_first < no_match
    kind_used = np.where(shared[0] > 0, 0, np.where(shared[1] > 0, 1, -1))
    contaminated = exact | (kind_used >= 0)

    # One example per flagged record: a shared n-gram found in its `eval_id` item, word
    # n-grams first, then the earliest in the train text.
    examples = np.full(n_train, None, dtype=object)
    if len(hits):
        docs = hits["doc"].to_numpy(np.int64)
        from_first = hits[hits["eval_pos"].to_numpy(np.int64) == first[docs]]
        chosen = from_first.sort_values(["doc", "kind", "pos"]).drop_duplicates("doc")
        for doc, kind, pos in chosen[["doc", "kind", "pos"]].itertuples(index=False):
            text = texts[doc]
            if kind == 0:
                examples[doc] = " ".join(text.split(" ")[pos : pos + ngram])
            else:
                examples[doc] = text.replace(" ", "")[pos : pos + char_ngram]

    if len(eval_ids):
        eval_values = eval_ids
        if pd.api.types.is_integer_dtype(eval_values.dtype):
            eval_values = eval_values.astype("Int64")  # so that a clean record can hold <NA>
        picked = eval_values.take(np.minimum(first, len(eval_ids) - 1)).reset_index(drop=True)
        picked = picked.where(pd.Series(first < no_match))
    else:
        picked = pd.Series([None] * n_train, dtype=object)
    result = pd.DataFrame(
        {
            (train_id if train_id is not None else "row_id"): train_ids.to_numpy(),
            "contaminated": contaminated,
            "exact_match": exact,
            "eval_id": picked,
            # Word n-grams when any is shared, else character n-grams.
            "shared_ngrams": np.where(kind_used == 0, shared[0], shared[1]).astype(np.int64),
            "ngram_kind": np.array([None, "word", "char"], dtype=object)[kind_used + 1],
            "example_ngram": examples,
        }
    )
    result.attrs["contamination"] = {
        "text_column": text_column,
        "ngram": int(ngram),
        "char_ngram": int(char_ngram),
        "train_records": n_train,
        "eval_records": len(eval_text),
    }
    return result


def contamination_summary(result: pd.DataFrame) -> dict[str, Any]:
    """Counts and rate of a `decontaminate` result, as written to summary.json."""
    total = len(result)
    flagged = int(result["contaminated"].sum())
    exact = int(result["exact_match"].sum())
    by_ngram = int((result["shared_ngrams"] > 0).sum())
    summary: dict[str, Any] = {
        "train_records": total,
        "contaminated": flagged,
        "clean": total - flagged,
        "exact_matches": exact,
        "ngram_matches": by_ngram,
        "ngram_only": int((result["contaminated"] & ~result["exact_match"]).sum()),
        "contamination_rate": flagged / total if total else 0.0,
        "eval_items_named": int(result["eval_id"].nunique(dropna=True)),
    }
    params = result.attrs.get("contamination", {})
    summary.update({k: v for k, v in params.items() if k != "train_records"})
    return summary


def write_contamination_report(result: pd.DataFrame, out_dir: str | os.PathLike) -> Path:
    """Write `contamination.parquet` (the result) and `summary.json` (counts, rate, settings)
    into `out_dir`, atomically: the folder is replaced only once both files are complete."""

    def fill(folder: Path) -> None:
        write_parquet(result, folder / RESULT_FILE)
        write_json(contamination_summary(result), folder / SUMMARY_FILE)

    return write_atomically(out_dir, fill, what="decontaminate")
