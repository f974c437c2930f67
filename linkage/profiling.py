"""What each column of an unseen table holds, decided from its values.

A column's role (person name, date, birth-date part, e-mail, phone, postcode, identifier,
category, amount, row number, constant ...) is read from a sample of its values; its name only
breaks ties between roles the values leave open (a single-word name column: given name or
surname?). Renamed columns (`c1`, `c2`, ...) in any order therefore get the roles they get under
their own names wherever the values decide.

`profile_table` profiles every column and then looks across columns: year, month and day parts
that form valid dates together, and the parts of a person's name that a full-name column
holds. `pair_columns` pairs the columns of two tables to link that hold the same values under
different names.
"""

from __future__ import annotations

import contextlib
import copy
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from linkage.io import arrow_data
from linkage.normalize.hangul import has_hangul
from linkage.parallel import thread_map

_SAMPLE = 20_000
_ROWS = 50_000  # rows profiled at most
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

KINDS = ("given_name", "surname", "full_name", "name", "hangul_name", "date", "year", "month",
         "day", "email", "phone", "postcode", "address", "company", "id", "text", "category",
         "numeric", "row_number", "constant", "other")
PERSON_NAMES = ("given_name", "surname", "full_name", "name", "hangul_name")
# Agreeing on these is far more likely for the same person than for two people drawn at random.
IDENTIFYING = (*PERSON_NAMES, "date", "email", "phone", "id")


@dataclass
class ColumnProfile:
    """What profiling learned about one column.

    `kind` is one of `KINDS`; `compare` is False for columns that are no evidence of a match
    (row numbers, constants, existing group labels, the id column) and `skip` says why;
    `identifying` marks fields whose agreement identifies a person or thing (names, dates,
    e-mail, phone, ids).
    """

    column: str
    kind: str
    filled: float  # share of records with a value
    distinct: float  # distinct values / filled values
    why: str
    values: int = 0  # distinct values seen
    identifying: bool = False
    compare: bool = True
    skip: str = ""
    region: str | None = None  # phones: the region their national numbers parse in
    unique: bool = False  # every filled value differs
    code: bool = False  # digits that are a code (compared by edits), not an amount
    parts: list[str] = field(default_factory=list)  # a derived date: its year, month, day

    def __post_init__(self) -> None:
        self.identifying = self.kind in IDENTIFYING and self.compare

    def exclude(self, why: str) -> ColumnProfile:
        self.compare, self.skip, self.identifying = False, why, False
        return self


def _hint(column: str, *words: str) -> bool:
    name = column.lower()
    return any(w in name for w in words)


def _share(mask) -> float:
    mask = np.asarray(mask, dtype=bool)
    return float(mask.mean()) if len(mask) else 0.0


def _present(values: pd.Series) -> pd.Series:
    """The filled values as text, stripped, without the empty ones."""
    from linkage.io import as_text

    if values.dtype == _TEXT_DTYPE:  # text already as `astype(str)` makes it: no round trip
        text = values.dropna().str.strip()
    else:
        text = pd.Series(as_text(values), dtype=object).dropna().astype(str).str.strip()
    return text[text != ""].reset_index(drop=True)


_TEXT_DTYPE = pd.Series([], dtype=object).astype(str).dtype  # pandas 3: Arrow strings


_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_PHONE_CHARS = re.compile(r"^\+?[\d\s\-().]+$")
_POSTCODE = re.compile(r"^(?=.*\d)[A-Z0-9]{2,5}[ -]?[A-Z0-9]{0,4}$")
_NAME_CHARS = re.compile(r"^[^\W\d_]+(?:[\s'.\-,&]+[^\W\d_]+)*\.?$")
# Legal forms of companies in many languages: a value ending in one is a company's name.
_LEGAL_FORM = re.compile(
    r"(?:^|[\s,.(])(?:inc|ltd|llc|llp|plc|corp|corporation|company|co|gmbh|ag|sa|sarl|bv|nv|"
    r"srl|spa|oy|ab|as|kk|pty|limited|incorporated)\.?\)?$|주식회사|\(주\)|㈜|유한회사",
    re.IGNORECASE)


def _phone_region(sample: pd.Series, at_least: float = 0.0) -> tuple[float, str | None]:
    """The share of values that are valid phone numbers in the region where most are, and it
    (the first region, in order, whose share reaches 95%, else the first with the most).

    Regions are read in two passes that give that answer with fewer parses: the first looks
    only for a region reaching 95% (a region is left after the few failures that rule that
    out); where none does, the second reads them all, leaving a region as soon as the values
    left can no longer lift it above both the best so far and `at_least` (the share the
    caller needs: below it the caller reads no region, whichever it is)."""
    try:
        import phonenumbers
    except ImportError:  # the digits test alone then decides
        return 1.0, None
    values = list(sample.head(40))
    n = max(len(values), 1)
    regions = [None, *sorted(phonenumbers.SUPPORTED_REGIONS)]

    def share(r: str | None, need: float) -> float:
        """Valid share in `r`, or any share below `need` where it cannot reach `need`."""
        valid = 0
        for k, v in enumerate(values):
            if (valid + len(values) - k) / n < need - 1e-9:
                break  # this region can no longer reach `need`
            if r is None and not v.startswith("+"):
                continue
            with contextlib.suppress(phonenumbers.NumberParseException):
                valid += phonenumbers.is_valid_number(phonenumbers.parse(v, r))
        return valid / n

    for r in regions:
        found = share(r, 0.95)
        if found >= 0.95:
            return found, r
    best, region = 0.0, None
    for r in regions:
        found = share(r, max(best + 1e-9, at_least))
        if found > best + 1e-9:
            best, region = found, r
    return best, region


def phone_region_column(phones: pd.Series, frame: pd.DataFrame, region: str | None
                        ) -> str | None:
    """The column of the table that gives each record's country, in which a column of
    phones' national numbers is to be read, or None where `region` (one region for the whole
    column, None: international forms only) reads them as well.

    A column is a column of countries when its values name countries (codes such as "GB",
    names such as "Germany"); it is used when reading each record's national number in its
    own country makes more numbers valid than one region for all (a table of people from
    several countries). Numbers written with a + or 00 are international either way.
    """
    try:
        import phonenumbers

        from linkage.normalize import region_code
    except ImportError:
        return None
    rows = phones.index[phones.notna()]
    if len(rows) == 0:
        return None
    rows = pd.Series(rows).sample(min(len(rows), 1000), random_state=0).to_numpy()
    text = phones.loc[rows].astype(str).str.strip()

    def valid(regions) -> float:
        hits = 0
        for value, r in zip(text, regions, strict=True):
            with contextlib.suppress(phonenumbers.NumberParseException):
                hits += phonenumbers.is_valid_number(phonenumbers.parse(value, r or region))
        return hits / len(text)

    best, column = valid([None] * len(text)), None
    if best + 0.02 >= 1.0:  # one region already reads (nearly) every number: nothing to beat,
        return None  # and the country names (100 MiB of phonenumbers) stay unloaded
    for c in frame.columns:
        if c == phones.name or frame[c].dtype.kind in "fiub":
            continue
        values = frame[c].loc[rows]
        present = values.dropna().astype(str)
        if len(present) < 0.5 * len(values) or present.nunique() > 300:
            continue
        codes = present.map(region_code)
        if codes.notna().mean() < 0.9 or codes.nunique() < 2:
            continue
        share = valid([region_code(v) for v in values])
        if share > best + 0.02:
            best, column = share, str(c)
    return column


def _edit_one_neighbours(values: list[str]) -> float:
    """Share of the distinct values that have another one a single substitution away: typos
    in a hand-typed code give many; labels a machine assigned give about none."""
    seen: dict[tuple[int, str], int] = {}
    hits = np.zeros(len(values), dtype=bool)
    for k, v in enumerate(values):
        for i in range(len(v)):
            key = (i, v[:i] + v[i + 1:])
            j = seen.setdefault(key, k)
            if j != k:
                hits[j] = hits[k] = True
    return float(hits.mean()) if len(values) else 0.0


def profile_column(column: str, values: pd.Series, *, scale: float = 1.0) -> ColumnProfile:
    """A column's role from a sample of its values (its name breaks ties only). `scale`: how
    many records of the table each of `values` stands for, when they are a sample of rows."""
    present = _present(values)
    profile = _by_values(column, values, present, scale)
    _tie(profile, present)
    return profile


class _Rows:
    r"""Rows of text as their distinct values and how many rows hold each: a test is run once
    per distinct value, and a share (or mean) over the rows is the count-weighted one over
    the distinct values. The same number, not an estimate: both are an exact integer (the rows
    that pass, or the sum of an integer per row) divided by the number of rows.

    A test reads the values as Python does (`re`, `str`), as `Series.str` does: pandas gives a
    pattern to Arrow's RE2 only where that finds the same (no \s, \d only in ASCII text, $ only
    without a newline). ASCII values without a newline are tested at once in RE2 with a pattern
    that means there what the Python one means (`_RE2`: Python's \s on ASCII text is
    `ASCII_SPACE`, \d is [0-9], a letter is [A-Za-z], $ is the end); the others one by one."""

    def __init__(self, rows: pd.Series) -> None:
        self.rows = rows
        self._arrow = None  # the distinct values as Arrow strings, where the rows are so held
        held = arrow_data(rows)
        if held is not None and not held.null_count and _is_arrow_text(held.type):
            import pyarrow as pa

            found = held.combine_chunks().dictionary_encode()  # in order of first sight
            codes = found.indices.to_numpy(zero_copy_only=False).astype(np.intp)
            self._arrow = found.dictionary.cast(pa.large_string())
            uniques = self._arrow.to_numpy(zero_copy_only=False)
        else:
            codes, uniques = pd.factorize(rows.to_numpy(dtype=object))
        self.codes = codes
        self.values: list[str] = uniques.tolist()
        self.counts = np.bincount(codes, minlength=len(self.values))
        self.n = len(rows)
        self._tests: dict[tuple, np.ndarray] = {}
        self._plain: tuple | None = None

    def _split(self) -> tuple[np.ndarray, object, list[str]]:
        """(plain, their Arrow array, the other values): `plain` marks the ASCII values
        without a newline."""
        if self._plain is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            array = self._arrow if self._arrow is not None else pa.array(
                self.values, type=pa.large_string())
            plain = pc.and_(pc.string_is_ascii(array),
                            pc.invert(pc.match_substring(array, "\n")))
            mask = plain.to_numpy(zero_copy_only=False)
            others = [v for v, p in zip(self.values, mask.tolist(), strict=True) if not p]
            self._plain = (mask, array.filter(plain), others)
        return self._plain

    def _each(self, arrow, python, dtype) -> np.ndarray:
        """`arrow` of the plain values' Arrow array, `python` of each other value."""
        plain, array, others = self._split()
        out = np.empty(len(self.values), dtype=dtype)
        if len(array):
            out[plain] = np.asarray(arrow(array).to_numpy(zero_copy_only=False), dtype=dtype)
        out[~plain] = np.fromiter(map(python, others), dtype=dtype, count=len(others))
        return out

    def _test(self, how: str, pattern) -> np.ndarray:
        key = (how, pattern)
        if key not in self._tests:
            import pyarrow.compute as pc

            fn = getattr(re.compile(pattern), how)
            re2 = _RE2.get((how, getattr(pattern, "pattern", pattern)))
            if re2 is None:
                self._tests[key] = self.each(lambda v: fn(v) is not None)
            else:
                self._tests[key] = self._each(
                    lambda a: _all_of(pc, a, re2), lambda v: fn(v) is not None, bool)
        return self._tests[key]

    def search(self, pattern) -> np.ndarray:
        """Per distinct value: `pattern` found in it (`Series.str.contains`)."""
        return self._test("search", pattern)

    def match(self, pattern) -> np.ndarray:
        return self._test("match", pattern)

    def fullmatch(self, pattern) -> np.ndarray:
        return self._test("fullmatch", pattern)

    def each(self, fn, dtype=bool) -> np.ndarray:
        """`fn` of each distinct value."""
        return np.fromiter(map(fn, self.values), dtype=dtype, count=len(self.values))

    def words(self) -> np.ndarray:
        """`len(v.split())`: the runs of characters that are not white space."""
        return self._each(_words_of_ascii, lambda v: len(v.split()), np.int64)

    def lengths(self) -> np.ndarray:
        import pyarrow.compute as pc

        return self._each(pc.utf8_length, len, np.int64)

    def digits(self) -> np.ndarray:
        r"""How many characters `\D` leaves (`_NON_DIGIT`): the decimal digits."""
        import pyarrow.compute as pc

        from linkage.normalize import ascii_digits_column

        # the ASCII digits kept by their bytes in one pass (a regex counting them is slower)
        return self._each(lambda a: pc.binary_length(ascii_digits_column(a)),
                          lambda v: len(_NON_DIGIT.sub("", v)), np.int64)

    def unspaced_lengths(self) -> np.ndarray:
        """The length without white space (`_SPACE`)."""
        import pyarrow.compute as pc

        return self._each(
            lambda a: pc.subtract(pc.utf8_length(a),
                                  pc.count_substring_regex(a, f"[{_ASCII_SPACE}]")),
            lambda v: len(_SPACE.sub("", v)), np.int64)

    def starts_with(self, prefix: str) -> np.ndarray:
        import pyarrow.compute as pc

        return self._each(lambda a: pc.starts_with(a, prefix),
                          lambda v: v.startswith(prefix), bool)

    def hangul(self) -> np.ndarray:
        """`has_hangul`: never for ASCII text."""
        import pyarrow as pa

        return self._each(lambda a: pa.array(np.zeros(len(a), dtype=bool)), has_hangul, bool)

    def share(self, mask: np.ndarray) -> float:
        """The share of rows whose value is in `mask` (a bool per distinct value)."""
        return int(self.counts[mask].sum()) / self.n if self.n else 0.0

    def mean(self, numbers: np.ndarray) -> float:
        """The mean over the rows of an integer per distinct value."""
        return int((numbers.astype(np.int64) * self.counts).sum()) / self.n

    def upper(self) -> _Rows:
        """The rows upper-cased as `Series.str.upper` does it for their dtype (Arrow's
        upper case is not Python's: "ß" is "ẞ", not "SS")."""
        upper = copy.copy(self)
        upper.values = pd.Series(self.values, dtype=self.rows.dtype).str.upper().tolist()
        upper._tests, upper._plain, upper._arrow = {}, None, None
        return upper

    def at_rows(self, mask: np.ndarray) -> pd.Series:
        """The rows whose value is in `mask`, in their order."""
        return self.rows[mask[self.codes]]


def _space_bytes() -> np.ndarray:
    from linkage.normalize import ASCII_SPACE  # what `str.split()` splits ASCII at

    space = np.zeros(256, dtype=bool)
    space[[ord(c) for c in ASCII_SPACE]] = True
    return space


_SPACE_BYTES = _space_bytes()


def _words_of_ascii(array):
    """`len(v.split())` of each value of an Arrow array of ASCII text (no missing value): the
    runs of bytes that are not white space, told by their first bytes in one pass over the
    buffers."""
    import pyarrow as pa

    array = array.cast(pa.large_string())
    raw = np.frombuffer(array.buffers()[1], dtype=np.int64)[
        array.offset:array.offset + len(array) + 1]
    offsets = raw - raw[0]
    if not offsets[-1]:  # no value, or only empty ones
        return pa.array(np.zeros(len(array), dtype=np.int64))
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[raw[0]:raw[-1]]
    word = ~_SPACE_BYTES[data]
    first = word.copy()  # a word's first byte: after white space, or a value's first byte
    first[1:] &= ~word[:-1]
    starts = offsets[:-1][offsets[:-1] < offsets[1:]]  # each non-empty value's first byte
    first[starts] = word[starts]
    counted = np.concatenate(([0], np.cumsum(first, dtype=np.int64)))
    return pa.array(counted[offsets[1:]] - counted[offsets[:-1]])


def _is_arrow_text(kind) -> bool:
    """Whether an Arrow type is a string type (`string`, `large_string`)."""
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _all_of(pc, array, patterns: tuple[str, ...]):
    """Arrow's answer: every RE2 pattern of `patterns` found in each value."""
    found = pc.match_substring_regex(array, patterns[0])
    for pattern in patterns[1:]:
        found = pc.and_(found, pc.match_substring_regex(array, pattern))
    return found


def _count_share(counts: pd.Series, pattern: re.Pattern) -> float:
    """The share of rows that `pattern` matches whole, from the rows' `value_counts`."""
    hits = np.fromiter((pattern.fullmatch(v) is not None for v in counts.index), dtype=bool,
                       count=len(counts))
    total = int(counts.sum())
    return int(counts.to_numpy()[hits].sum()) / total if total else 0.0


_NON_DIGIT = re.compile(r"\D")
_SPACE = re.compile(r"\s")
# Python's \s on ASCII text (`str.isspace`), as an RE2 class's contents.
_ASCII_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f "


def _re2_tests() -> dict[tuple[str, str], tuple[str, ...]]:
    r"""(how, Python pattern) -> RE2 patterns that all find a value of ASCII text without a
    newline exactly where the Python test (`re.search`, `match`, `fullmatch`) does: \s as
    `_ASCII_SPACE`, \d as [0-9], [^\W\d_] (a letter) as [A-Za-z], $ as the end; a
    look-ahead (which RE2 lacks) as a pattern of its own."""
    ws = _ASCII_SPACE
    legal = _LEGAL_FORM.pattern.split("$|")[0] + "$"  # the Korean forms are not ASCII
    letter = "[A-Za-z]"
    tests = {
        ("match", _EMAIL.pattern): f"^[^@{ws}]+@[^@{ws}]+\\.[^@{ws}]+$",
        ("fullmatch", _INTEGER.pattern): "[+-]?[0-9]+",
        ("fullmatch", _NUMBER.pattern): r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?",
        ("fullmatch", _PHONE_CHARS.pattern): f"\\+?[0-9{ws}\\-().]+",
        ("search", r"[\s\-().+]"): f"[{ws}\\-().+]",
        ("search", _LEGAL_FORM.pattern): "(?i)" + legal.replace(r"[\s,.(]", f"[{ws},.(]"),
        ("search", r"[,;|]"): "[,;|]",
        ("search", r"\s"): f"[{ws}]",
        ("search", r"\d"): "[0-9]",
        ("search", r"[A-Za-z]"): "[A-Za-z]",
        ("fullmatch", _NAME_CHARS.pattern): f"{letter}+(?:[{ws}'.\\-,&]+{letter}+)*\\.?",
    }
    out = {key: ((f"^(?:{p})$",) if key[0] == "fullmatch" else (p,)) for key, p in tests.items()}
    out["fullmatch", _POSTCODE.pattern] = ("^(?:[A-Z0-9]{2,5}[ -]?[A-Z0-9]{0,4})$", "[0-9]")
    return out


_RE2 = _re2_tests()


def _by_values(column: str, values: pd.Series, present: pd.Series,
               scale: float) -> ColumnProfile:
    filled = len(present) / max(len(values), 1)
    if len(present) == 0:
        return ColumnProfile(column, "other", 0.0, 0.0, "empty").exclude("empty")
    counts = present.value_counts()
    nunique = len(counts)
    distinct = nunique / len(present)

    def profile(kind: str, why: str, **extra) -> ColumnProfile:
        return ColumnProfile(column, kind, round(filled, 4), round(distinct, 4), why,
                             int(nunique), unique=nunique == len(present), **extra)

    if nunique == 1 or counts.iloc[0] >= 0.99 * len(present):
        top = str(counts.index[0])[:20]
        return profile("constant", f"one value ({top!r}) in {counts.iloc[0] / len(present):.0%} "
                       "of filled records").exclude("(nearly) constant: no evidence")
    sample = present.sample(min(len(present), _SAMPLE), random_state=0).reset_index(drop=True)
    rows = _Rows(sample)
    share = rows.share

    if share(rows.match(_EMAIL)) > 0.8:
        return profile("email", "values look like e-mail addresses")

    from linkage.normalize import parse_dates

    head = pd.Series(sample.to_numpy()[:2000], dtype=object)
    eight = _share(head.str.fullmatch(r"(1[5-9]|20)\d{6}"))
    if _share(head.str.contains(r"\D")) > 0.5 or eight > 0.8:
        parsed = parse_dates(head, order="DMY")
        if _share(parsed["valid"]) > 0.8:
            return profile("date", "values parse as dates")

    integer = share(rows.fullmatch(_INTEGER)) > 0.99 and \
        _count_share(counts, _INTEGER) > 0.99
    # Phones: 7 to 15 digits written with separators, a + or a trunk 0, valid in some region.
    phone_chars = rows.fullmatch(_PHONE_CHARS)
    if share(phone_chars) > 0.8:  # else fewer than 80% can be phones, whatever their digits
        digits = rows.digits()
        phoney = phone_chars & (digits >= 7) & (digits <= 15)
        if share(phoney) > 0.8 and (share(rows.search(r"[\s\-().+]")) > 0.3
                                    or share(rows.starts_with("0")) > 0.5):
            valid, region = _phone_region(rows.at_rows(phoney), at_least=0.6)
            if valid >= 0.6:
                where = f" in region {region}" if region else ""
                return profile("phone", f"valid phone numbers{where} ({valid:.0%} of a sample)",
                               region=region)

    if integer:
        return _integer_profile(profile, present, sample, counts, scale)
    if share(rows.fullmatch(_NUMBER)) > 0.99 and pd.to_numeric(
            present, errors="coerce").notna().all():
        return profile("numeric", "numbers with fractions: an amount or a measure")

    tokens = rows.mean(rows.words())
    hangul = share(rows.hangul())
    if hangul > 0.5:
        lengths = rows.unspaced_lengths()
        if tokens <= 1.3 and share((lengths >= 2) & (lengths <= 5)) > 0.9 and nunique > 50:
            return profile("hangul_name", "short Hangul words of 2 to 5 syllables")
    if share(rows.search(_LEGAL_FORM)) > 0.2:
        return profile("company", "many values end in a legal form (Inc, Ltd, GmbH, 주식회사)")
    if nunique <= 50 or distinct < 0.002:
        return profile("category", f"{nunique} distinct values")
    # Lists of labels from a small vocabulary ("Comedy,Drama", "actor;writer"): many values,
    # few words; a column of names has as many words as people.
    listed = rows.search(r"[,;|]")
    if share(listed) > 0.3:
        words = set(pd.Series(rows.values, dtype=object).str.split(r"[,;|]\s*").explode()
                    .str.strip().dropna())
        if len(words) <= 50:
            return profile("category", f"lists of {len(words)} labels")
    if tokens >= 5:
        return profile("text", "free text (five or more words on average)")
    spaced, digit = rows.search(r"\s"), rows.search(r"\d")
    if share(~spaced) > 0.95 and share(digit) > 0.9:
        labels = _group_labels(profile, present, counts, "codes of letters and digits")
        if labels is not None:
            return labels
    if share(rows.upper().fullmatch(_POSTCODE)) > 0.9 and nunique != len(present) and \
            share(rows.search(r"[A-Za-z]")) > 0.5:
        return profile("postcode", "short codes of letters and digits shared by many records")
    if share(digit) > 0.5 and tokens >= 2:
        return profile("address", "words with numbers, like an address")
    if share(rows.fullmatch(_NAME_CHARS)) > 0.9 and tokens <= 4 and \
            rows.mean(rows.lengths()) <= 30:
        return profile("name", "short words, many values: a name")
    if share(~spaced) > 0.95 and share(digit) > 0.5:
        return _code_profile(profile, present, counts, "codes of letters and digits")
    return profile("other", "short text")


def _group_labels(profile, present: pd.Series, counts: pd.Series,
                  what: str) -> ColumnProfile | None:
    """Repeated codes, a few records each, none a typo of another: labels a machine gave."""
    if len(counts) == len(present) or len(counts) < 50 or len(counts) / len(present) < 0.05 \
            or counts.iloc[0] > 50:
        return None
    typos = _edit_one_neighbours([str(v) for v in counts.index[:5_000]])
    if typos >= 0.02:
        return None
    return profile("id", f"repeated {what} with no typos ({typos:.1%} one edit apart): labels "
                   "of existing groups").exclude(
        "group labels: a copy of an earlier answer, not evidence")


def _code_profile(profile, present: pd.Series, counts: pd.Series, what: str) -> ColumnProfile:
    """Identifiers: unique ones identify the record (the id column); repeated ones identify
    the thing, unless no value is a typo of another (labels a machine gave, such as the
    cluster ids of an earlier run: comparing them would copy that run's answer)."""
    if len(counts) == len(present):
        return profile("id", f"unique {what}").exclude("unique: the id of a record, not "
                                                       "evidence")
    distinct = len(counts) / len(present)
    labels = _group_labels(profile, present, counts, what)
    if labels is not None:
        return labels
    if distinct >= 0.05:
        typos = _edit_one_neighbours([str(v) for v in counts.index[:5_000]])
        if distinct >= 0.2:
            return profile("id", f"{what}, often distinct ({typos:.0%} one edit apart)")
    return profile("other", what)


def _integer_profile(profile, present: pd.Series, sample: pd.Series,
                     counts: pd.Series, scale: float = 1.0) -> ColumnProfile:
    numbers = pd.to_numeric(present, errors="coerce").to_numpy(dtype=np.float64)
    n, nunique = len(numbers), len(counts)
    lo, hi = float(np.nanmin(numbers)), float(np.nanmax(numbers))
    span = hi - lo + 1
    zeros = _share(present.str.match(r"^0\d"))
    if nunique == n and n >= 20 and span <= 1.1 * n * scale + 10 and zeros == 0:
        return profile("row_number", f"unique integers {lo:.0f}..{hi:.0f}: a sequence").exclude(
            "a row number: no evidence")
    if zeros == 0 and _share((numbers >= 1000) & (numbers <= 2100)) > 0.95 and \
            _share(present.str.len() == 4) > 0.95 and nunique >= 5:
        return profile("year", f"four-digit years {lo:.0f}..{hi:.0f}")
    if lo >= 1 and hi <= 12 and nunique >= 6:
        return profile("month", "integers 1..12: a month")
    if lo >= 1 and hi <= 31 and hi >= 28 and nunique >= 20:
        return profile("day", "integers 1..31: a day of the month")
    if zeros == 0 and nunique >= 20 and span <= 1.5 * nunique and n / nunique > 1.05:
        # Dense integers repeated by a few records each, with no bias to small values (street
        # and house numbers are mostly small): labels of groups.
        value_counts = counts.copy()
        value_counts.index = pd.to_numeric(value_counts.index)
        rank = pd.Series(value_counts.index.to_numpy(dtype=float)).rank().to_numpy()
        freq = pd.Series(value_counts.to_numpy(dtype=float)).rank().to_numpy()
        rho = float(np.corrcoef(rank, freq)[0, 1]) if np.std(freq) > 0 else 0.0
        if rho > -0.3 and counts.iloc[0] <= 50:
            return profile("id", f"integers {lo:.0f}..{hi:.0f}, a few records each: labels "
                           "of existing groups").exclude(
                "group labels: a copy of an earlier answer, not evidence")
    lengths = present.str.len()
    if nunique <= 50:
        return profile("category", f"{nunique} distinct numbers")
    if len(counts) / n >= 0.5 or (len(counts) / n >= 0.2 and lengths.median() >= 6):
        return _code_profile(profile, present, counts, "numeric codes")
    if lengths.value_counts(normalize=True).iloc[0] > 0.9 and 3 <= lengths.median() <= 6:
        return profile("postcode", "numeric codes of one length shared by many records")
    return profile("other", "integer codes (compared by edits, not as amounts)", code=True)


# -- across columns ------------------------------------------------------------------------

_TOKENS = re.compile(r"[^\W_]+")


def _text_at(values: pd.Series, rows: np.ndarray) -> np.ndarray:
    """`as_text(values)[rows]`: of text and numbers, which `as_text` writes one value at a
    time, only the rows are written."""
    from linkage.io import as_text

    dtype = values.dtype
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind in "fO"):
        return as_text(values.take(rows))
    return as_text(values)[rows]


def _words(values: pd.Series, rows: np.ndarray) -> list[frozenset | None]:
    return word_sets(_text_at(values, rows))


def word_sets(texts) -> list[frozenset | None]:
    """Each text's set of lower-cased words (`_TOKENS`), None where missing; the words of
    each distinct text found once."""
    made: dict[str, frozenset] = {}

    def words(v: str) -> frozenset:
        found = made.get(v)
        if found is None:
            found = made[v] = frozenset(_TOKENS.findall(str(v).lower()))
        return found

    return [words(v) if v is not None and v == v else None for v in texts]


def _first_last(values: pd.Series, rows: np.ndarray) -> list[tuple[str, str] | None]:
    out = []
    for v in _text_at(values, rows):
        words = _TOKENS.findall(str(v).lower()) if v is not None and v == v else []
        out.append((words[0], words[-1]) if len(words) >= 2 else None)
    return out


def _date_parts(frame: pd.DataFrame, profiles: list[ColumnProfile], rows: np.ndarray) -> None:
    """Year, month and day columns that form valid dates together become one date."""
    by_kind = {k: [p for p in profiles if p.kind == k] for k in ("year", "month", "day")}
    if by_kind["year"] and by_kind["month"] and by_kind["day"]:
        y, m, d = by_kind["year"][0], by_kind["month"][0], by_kind["day"][0]
        parts = pd.DataFrame({k: pd.to_numeric(_present_at(frame[p.column], rows),
                                               errors="coerce")
                              for k, p in zip(("year", "month", "day"), (y, m, d), strict=True)})
        parts = parts.dropna()
        valid = pd.to_datetime(parts.astype("int64"), errors="coerce").notna() \
            if len(parts) else pd.Series([], dtype=bool)
        if len(parts) >= 20 and valid.mean() > 0.9:
            for p in (y, m, d):
                p.why += f"; with {y.column}, {m.column}, {d.column} a date"
                p.parts = [y.column, m.column, d.column]
            return
    for p in by_kind["month"] + by_kind["day"]:  # a lone month or day: a small category
        p.kind, p.why = "category", p.why + " (no date to complete)"
        p.identifying = False


def _present_at(values: pd.Series, rows: np.ndarray) -> pd.Series:
    return pd.Series(_text_at(values, rows), dtype=object)


_GIVEN_HINTS = ("given", "first", "fore", "christian")
_SURNAME_HINTS = ("surname", "last", "family", "성")
_FULL_HINTS = ("full",)


def _name_parts(frame: pd.DataFrame, profiles: list[ColumnProfile], rows: np.ndarray) -> None:
    """Single-word name columns whose words a multi-word name column holds in the same record
    are the given name (its first word) or the surname (its last word); the holder is the full
    name. Without such a column, the column name breaks the tie."""
    names = [p for p in profiles if p.kind == "name"]
    words = {p.column: _words(frame[p.column], rows) for p in names}
    size = {c: np.mean([len(w) for w in ws if w]) if any(ws) else 0.0 for c, ws in words.items()}
    multi = [p for p in names if size[p.column] >= 1.5]
    single = [p for p in names if size[p.column] < 1.5]
    for p in single:
        best = (0.0, None, None)
        for f in multi:
            ends = _first_last(frame[f.column], rows)
            pairs = [(w, e) for w, e in zip(words[p.column], ends, strict=True) if w and e]
            if len(pairs) < 20:
                continue
            first = np.mean([e[0] in w for w, e in pairs])
            last = np.mean([e[1] in w for w, e in pairs])
            best = max(best, (first, "given_name", f), (last, "surname", f),
                       key=lambda t: t[0])
        share, kind, holder = best
        if kind and share > 0.5:
            p.kind, p.why = kind, f"{p.why}; {share:.0%} of records hold it as the " \
                f"{'first' if kind == 'given_name' else 'last'} word of {holder.column}"
            if holder.kind == "name":
                holder.kind, holder.why = "full_name", holder.why + \
                    "; holds the given name and surname columns' words"
    for p in names:
        if p.kind != "name":
            continue
        if size[p.column] < 1.5 and _hint(p.column, *_SURNAME_HINTS) and not _hint(
                p.column, *_GIVEN_HINTS):
            p.kind, p.why = "surname", p.why + "; its column name says surname"
        elif size[p.column] < 1.5 and _hint(p.column, *_GIVEN_HINTS):
            p.kind, p.why = "given_name", p.why + "; its column name says given name"
        elif size[p.column] >= 1.5 and _hint(p.column, *_FULL_HINTS):
            p.kind, p.why = "full_name", p.why + "; its column name says full name"


_NAME_TIES = {  # only among roles the values leave open
    "hangul_name": ("name", "이름", "성명"),
    "address": ("address", "addr", "street", "주소"),
    "company": ("company", "corp", "employer", "organi", "firm", "회사", "상호"),
    "phone": ("phone", "tel", "mobile", "cell", "fax", "전화", "휴대"),
    "date": ("date", "dob", "birth", "생년월일", "일자"),
    "postcode": ("post", "zip", "우편"),
}


def _tie(p: ColumnProfile, present: pd.Series) -> None:
    """Names break ties: short text, or codes, whose values fit the role the name gives."""
    if not p.compare or p.code or p.kind not in ("other", "name", "text", "category"):
        return
    for kind, words in _NAME_TIES.items():
        if not _hint(p.column, *words):
            continue
        sample = present.head(2000)
        if kind == "hangul_name" and p.kind in ("name", "other", "category") and \
                _share(sample.map(has_hangul)) > 0.5:
            p.kind, p.why = kind, p.why + "; Hangul values, and its column name says name"
        elif kind in ("address", "company") and p.kind in ("other", "name", "text"):
            p.kind, p.why = kind, p.why + f"; its column name says {kind}"
        elif kind == "postcode" and p.kind in ("other", "category") and _share(
                sample.str.upper().str.fullmatch(_POSTCODE)) > 0.9:
            p.kind, p.why = kind, p.why + "; its column name says postcode"
        else:
            continue
        p.identifying = p.kind in IDENTIFYING
        return


def sample_rows(n: int, size: int, seed: int = 0) -> np.ndarray:
    """The positions, in order, of a seeded random sample of `size` of `n` rows (all of
    them where `n` <= `size`): what a statistic that a sample answers reads of a table."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def profile_table(frame: pd.DataFrame, rows: int | None = None) -> list[ColumnProfile]:
    """Every column's profile, then the roles only several columns show together. Of a
    table longer than `_ROWS`, a seeded sample of `_ROWS` rows is profiled (`sample_rows`).
    `rows`: the table's size where `frame` is already a uniform sample of it (a caller that
    took one for its own use spares a second pass over a large table)."""
    n = len(frame) if rows is None else rows
    if len(frame) > _ROWS:  # a sample of rows tells the roles as well, in a fraction of the time
        frame = frame.take(sample_rows(len(frame), _ROWS)).reset_index(drop=True)
    # Each column alone, side by side: its Arrow tests release the GIL (in the columns' order)
    profiles = thread_map(lambda c: profile_column(str(c), frame[c], scale=n / len(frame)),
                          list(frame.columns))
    for p in profiles:  # a share of unique values in a sample says nothing of the whole
        p.unique = p.unique and len(frame) == n
    n = len(frame)
    rows = np.sort(np.random.default_rng(0).choice(n, min(n, 5_000), replace=False)) \
        if n else np.zeros(0, dtype=np.int64)
    _date_parts(frame, profiles, rows)
    _name_parts(frame, profiles, rows)
    for p in profiles:
        p.identifying = p.kind in IDENTIFYING and p.compare
    return profiles


# -- two tables ------------------------------------------------------------------------------

def _value_set(values: pd.Series, limit: int = 5_000) -> set[str]:
    """The first `limit` distinct values, lower-cased with white space collapsed. Distinct raw
    values are taken first and only as many normalized as it takes (the same set as
    normalizing the whole column: first appearances keep their order)."""
    raw = _present(values).drop_duplicates()

    def norm(text: pd.Series) -> pd.Series:
        return text.str.lower().str.replace(r"\s+", " ", regex=True).drop_duplicates()

    head = norm(raw.head(4 * limit))
    if len(head) < limit and len(raw) > 4 * limit:
        head = norm(raw)
    return set(head.head(limit))


_FAMILIES = ({"given_name", "surname", "full_name", "name", "hangul_name"},
             {"date", "year"}, {"text", "other", "address", "company", "name"})


def _family(kind: str) -> str:
    """Kinds a field may be profiled as on one side and the other (a title is short text on
    one side and a name on the other)."""
    for k, family in enumerate(_FAMILIES):
        if kind in family:
            return f"family{k}"
    return kind


def _overlap(sa: set[str], sb: set[str], wa: set[str], wb: set[str]) -> float:
    """The share of the smaller set of values the other holds, or the Jaccard overlap of the
    words, whichever is larger."""
    if not sa or not sb:
        return 0.0
    return max(len(sa & sb) / min(len(sa), len(sb)), len(wa & wb) / max(len(wa | wb), 1))


def _distribution(values: pd.Series, limit: int = 20_000) -> pd.Series:
    present = _present(values).head(limit).str.lower().str.replace(r"\s+", " ", regex=True)
    return present.value_counts(normalize=True)


CONTACT_OVERLAP = 0.1  # e-mails or phones that two columns share beyond any chance


def _contact_keys(values: pd.Series, kind: str) -> pd.Series:
    """What two writings of one e-mail address (case) or phone number (its format, a
    national or international prefix: the last eight digits) have in common."""
    text = _present(values).str.lower()
    if kind == "phone":
        text = text.str.replace(r"\D", "", regex=True).str[-8:]
        text = text[text.str.len() == 8]
    return text


def _contact_overlap(left: pd.Series, right: pd.Series, kind: str,
                     limit: int = 5_000, lookup: int = 200_000) -> float:
    """The share of a seeded sample of one column's e-mails or phones that the other column
    holds, the larger of the two ways. Looked up in (a large sample of) the other column and
    scaled by that sample's share of it: each record's own value repeats nowhere else, so two
    small samples share only the values of records both happen to hold, a share that falls as
    the tables grow."""
    best = 0.0
    for one, other in ((left, right), (right, left)):
        one = one[one.notna()]
        keys = _contact_keys(one.sample(limit, random_state=0) if len(one) > limit else one,
                             kind).drop_duplicates()
        if len(keys) == 0:
            continue
        present = other[other.notna()]
        looked = present.sample(lookup, random_state=0) if len(present) > lookup else present
        held = set(_contact_keys(looked, kind))
        hits = sum(k in held for k in keys) / len(keys)
        best = max(best, min(1.0, hits * len(present) / max(len(looked), 1)))
    return best


def _month_distribution(values: pd.Series, limit: int = 20_000) -> pd.Series:
    """The shares of a column of dates by calendar month, read on a seeded random sample of
    the records (a table sorted by date holds one period at its head)."""
    from linkage.normalize import parse_dates

    present = values[values.notna()]
    if len(present) > limit:
        present = present.sample(limit, random_state=0)
    months = parse_dates(present.astype(str), order="DMY")["iso"].dropna().str[:7]
    return months.value_counts(normalize=True)


def _shared_mass(a: pd.Series, b: pd.Series) -> float:
    """Histogram intersection: the share of records whose value the other column holds as
    often (years of release against years of death: the same years, not as often)."""
    both = a.index.intersection(b.index)
    return float(np.minimum(a[both].to_numpy(), b[both].to_numpy()).sum())


def pair_columns(left: pd.DataFrame, right: pd.DataFrame,
                 left_profiles: list[ColumnProfile],
                 right_profiles: list[ColumnProfile]) -> list[tuple[str, str, float]]:
    """The columns of `left` and `right` that hold one field: (left column, right column,
    overlap), best pairs first, each column in one pair at most.

    Decided by the values; a shared name only breaks ties. The overlap is the share of the
    smaller set of distinct values that the other holds (values lower-cased, white space
    collapsed), or the Jaccard overlap of their words (titles written a little differently),
    for dates and integers that repeat the share of records whose value the other holds as
    often (years of birth and of death share their values, not their shares), at least one
    half (near-unique dates: a near copy, 0.8), between columns of one family of kinds. A
    shared name pairs two columns the values cannot tell apart (low-cardinality, mostly
    empty, constant), unless the values are of other kinds and hardly overlap (tables whose
    columns are numbered, c1, c2 ..., each in its own order): those are two fields.
    """
    lp = {p.column: p for p in left_profiles}
    rp = {p.column: p for p in right_profiles}

    def usable(p: ColumnProfile) -> bool:
        return p.compare and p.values >= 20 and p.filled >= 0.05

    cols_l, cols_r = list(map(str, left.columns)), list(map(str, right.columns))
    sets = {("l", c): _value_set(left[c]) for c in cols_l if usable(lp[c])}
    sets.update({("r", c): _value_set(right[c]) for c in cols_r if usable(rp[c])})
    words = {k: {w for v in s for w in _TOKENS.findall(v)} for k, s in sets.items()}
    dists: dict[tuple[str, str, bool], pd.Series] = {}

    def dist(side: str, c: str, months: bool = False) -> pd.Series:
        if (side, c, months) not in dists:
            values = (left if side == "l" else right)[c]
            dists[side, c, months] = _month_distribution(values) if months else \
                _distribution(values)
        return dists[side, c, months]

    scores = []
    for a in cols_l:
        for b in cols_r:
            same = a == b
            family = _family(lp[a].kind) == _family(rp[b].kind)
            if lp[a].kind == rp[b].kind in ("email", "phone") and lp[a].compare \
                    and rp[b].compare and not same:
                # Near-unique contacts, looked up in the whole other column (see
                # `_contact_overlap`); chance shares none of them.
                overlap = _contact_overlap(left[a], right[b], lp[a].kind)
                if overlap >= CONTACT_OVERLAP:
                    scores.append((overlap, a, b))
                continue
            if ("l", a) not in sets or ("r", b) not in sets:
                if same and (family or not (lp[a].compare and rp[b].compare)):
                    scores.append((0.0, a, b))  # nothing to tell them apart: the name
                continue
            sa, sb = sets["l", a], sets["r", b]
            overlap = _overlap(sa, sb, words["l", a], words["r", b])
            # Integers are integers whatever kind a sample made of them (42 episode numbers
            # a category on one side, codes on the other).
            family = family or (all(v.isdigit() for v in sa) and all(v.isdigit() for v in sb))
            if not family:
                if same and overlap >= 0.02:
                    scores.append((overlap, a, b))
                continue
            if _family(lp[a].kind) == _family("date") or all(v.isdigit() for v in sa):
                # Dates and numbers that repeat (years) share their values whatever they
                # are: the records' shares must match too. Near-unique ones (dates of birth)
                # pair where one is nearly a copy of the other.
                # Full dates are compared by month: two samples of near-unique dates share
                # few exact values, and how many depends on the sample's share of the table
                # (its records' partners are in the other sample only so often), not on
                # whether the columns hold one field; their shares by month do not.
                near_copy = overlap >= 0.8 and min(lp[a].distinct, rp[b].distinct) > 0.5
                months = lp[a].kind == rp[b].kind == "date"
                overlap = overlap if near_copy else _shared_mass(dist("l", a, months),
                                                                 dist("r", b, months))
            if same or overlap >= 0.5:
                scores.append((overlap, a, b))
    pairs, used_l, used_r = [], set(), set()
    for score, a, b in sorted(scores, key=lambda t: (-t[0], t[1] != t[2], t[1], t[2])):
        if a in used_l or b in used_r:
            continue
        used_l.add(a)
        used_r.add(b)
        pairs.append((a, b, round(score, 3)))
    return pairs
