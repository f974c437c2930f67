"""Recall by injection: copy clean records with one controlled perturbation each, run the rules on
the table with the copies, and count how many copies end in their source's cluster.

Without truth, recall cannot be measured on the records themselves; it can on copies whose true
match is known because we made them. A source is a "clean" record: one the rules leave alone in
a cluster of one, so its copy's only true match is the source. Each copy carries one kind of
perturbation, applied to one field that the rules compare:

- `exact`: an unchanged copy, the control (a miss here is a blocking or scoring bug);
- `spaces`: a space removed, doubled, or put inside a word (`김민수` → `김 민수`);
- `punctuation`: a mark removed or added (`Apt. 21D` → `Apt 21D`, `john.kim@` → `johnkim@`);
- `word`: two words swapped, a word dropped or abbreviated (`Street` → `St`, `서울특별시` → `서울`,
  `John Smith` → `J. Smith`);
- `typo`: one character edit, jamo-level for Hangul (`김민수` → `김민슈`), one digit in a date or
  phone;
- `format`: the same value written another way: dates (`1982-09-12` → `1982년 9월 12일`), phones
  (`010-1234-5678` ↔ `01012345678` ↔ `+82 10 1234 5678`), company legal forms (`(주)` ↔
  `주식회사`, `Inc.` ↔ `Incorporated`), letter case.

Everything is drawn from `numpy.random.default_rng` seeded per record, so the same seed gives
the same copies byte for byte.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage._schema import did_you_mean
from linkage.errors import InputError
from linkage.normalize.hangul import has_hangul

if TYPE_CHECKING:
    from linkage.result import Result
    from linkage.settings import Rules

KINDS = ("exact", "spaces", "punctuation", "word", "typo", "format")

# What each kind may touch, by the role a field plays in the rules (its normalizer's type).
# A space inside a phone or a date is a format variant, so `spaces` keeps to free text.
_KIND_ROLES = {
    "spaces": {"name", "company", "text"},
    "punctuation": {"name", "company", "text", "email"},
    "word": {"name", "company", "text"},
    "typo": {"name", "company", "text", "email", "date", "phone", "postcode", "other"},
    "format": {"name", "company", "text", "email", "date", "phone", "postcode", "other"},
}
_ROLE_OF_NORMALIZER = {
    "name": "name", "date": "date", "phone": "phone", "email": "email", "company": "company",
    "text": "text", "postcode": "postcode", "url": "other",
}


# ------------------------------------------------------------------------------------------
# Hangul: one jamo changed into a look-alike or sound-alike, or a syllable dropped or doubled
# ------------------------------------------------------------------------------------------

_SYLLABLE_FIRST, _SYLLABLE_LAST = 0xAC00, 0xD7A3
# Initial consonants (ㄱ0 ㄲ1 ㄴ2 ㄷ3 ㄸ4 ㄹ5 ㅁ6 ㅂ7 ㅃ8 ㅅ9 ㅆ10 ㅇ11 ㅈ12 ㅉ13 ㅊ14 ㅋ15
# ㅌ16 ㅍ17 ㅎ18): aspirated/plain/tense neighbours, and ㄴ/ㄹ, ㅇ/ㅎ, which are misheard.
_INITIAL = {0: 15, 15: 0, 1: 0, 2: 5, 5: 2, 3: 16, 16: 3, 4: 3, 6: 7, 7: 17, 17: 7, 8: 7,
            9: 10, 10: 9, 11: 18, 18: 11, 12: 14, 14: 12, 13: 12}
# Vowels (ㅏ0 ㅐ1 ㅑ2 ㅒ3 ㅓ4 ㅔ5 ㅕ6 ㅖ7 ㅗ8 ㅘ9 ㅙ10 ㅚ11 ㅛ12 ㅜ13 ㅝ14 ㅞ15 ㅟ16 ㅠ17 ㅡ18
# ㅢ19 ㅣ20): one stroke apart (ㅏ/ㅑ, ㅜ/ㅠ), or pronounced alike (ㅐ/ㅔ, ㅚ/ㅙ/ㅞ).
# Every vowel has one.
_MEDIAL = {0: 2, 2: 0, 1: 5, 5: 1, 3: 7, 7: 3, 4: 6, 6: 4, 8: 12, 12: 8, 9: 0, 10: 11, 11: 10,
           13: 17, 17: 13, 14: 4, 15: 5, 16: 20, 18: 13, 19: 20, 20: 19}
# Final consonants (0 none, ㄱ1, ㄴ4, ㄹ8, ㅁ16, ㅇ21): a final added, dropped or confused.
_FINAL = {0: 4, 4: 21, 21: 4, 16: 4, 8: 0, 1: 0}


def _syllable_parts(ch: str) -> tuple[int, int, int]:
    code = ord(ch) - _SYLLABLE_FIRST
    return code // 588, (code % 588) // 28, code % 28


def _syllable(initial: int, medial: int, final: int) -> str:
    return chr(_SYLLABLE_FIRST + (initial * 21 + medial) * 28 + final)


def _is_syllable(ch: str) -> bool:
    return _SYLLABLE_FIRST <= ord(ch) <= _SYLLABLE_LAST


def hangul_typo(value: str, rng: np.random.Generator) -> str | None:
    """One Hangul edit: a jamo changed (`김민수` → `김민슈`, `김` → `킴`) or, now and then, a
    syllable dropped or doubled. The first syllable is left alone when there are others
    (people rarely mistype the surname). None when `value` has no Hangul syllable."""
    positions = [i for i, ch in enumerate(value) if _is_syllable(ch)]
    if not positions:
        return None
    pool = positions[1:] or positions
    i = pool[int(rng.integers(len(pool)))]
    if len(positions) >= 3 and rng.random() < 0.2:
        if rng.random() < 0.5:
            return value[:i] + value[i + 1 :]
        return value[: i + 1] + value[i] + value[i + 1 :]
    initial, medial, final = _syllable_parts(value[i])
    options = [(initial, _MEDIAL[medial], final)]
    if initial in _INITIAL:
        options.append((_INITIAL[initial], medial, final))
    if final in _FINAL:
        options.append((initial, medial, _FINAL[final]))
    choice = options[int(rng.integers(len(options)))]
    return value[:i] + _syllable(*choice) + value[i + 1 :]


# ------------------------------------------------------------------------------------------
# Latin letters: a keyboard typo
# ------------------------------------------------------------------------------------------

_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard_neighbours() -> dict[str, str]:
    where = {ch: (r, c + 0.5 * r) for r, row in enumerate(_KEY_ROWS) for c, ch in enumerate(row)}
    return {
        ch: "".join(o for o, (r2, c2) in where.items()
                    if o != ch and abs(r - r2) <= 1 and abs(c - c2) <= 1)
        for ch, (r, c) in where.items()
    }


_NEIGHBOURS = _keyboard_neighbours()


def latin_typo(word: str, rng: np.random.Generator) -> str | None:
    """One swapped, dropped, doubled or mistyped (keyboard neighbour) letter, never the first
    letter. None when `word` is too short to change that way. The result always differs from
    `word` ignoring case, so a normalizer that lower-cases cannot undo it."""
    n = len(word)
    if n < 2:
        return None
    for _ in range(20):
        op = int(rng.integers(4))
        i = int(rng.integers(1, n))
        if op == 0 and i < n - 1:
            new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif op == 1 and n >= 3:
            new = word[:i] + word[i + 1 :]
        elif op == 2:
            new = word[: i + 1] + word[i] + word[i + 1 :]
        elif op == 3 and word[i].lower() in _NEIGHBOURS:
            near = _NEIGHBOURS[word[i].lower()]
            ch = near[int(rng.integers(len(near)))]
            new = word[:i] + (ch.upper() if word[i].isupper() else ch) + word[i + 1 :]
        else:
            continue
        if new.lower() != word.lower():
            return new
    return None


def _text_typo(value: str, rng: np.random.Generator) -> str | None:
    """A typo in one word of free text: jamo-level in a Hangul word, a keyboard typo in a
    Latin word of three letters or more."""
    words = [(m.start(), m.group()) for m in re.finditer(r"\S+", value)]
    usable = [(s, w) for s, w in words
              if has_hangul(w) or sum(ch.isascii() and ch.isalpha() for ch in w) >= 3]
    if not usable:
        return None
    start, word = usable[int(rng.integers(len(usable)))]
    if has_hangul(word):
        new = hangul_typo(word, rng)
    else:
        letters = [m for m in re.finditer(r"[A-Za-z]{2,}", word)]
        if not letters:
            return None
        m = max(letters, key=lambda x: len(x.group()))
        changed = latin_typo(m.group(), rng)
        new = None if changed is None else word[: m.start()] + changed + word[m.end() :]
    if new is None:
        return None
    return value[:start] + new + value[start + len(word) :]


def _digit_typo(value: str, rng: np.random.Generator, *, skip: int = 0,
                accept: Callable[[str], bool] | None = None) -> str | None:
    """One digit changed (after the first `skip` digits), kept only when `accept` says the new
    value is still well formed (a date must stay a calendar date)."""
    places = [i for i, ch in enumerate(value) if ch.isdigit()][skip:]
    if not places:
        return None
    for _ in range(30):
        i = places[int(rng.integers(len(places)))]
        digit = str((int(value[i]) + int(rng.integers(1, 10))) % 10)
        new = value[:i] + digit + value[i + 1 :]
        if accept is None or accept(new):
            return new
    return None


def _postcode_typo(value: str, rng: np.random.Generator) -> str | None:
    places = [i for i, ch in enumerate(value) if ch.isascii() and ch.isalnum()]
    if not places:
        return None
    i = places[int(rng.integers(len(places)))]
    ch = value[i]
    if ch.isdigit():
        new = str((int(ch) + int(rng.integers(1, 10))) % 10)
    else:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".replace(ch.upper(), "")
        new = letters[int(rng.integers(len(letters)))]
        new = new if ch.isupper() else new.lower()
    return value[:i] + new + value[i + 1 :]


# ------------------------------------------------------------------------------------------
# Dates
# ------------------------------------------------------------------------------------------


def _iso_date(value: str, order: str) -> str | None:
    from linkage.normalize import parse_dates

    parsed = parse_dates(pd.Series([value], dtype=object), order=order)
    return parsed["iso"].iloc[0]


def date_styles(iso: str, order: str) -> list[str]:
    """The written forms of an ISO date that the date normalizer reads back: ISO, compact,
    dotted, Korean (`1982년 9월 12일`), and year-last in the rules' day/month order."""
    year, month, day = (int(p) for p in iso.split("-"))
    styles = [iso, f"{year}{month:02d}{day:02d}", f"{year}.{month}.{day}",
              f"{year}년 {month}월 {day}일"]
    if order == "DMY":
        styles.append(f"{day:02d}/{month:02d}/{year}")
    elif order == "MDY":
        styles.append(f"{month:02d}/{day:02d}/{year}")
    return styles


def _date_format(value: str, rng: np.random.Generator, order: str) -> str | None:
    iso = _iso_date(value, order)
    if iso is None:
        return None
    options = [s for s in date_styles(iso, order) if s != value.strip()]
    return options[int(rng.integers(len(options)))] if options else None


def _date_typo(value: str, rng: np.random.Generator, order: str) -> str | None:
    before = _iso_date(value, order)
    if before is None:
        return None

    def still_a_date(new: str) -> bool:
        # A plausible slip: still a calendar date, and not a year no one would write.
        after = _iso_date(new, order)
        return after is not None and after != before and 1900 <= int(after[:4]) <= 2100

    return _digit_typo(value, rng, accept=still_a_date)


# ------------------------------------------------------------------------------------------
# Phones
# ------------------------------------------------------------------------------------------

_KR_PREFIXES = ("010", "011", "016", "017", "018", "019", "070", "031", "032", "033", "041",
                "042", "043", "044", "051", "052", "053", "054", "055", "061", "062", "063", "064")


def _korean_national(value: str) -> str | None:
    """The national digits of a Korean number (`+82 10 1234 5678` → `01012345678`), or None
    for a number that is not Korean."""
    digits = re.sub(r"\D", "", value)
    if value.strip().startswith("+") or digits.startswith("0082"):
        rest = digits[4:] if digits.startswith("0082") else digits
        if not rest.startswith("82"):
            return None
        rest = rest[2:]
        digits = rest if rest.startswith("0") else "0" + rest
    if digits.startswith("02") and len(digits) in (9, 10):
        return digits
    if digits[:3] in _KR_PREFIXES and len(digits) in (10, 11):
        return digits
    return None


def korean_phone_styles(national: str) -> list[str]:
    """`010-1234-5678`, `01012345678`, `010.1234.5678`, `+82 10 1234 5678`, `+82-10-1234-5678`
    and `+821012345678`: the ways one Korean number is written."""
    area = national[:2] if national.startswith("02") else national[:3]
    rest = national[len(area) :]
    mid, last = rest[:-4], rest[-4:]
    return ["-".join((area, mid, last)), national, ".".join((area, mid, last)),
            f"+82 {area[1:]} {mid} {last}", f"+82-{area[1:]}-{mid}-{last}", "+82" + national[1:]]


def _phone_format(value: str, rng: np.random.Generator) -> str | None:
    national = _korean_national(value)
    if national is not None:
        options = korean_phone_styles(national)
    else:  # not Korean: the same digit groups with other separators
        groups = re.findall(r"\d+", value)
        if len(groups) < 2:
            return None
        plus = "+" if value.strip().startswith("+") else ""
        options = [plus + sep.join(groups) for sep in ("-", " ", ".", "")]
    options = [o for o in dict.fromkeys(options) if o != value.strip()]
    return options[int(rng.integers(len(options)))] if options else None


# ------------------------------------------------------------------------------------------
# Companies: the legal form written another way
# ------------------------------------------------------------------------------------------

_KO_FORMS = {"주": "주식회사", "유": "유한회사"}
_KO_AT_START = re.compile(r"^\s*(?:\((주|유)\)|(㈜)|(주식회사|유한회사))\s*(.+?)\s*$")
_KO_AT_END = re.compile(r"^\s*(.+?)\s*(?:\((주|유)\)|(㈜)|(주식회사|유한회사))\s*$")
_EN_FORMS = {
    "inc": ("{b} Inc.", "{b}, Inc.", "{b} Inc", "{b} Incorporated"),
    "ltd": ("{b} Ltd", "{b} Ltd.", "{b} Limited"),
    "llc": ("{b} LLC", "{b}, LLC", "{b} L.L.C."),
    "corp": ("{b} Corp.", "{b} Corp", "{b} Corporation"),
    "co": ("{b} Co.", "{b} Company"),
    "plc": ("{b} PLC", "{b} plc"),
}
_EN_FORM_WORDS = {"inc": "inc", "incorporated": "inc", "ltd": "ltd", "limited": "ltd",
                  "llc": "llc", "l.l.c": "llc", "corp": "corp", "corporation": "corp",
                  "co": "co", "company": "co", "plc": "plc"}
_EN_AT_END = re.compile(r"^(.+?)[\s,]+([A-Za-z.]+?)\.?\s*$")


def _korean_form(value: str) -> tuple[str, str] | None:
    """(base, short form 주/유) of `(주)삼성전자`, `㈜삼성전자`, `삼성전자 주식회사`..."""
    for pattern, base_group in ((_KO_AT_START, 4), (_KO_AT_END, 1)):
        m = pattern.match(value)
        if m:
            groups = m.groups()
            words = [g for g in (groups[1:4] if base_group == 1 else groups[:3]) if g]
            short = {"㈜": "주", "주식회사": "주", "유한회사": "유"}.get(words[0], words[0])
            return m.group(base_group), short
    return None


def _company_format(value: str, rng: np.random.Generator) -> str | None:
    korean = _korean_form(value)
    if korean is not None:
        base, short = korean
        options = [f"({short}){base}", f"{base}({short})", f"{_KO_FORMS[short]} {base}",
                   f"{base} {_KO_FORMS[short]}"]
        if short == "주":
            options.append(f"㈜{base}")
    else:
        m = _EN_AT_END.match(value)
        family = _EN_FORM_WORDS.get(m.group(2).lower().rstrip(".")) if m else None
        if family is None:
            return _case_variant(value, rng)
        options = [f.format(b=m.group(1)) for f in _EN_FORMS[family]]
    options = [o for o in options if o != value.strip()]
    return options[int(rng.integers(len(options)))] if options else None


def _case_variant(value: str, rng: np.random.Generator) -> str | None:
    """UPPER, lower or Title case; None when the value has no cased letters (Hangul)."""
    if not any(ch.isalpha() and ch.lower() != ch.upper() for ch in value):
        return None
    options = [v for v in dict.fromkeys((value.upper(), value.lower(), value.title()))
               if v != value]
    return options[int(rng.integers(len(options)))] if options else None


def _postcode_format(value: str, rng: np.random.Generator) -> str | None:
    """UK-style codes lose their space or their case; a numeric code with a leading zero
    loses it, as a spreadsheet does (`03153` → `3153`)."""
    text = value.strip()
    if re.fullmatch(r"0\d+", text):
        return text.lstrip("0") or None
    if re.search(r"[A-Za-z]", text):
        options = [v for v in dict.fromkeys((text.replace(" ", ""), text.lower())) if v != text]
        return options[int(rng.integers(len(options)))] if options else None
    return None


# ------------------------------------------------------------------------------------------
# Spaces, punctuation, words
# ------------------------------------------------------------------------------------------


def perturb_spaces(value: str, rng: np.random.Generator) -> str | None:
    """Extra or missing white space: a space removed (`John Smith` → `JohnSmith`), doubled,
    or put inside a word (`김민수` → `김 민수`)."""
    inner = [i for i in range(1, len(value) - 1) if value[i] == " " and value[i - 1] != " "
             and value[i + 1] != " "]
    splits = [i for i in range(1, len(value)) if value[i - 1].isalnum() and value[i].isalnum()]
    ops = []
    if inner:
        ops += ["remove", "double"]
    if splits:
        ops.append("split")
    if not ops:
        return None
    op = ops[int(rng.integers(len(ops)))]
    if op == "split":
        i = splits[int(rng.integers(len(splits)))]
        return value[:i] + " " + value[i:]
    i = inner[int(rng.integers(len(inner)))]
    return value[:i] + value[i + 1 :] if op == "remove" else value[:i] + " " + value[i:]


_MARKS = ".,-'/&·_"
_JOINERS = "-/·_"  # between two letters these stand for a space when removed


def perturb_punctuation(value: str, rng: np.random.Generator, *, email: bool = False) -> str | None:
    """A punctuation mark removed (`Apt. 21D` → `Apt 21D`, `Smith-Jones` → `Smith Jones`) or
    added (`John Smith` → `John, Smith`, `정광수` → `정-광수`). In an e-mail address only the
    local part changes (`john.kim@x.com` ↔ `johnkim@x.com`)."""
    if email:
        local, at, domain = value.rpartition("@")
        if not at or not local:
            return None
        changed = _local_part_punctuation(local, rng)
        return None if changed is None else changed + at + domain
    marks = [i for i, ch in enumerate(value) if ch in _MARKS or ch in "()"]
    word_ends = [i for i in range(1, len(value)) if value[i - 1].isalnum() and value[i] == " "]
    middles = [i for i in range(1, len(value)) if value[i - 1].isalnum() and value[i].isalnum()]
    ops = (["remove"] if marks else []) + (["add"] if word_ends or middles else [])
    if not ops:
        return None
    if ops[int(rng.integers(len(ops)))] == "remove":
        i = marks[int(rng.integers(len(marks)))]
        between = 0 < i < len(value) - 1 and value[i - 1].isalnum() and value[i + 1].isalnum()
        gap = " " if value[i] in _JOINERS and between else ""
        return re.sub(r"  +", " ", value[:i] + gap + value[i + 1 :]).strip() or None
    if word_ends:
        i = word_ends[int(rng.integers(len(word_ends)))]
        return value[:i] + ",."[int(rng.integers(2))] + value[i:]
    # One word: a hyphen after the surname syllable of a Hangul name, mid-word otherwise.
    i = middles[0] if has_hangul(value) else middles[len(middles) // 2]
    return value[:i] + "-" + value[i:]


def _local_part_punctuation(local: str, rng: np.random.Generator) -> str | None:
    marks = [i for i, ch in enumerate(local) if ch in "._-"]
    if marks and (len(local) < 3 or rng.random() < 0.5):
        i = marks[int(rng.integers(len(marks)))]
        return (local[:i] + local[i + 1 :]) or None
    middles = [i for i in range(1, len(local)) if local[i - 1].isalnum() and local[i].isalnum()]
    if not middles:
        return None
    i = middles[int(rng.integers(len(middles)))]
    return local[:i] + "._"[int(rng.integers(2))] + local[i:]


# Abbreviations people write for address and company words, both ways.
_ABBREVIATIONS = {
    "street": "St", "avenue": "Ave", "road": "Rd", "drive": "Dr", "boulevard": "Blvd",
    "place": "Pl", "lane": "Ln", "court": "Ct", "apartment": "Apt", "gardens": "Gdns",
    "square": "Sq", "terrace": "Terr", "crescent": "Cres", "north": "N", "south": "S",
    "east": "E", "west": "W", "flat": "Fl", "building": "Bldg", "suite": "Ste",
    "international": "Intl", "services": "Svcs", "company": "Co", "corporation": "Corp",
    "서울특별시": "서울", "부산광역시": "부산", "대구광역시": "대구", "인천광역시": "인천",
    "광주광역시": "광주", "대전광역시": "대전", "울산광역시": "울산", "세종특별자치시": "세종",
    "경기도": "경기", "강원도": "강원", "충청북도": "충북", "충청남도": "충남", "전라북도": "전북",
    "전라남도": "전남", "경상북도": "경북", "경상남도": "경남", "제주특별자치도": "제주",
}
_EXPANSIONS = {short.lower().rstrip("."): long for long, short in _ABBREVIATIONS.items()}


def _abbreviated(word: str, *, first_of_name: bool) -> str | None:
    core = word.rstrip(".,")
    tail = word[len(core) :]
    key = core.lower()
    if key in _ABBREVIATIONS:
        return _ABBREVIATIONS[key] + tail
    if key in _EXPANSIONS:
        long = _EXPANSIONS[key]
        return (long.title() if core[:1].isupper() else long) + tail.lstrip(".")
    if first_of_name and len(core) >= 2 and core.isascii() and core.isalpha():
        return core[0] + "."  # John Smith → J. Smith
    return None


def perturb_word(value: str, rng: np.random.Generator, *, role: str = "text") -> str | None:
    """A word change: two neighbouring words swapped (`John Smith` → `Smith John`), a word
    dropped (not the first), or abbreviated or spelled out (`Street` ↔ `St`, `서울특별시` ↔
    `서울`, a given name to its initial)."""
    words = value.split()
    ops: list[tuple[str, int, str | None]] = []
    for j in range(len(words) - 1):
        if words[j] != words[j + 1]:
            ops.append(("swap", j, None))
    min_words = 3 if role == "name" else 2
    if len(words) >= min_words:
        ops += [("drop", j, None) for j in range(1, len(words))]
    for j, w in enumerate(words):
        short = _abbreviated(w, first_of_name=role == "name" and j == 0 and len(words) >= 2)
        if short is not None and short != w:
            ops.append(("abbreviate", j, short))
    if not ops:
        return None
    op, j, short = ops[int(rng.integers(len(ops)))]
    if op == "swap":
        words[j], words[j + 1] = words[j + 1], words[j]
    elif op == "drop":
        del words[j]
    else:
        words[j] = short
    new = " ".join(words)
    return new if new != value else None


def perturb_typo(value: str, rng: np.random.Generator, *, role: str = "text",
                 date_order: str = "DMY") -> str | None:
    """One character edit: a keyboard typo in a Latin word, a jamo (or syllable) edit in a
    Hangul word, one digit in a date (still a calendar date), a phone (not its prefix) or a
    postcode, a typo in an e-mail's local part."""
    if role == "date":
        return _date_typo(value, rng, date_order)
    if role == "phone":
        return _digit_typo(value, rng, skip=3)
    if role == "postcode":
        return _postcode_typo(value, rng)
    if role == "email":
        local, at, domain = value.rpartition("@")
        if not at:
            return _text_typo(value, rng)
        changed = latin_typo(local, rng) if local.isascii() else hangul_typo(local, rng)
        return None if changed is None else changed + at + domain
    return _text_typo(value, rng)


def perturb_format(value: str, rng: np.random.Generator, *, role: str = "text",
                   date_order: str = "DMY") -> str | None:
    """The same value written another way: a date in another style, a phone with other
    separators or its +82 form, a company's legal form in another spelling, a postcode without
    its space or leading zero, or (text, names, e-mail) another letter case."""
    if role == "date":
        return _date_format(value, rng, date_order)
    if role == "phone":
        return _phone_format(value, rng)
    if role == "company":
        return _company_format(value, rng)
    if role == "postcode":
        return _postcode_format(value, rng)
    return _case_variant(value, rng)


def perturb(kind: str, value: str, role: str, rng: np.random.Generator, *,
            date_order: str = "DMY") -> str | None:
    """`value` with one perturbation of `kind`, or None when that kind cannot apply to it
    (a Hangul name has no letter case; a phone has no words)."""
    if kind == "exact":
        return value
    if role not in _KIND_ROLES[kind]:
        return None
    if kind == "spaces":
        new = perturb_spaces(value, rng)
    elif kind == "punctuation":
        new = perturb_punctuation(value, rng, email=role == "email")
    elif kind == "word":
        new = perturb_word(value, rng, role=role)
    elif kind == "typo":
        new = perturb_typo(value, rng, role=role, date_order=date_order)
    else:
        new = perturb_format(value, rng, role=role, date_order=date_order)
    return new if new is not None and new != value and new.strip() else None


# ------------------------------------------------------------------------------------------
# Choosing sources and making copies
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """An input column the rules compare, with the role its normalizer gives it."""

    column: str
    role: str
    date_order: str = "DMY"


def compared_fields(rules: Rules) -> list[Field]:
    """The input columns behind the rules' comparisons, in the rules' order, each with its role
    (name, date, phone, email, company, postcode, text, other) read from its normalizer."""
    by_target = {step.target: step for step in rules.normalize}
    fields: dict[str, Field] = {}
    for comparison in rules.comparisons:
        step = by_target.get(comparison.column)
        column = step.column if step is not None else comparison.column
        if step is not None:
            role = _ROLE_OF_NORMALIZER.get(step.type, "text")
            order = step.options.get("order", "DMY") if step.type == "date" else "DMY"
        else:
            role = "date" if comparison.kind == "date" else "text"
            order = "DMY"
        fields.setdefault(column, Field(column, role, order))
    return list(fields.values())


def parse_kinds(kinds: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Kinds from `--kinds a,b,c` (or a list), checked; all kinds when None."""
    if kinds is None:
        return list(KINDS)
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    chosen = list(dict.fromkeys(kinds))
    if not chosen:
        raise InputError(f"--kinds names no kind. Choose from {', '.join(KINDS)}.")
    for kind in chosen:
        if kind not in KINDS:
            raise InputError(f"--kinds: {kind!r} is not a kind of perturbation. The kinds are "
                             f"{', '.join(KINDS)}.{did_you_mean(kind, KINDS)}")
    return chosen


@dataclass
class Injection:
    """The copies made from clean records and what was changed in each.

    `copies`: the injected records, with the input's columns. `log`: one row per copy,
    `injected_id`, `source_id`, `kind`, `field`, `before`, `after`.
    """

    copies: pd.DataFrame
    log: pd.DataFrame
    id_name: str  # the id column; `row_id` (row numbers) when the table has none
    clean: int  # clean records that could be sources


def _present(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def clean_positions(frame: pd.DataFrame, ids: pd.Series, baseline: Result,
                    fields: list[Field], id_name: str) -> np.ndarray:
    """Row positions of the records the baseline run leaves alone in a cluster of one, with at
    least one compared field filled (a copy with nothing to compare can never be found).
    `ids`: the record ids in row order (row numbers when the table has no id column)."""
    clusters = baseline.clusters
    single = clusters.loc[clusters["cluster_size"] == 1, id_name]
    alone = ids.isin(set(single.tolist())).to_numpy()
    filled = np.zeros(len(frame), dtype=bool)
    for f in fields:
        filled |= frame[f.column].map(_present).to_numpy(dtype=bool)
    return np.flatnonzero(alone & filled)


def _new_ids(ids: pd.Series, count: int, row_numbers: bool) -> list[Any]:
    """Ids for the copies that no existing id can equal: the next row numbers, the next whole
    numbers for a numeric id column, or `inj-000001`... with a prefix no id starts with."""
    if row_numbers:
        return list(range(len(ids), len(ids) + count))
    if pd.api.types.is_integer_dtype(ids.dtype):
        start = int(ids.max()) + 1
        return list(range(start, start + count))
    if not (pd.api.types.is_object_dtype(ids.dtype) or pd.api.types.is_string_dtype(ids.dtype)):
        raise InputError(f"id column `{ids.name}` holds {ids.dtype} values; recall by injection "
                         "needs text or whole-number ids. Pass --id-column with such a column.")
    existing = set(ids.astype(str))
    width = max(6, len(str(count)))
    prefix = "inj-"
    while any(i.startswith(prefix) for i in existing):
        prefix = "_" + prefix
    return [f"{prefix}{k:0{width}d}" for k in range(1, count + 1)]


def _make_copy(row: pd.Series, kind: str, position: int, fields: list[Field], seed: int,
               per_copy: int = 1) -> list[tuple[str, str, str]] | None:
    """[(field, before, after)] of a perturbation of `kind` on up to `per_copy` compared fields
    of this record, or None when none of them can take it. Seeded by record and kind, so a
    record's copy does not depend on which other records were drawn."""
    rng = np.random.default_rng([seed, position, KINDS.index(kind)])
    if kind == "exact":
        return []
    options = []
    for f in fields:
        value = row[f.column]
        if not _present(value):
            continue
        after = perturb(kind, value, f.role, rng, date_order=f.date_order)
        if after is not None:
            options.append((f.column, value, after))
    if not options:
        return None
    picked = np.sort(rng.permutation(len(options))[:per_copy])
    return [options[i] for i in picked]


def exact_stage_fields(rules: Rules, frame: pd.DataFrame, id_name: str,
                       fields: list[Field]) -> list[Field]:
    """The columns the exact stage hashes, as fields (a compared column keeps its role; any
    other is text); none without an exact stage."""
    if rules.exact is None:
        return []
    roles = {f.column: f for f in fields}
    columns = rules.exact.columns or [c for c in frame.columns if c != id_name]
    return [roles.get(c, Field(c, "text")) for c in columns]


def _past_the_exact_stage(row: pd.Series, kind: str, position: int, seed: int,
                          changes: list[tuple[str, str, str]], stage: list[Field]
                          ) -> list[tuple[str, str, str]] | None:
    """`changes`, with one more in a column the exact stage hashes when none of them is there
    (a copy equal to its source where that stage looks would be found by it for free): of the
    same kind, else a typo, which any value can take. None when no such column can."""
    if not stage or any(c in {f.column for f in stage} for c, _, _ in changes):
        return changes
    for extra in dict.fromkeys((kind, "typo")):
        more = _make_copy(row, extra, position, stage, seed + 1)
        if more is not None:
            return changes + more
    return None


def _another_page(url: Any, new_id: Any) -> Any:
    """Another page of the same site as `url` (its path extended by the copy's id, without
    query or fragment), so a `url:` stage does not find the copy for free; a missing URL stays
    missing."""
    if not _present(url):
        return url
    page = re.split(r"[?#]", url.strip(), maxsplit=1)[0].rstrip("/")
    return f"{page}/{new_id}"


def _joined(changes: list[tuple[str, str, str]], part: int) -> str:
    """One log cell for the changed fields: their names, old or new values, joined by " | "."""
    return " | ".join(change[part] for change in changes)


def inject(frame: pd.DataFrame, rules: Rules, n: int, *, baseline: Result,
           kinds: list[str] | None = None, seed: int = 0, id_column: str | None = None,
           fields_per_copy: int = 1) -> Injection:
    """Copy `n` clean records of `frame`, each with one kind of perturbation applied to
    `fields_per_copy` compared fields (fewer where the record has fewer that can take it), the
    kinds taking turns.

    `baseline` is the run of `rules` on `frame` alone; it says which records are clean.
    Sources are drawn in a seeded random order; a record that cannot take its turn's kind (a
    Hangul name has no case to change) is left for another kind.
    """
    kinds = parse_kinds(kinds)
    if not isinstance(n, int) or n < 1:
        raise InputError(f"--inject must be a whole number of copies, at least 1. Got {n!r}.")
    if not isinstance(fields_per_copy, int) or fields_per_copy < 1:
        raise InputError("--fields must be a whole number of fields to change per copy, at "
                         f"least 1. Got {fields_per_copy!r}.")
    from linkage.pipeline import ROW_ID

    fields = compared_fields(rules)
    id_name = id_column or rules.id_column or ROW_ID
    row_numbers = (id_column or rules.id_column) is None
    ids = pd.Series(np.arange(len(frame)), name=id_name) if row_numbers else frame[id_name]
    clean = clean_positions(frame, ids, baseline, fields, id_name)
    exact_fields = exact_stage_fields(rules, frame, id_name, fields)
    if rules.url is not None and rules.url.column in {f.column for f in exact_fields}:
        exact_fields = []  # every copy's new URL takes it past the exact stage already
    source_name = frame.attrs.get("linkage_source", "the input")
    if n > len(clean):
        raise InputError(
            f"--inject {n} is more than the {len(clean)} clean records of {source_name} (records "
            "the rules leave alone in a cluster of one, with a compared field filled). Inject at "
            f"most {len(clean)}: --inject {len(clean)}.")
    order = np.random.default_rng(seed).permutation(clean)
    quota = {k: n // len(kinds) + (i < n % len(kinds)) for i, k in enumerate(kinds)}
    pointer = dict.fromkeys(kinds, 0)
    used: set[int] = set()
    chosen: list[tuple[int, str, list[tuple[str, str, str]]]] = []
    while len(chosen) < n:
        for kind in kinds:
            if quota[kind] == 0:
                continue
            while pointer[kind] < len(order):
                position = int(order[pointer[kind]])
                pointer[kind] += 1
                if position in used:
                    continue
                row = frame.iloc[position]
                change = _make_copy(row, kind, position, fields, seed, fields_per_copy)
                if change is not None and kind != "exact":  # the control stays exact
                    change = _past_the_exact_stage(row, kind, position, seed, change,
                                                   exact_fields)
                if change is not None:
                    used.add(position)
                    chosen.append((position, kind, change))
                    quota[kind] -= 1
                    break
            else:
                roles = _KIND_ROLES[kind]
                usable = [f.column for f in fields if f.role in roles]
                raise InputError(
                    f"too few clean records of {source_name} can take a `{kind}` perturbation "
                    f"({len(chosen)} copies made of {n}): it changes {', '.join(sorted(roles))} "
                    "fields, and the rules compare "
                    f"{', '.join(f'`{c}`' for c in usable) or 'none of those'}. Inject fewer "
                    "copies (--inject), or leave the kind out "
                    f"(--kinds {','.join(k for k in kinds if k != kind)}).")
    chosen.sort(key=lambda c: (KINDS.index(c[1]), c[0]))
    positions = [c[0] for c in chosen]
    new_ids = _new_ids(ids, n, row_numbers)
    copies = frame.iloc[positions].copy().reset_index(drop=True)
    for k, (_, kind, changes) in enumerate(chosen):
        for column, _, after in changes:
            copies.at[k, column] = after
        if rules.url is not None and kind != "exact":
            copies.at[k, rules.url.column] = _another_page(copies.at[k, rules.url.column],
                                                           new_ids[k])
    if not row_numbers:
        copies[id_name] = pd.Series(new_ids, dtype=frame[id_name].dtype)
    log = pd.DataFrame({
        "injected_id": new_ids,
        "source_id": [ids.iloc[p] for p in positions],
        "kind": [c[1] for c in chosen],
        "field": [_joined(c[2], 0) for c in chosen],
        "before": [_joined(c[2], 1) for c in chosen],
        "after": [_joined(c[2], 2) for c in chosen],
    })
    return Injection(copies=copies, log=log, id_name=id_name, clean=len(clean))


# ------------------------------------------------------------------------------------------
# Measuring
# ------------------------------------------------------------------------------------------


def _recall_row(name: str, found: np.ndarray, false_merge: np.ndarray,
                compared: np.ndarray) -> dict[str, Any]:
    from linkage.calibrate import wilson

    injected, hits = len(found), int(found.sum())
    low, high = wilson(hits, injected)
    return {"kind": name, "injected": injected, "found": hits, "missed": injected - hits,
            "recall": hits / injected if injected else math.nan, "ci_low": low, "ci_high": high,
            "false_merges": int(false_merge.sum()), "never_compared": int((~compared).sum())}


def outcomes(log: pd.DataFrame, result: Result, id_name: str) -> pd.DataFrame:
    """Per copy: its cluster, its source's cluster, whether it was found (same cluster), a
    false merge (in a cluster without its source), and the copy-source pair's match weight
    (empty when no blocker proposed the pair: a blocking miss)."""
    clusters = result.clusters
    key = clusters[id_name].astype(str)
    cluster_of = pd.Series(clusters["cluster_id"].to_numpy(), index=key)
    size_of = pd.Series(clusters["cluster_size"].to_numpy(), index=key)
    copy_key, source_key = log["injected_id"].astype(str), log["source_id"].astype(str)
    out = log.copy()
    out["cluster_id"] = copy_key.map(cluster_of).to_numpy()
    out["source_cluster_id"] = source_key.map(cluster_of).to_numpy()
    out["cluster_size"] = copy_key.map(size_of).to_numpy()
    out["found"] = (out["cluster_id"] == out["source_cluster_id"]).to_numpy()
    out["false_merge"] = (~out["found"] & (out["cluster_size"] > 1)).to_numpy()
    pairs = result.pairs
    left, right = pairs["id_l"].astype(str).to_numpy(), pairs["id_r"].astype(str).to_numpy()
    weights = pd.concat([
        pd.Series(pairs["match_weight"].to_numpy(), index=pd.MultiIndex.from_arrays([left, right])),
        pd.Series(pairs["match_weight"].to_numpy(), index=pd.MultiIndex.from_arrays([right, left])),
    ])
    weights = weights[~weights.index.duplicated()]
    wanted = pd.MultiIndex.from_arrays([copy_key.to_numpy(), source_key.to_numpy()])
    out["match_weight"] = weights.reindex(wanted).to_numpy(dtype=float)
    out["compared"] = ~np.isnan(out["match_weight"].to_numpy())
    return out


@dataclass
class RecallReport:
    """What `measure_recall` found: per kind and overall, the copies found and recall with its
    95% Wilson interval; per copy, what happened to it; and the run itself."""

    by_kind: pd.DataFrame
    by_field: pd.DataFrame
    outcomes: pd.DataFrame
    injection: Injection
    result: Result
    records: int
    seed: int
    fields_per_copy: int = 1
    source: str = ""
    input_suffix: str = ".csv"
    kinds: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
                    for r in frame.to_dict(orient="records")]

        table = rows(self.by_kind)
        return {"input": self.source, "records": self.records,
                "clean_records": self.injection.clean, "injected": len(self.outcomes),
                "seed": self.seed, "fields_per_copy": self.fields_per_copy,
                "kinds": table[:-1], "overall": table[-1],
                "by_field": rows(self.by_field)}

    def format(self) -> str:
        """The table a person reads in a terminal."""
        lines = [
            f"recall by injection: {len(self.outcomes):,} copies of clean records "
            f"({self.injection.clean:,} clean of {self.records:,}), {self.fields_per_copy} "
            f"field(s) changed per copy, seed {self.seed}",
            f"  {'kind':<12} {'injected':>8} {'found':>6} {'recall':>7}  {'95% CI':<13} "
            f"{'false merges':>12} {'never compared':>14}",
        ]
        for _, r in self.by_kind.iterrows():
            if r["kind"] == "overall":
                lines.append("  " + "-" * 78)
            lines.append(
                f"  {r['kind']:<12} {r['injected']:>8,} {r['found']:>6,} {r['recall']:>7.3f}  "
                f"{r['ci_low']:.3f}-{r['ci_high']:.3f}   {r['false_merges']:>12,} "
                f"{r['never_compared']:>14,}")
        return "\n".join(lines)

    def write(self, out: str | Path) -> Path:
        """Write, atomically, into `out`: `injected.csv` (or `.parquet`, like the input) with
        the copies, `outcomes.csv` (one row per copy: what changed, found or not, the pair's
        weight), `recall.json`, and `run/`, the run on the input with the copies, for
        `linkage explain out/run INJECTED_ID SOURCE_ID`."""
        from linkage.io import write_atomically, write_json, write_parquet

        def fill(folder: Path) -> None:
            if self.input_suffix in (".parquet", ".pq"):
                write_parquet(self.injection.copies, folder / "injected.parquet")
            else:
                self.injection.copies.to_csv(folder / "injected.csv", index=False)
            self.outcomes.to_csv(folder / "outcomes.csv", index=False)
            write_json(self.as_dict(), folder / "recall.json")
            self.result.write(folder / "run")

        return write_atomically(out, fill, what="recall")


def measure_recall(table: Any, rules: Rules | str | Path | dict, n: int = 500, *,
                   kinds: str | list[str] | None = None, seed: int = 0,
                   id_column: str | None = None, fields_per_copy: int = 1,
                   sep: str | None = None, encoding: str = "utf-8") -> RecallReport:
    """Recall by injection: run `rules` on `table`, copy `n` of the records it leaves alone
    with one perturbation each, run again with the copies, and count per kind the copies found
    in their source's cluster.

    `table`: a CSV/Parquet path or a DataFrame. `kinds`: a subset of `KINDS` (all by default),
    taking turns so each gets about n / len(kinds) copies. `fields_per_copy`: how many compared
    fields each copy has changed (one by default; more makes a harder test).
    """
    from linkage.api import _rules, dedupe
    from linkage.io import read
    from linkage.pipeline import Table, validate_tables

    kinds = parse_kinds(kinds)
    rules = _rules(rules)
    frame = read(table, sep=sep, encoding=encoding)
    source = frame.attrs.get("linkage_source", "DataFrame")
    # Checked here, under the file's name: the runs below see DataFrames.
    validate_tables([Table(frame, str(source), "", 0.0)], rules, id_column or rules.id_column)
    baseline = dedupe(frame, rules, id_column=id_column, progress=False)
    injection = inject(frame, rules, n, baseline=baseline, kinds=kinds, seed=seed,
                       id_column=id_column, fields_per_copy=fields_per_copy)
    combined = pd.concat([frame, injection.copies], ignore_index=True)
    result = dedupe(combined, rules, id_column=id_column, progress=False)
    per_copy = outcomes(injection.log, result, injection.id_name)
    rows = []
    for kind in kinds:
        part = per_copy[per_copy["kind"] == kind]
        rows.append(_recall_row(kind, part["found"].to_numpy(), part["false_merge"].to_numpy(),
                                part["compared"].to_numpy()))
    rows.append(_recall_row("overall", per_copy["found"].to_numpy(),
                            per_copy["false_merge"].to_numpy(), per_copy["compared"].to_numpy()))
    by_field = []
    for (kind, column), part in per_copy.groupby(["kind", "field"], sort=False):
        row = _recall_row(kind, part["found"].to_numpy(), part["false_merge"].to_numpy(),
                          part["compared"].to_numpy())
        by_field.append({"kind": kind, "field": column or "(none)", **{
            k: row[k] for k in ("injected", "found", "recall", "false_merges")}})
    suffix = "" if isinstance(table, pd.DataFrame) else Path(table).suffix.lower()
    return RecallReport(by_kind=pd.DataFrame(rows), by_field=pd.DataFrame(by_field),
                        outcomes=per_copy, injection=injection, result=result,
                        records=len(frame), seed=seed, fields_per_copy=fields_per_copy,
                        source=str(source),
                        input_suffix=suffix or ".csv", kinds=kinds)
