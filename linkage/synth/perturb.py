"""The one perturbation module: the ways a value gets misspelt or written another way, shared by
the generators (`linkage.synth`) and by recall injection (`linkage.measure.recall`).

- typos: a keyboard slip in a Latin word (`latin_typo`), a jamo changed in Hangul (`hangul_typo`,
  `ko_name_typo`), one digit in a date, phone or postcode (`perturb_typo`);
- formats: dates (`render_date`, `date_styles`) and phones (`render_phone`,
  `korean_phone_styles`) in the styles people write them, company legal forms, letter case,
  postcodes (`perturb_format`);
- spaces, punctuation, words swapped, dropped or abbreviated, nicknames (`NICKNAMES`);
- texts: white space, end punctuation, case or a word changed (`safe_text_variant`,
  `near_text_variant`);
- `perturb(kind, value, role, rng)`: one of recall injection's `KINDS` on one value.

Every function draws from the seeded `numpy.random.Generator` it is given, in a fixed order, so
one seed gives one value. The committed samples and benchmark figures depend on that order, so
where the generators drew differently from injection before the two shared this module, each
keeps its draw and the difference is named: the generators' name typos use narrower jamo
tables (`NAME_INITIAL`...) than `hangul_typo`, and retry a Latin typo 12 times, not 20, before
doubling the last letter (`en_name_typo`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.normalize.hangul import has_hangul
from linkage.synth._draw import pick

# Recall injection's kinds of perturbation, in the order its report lists them.
KINDS = ("exact", "spaces", "punctuation", "word", "typo", "format")

# What each kind may touch, by the role a field plays in the rules (its normalizer's type).
# A space inside a phone or a date is a format variant, so `spaces` keeps to free text.
KIND_ROLES = {
    "spaces": {"name", "company", "text"},
    "punctuation": {"name", "company", "text", "email"},
    "word": {"name", "company", "text"},
    "typo": {"name", "company", "text", "email", "date", "phone", "postcode", "other"},
    "format": {"name", "company", "text", "email", "date", "phone", "postcode", "other"},
}


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

def latin_typo(word: str, rng: np.random.Generator, *, tries: int = 20) -> str | None:
    """One swapped, dropped, doubled or mistyped (keyboard neighbour) letter, never the first
    letter. None when `word` is too short to change that way. The result always differs from
    `word` ignoring case, so a normalizer that lower-cases cannot undo it. Each of
    `tries` draws an edit and a place; None when none of them took."""
    n = len(word)
    if n < 2:
        return None
    for _ in range(tries):
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

def en_name_typo(rng: np.random.Generator, word: str) -> str:
    """The generators' typo in an English name: `latin_typo` tried 12 times, else the last
    letter doubled (names have two letters or more)."""
    return latin_typo(word, rng, tries=12) or word + word[-1]


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


# The generators' name typos (`ko_name_typo`) draw from these narrower tables, the ones
# customers.csv was made with (ㅚ goes to ㅔ here, to ㅙ above): unifying them would change it.
NAME_INITIAL = {0: 15, 15: 0, 3: 16, 16: 3, 7: 17, 17: 7, 12: 14, 14: 12, 9: 10, 10: 9, 1: 0}
NAME_MEDIAL = {0: 2, 2: 0, 1: 5, 5: 1, 4: 6, 6: 4, 8: 12, 12: 8, 13: 17, 17: 13, 18: 13,
               20: 19, 19: 20, 11: 5, 7: 3, 3: 7}
NAME_FINAL = {4: 21, 21: 4, 16: 4, 8: 0, 1: 0}


def _jamo_swap(ch: str, rng: np.random.Generator, initial: dict[int, int],
               medial: dict[int, int], final: dict[int, int]) -> str | None:
    """The syllable `ch` with one jamo changed by the tables (a vowel, an initial or a final,
    drawn among those the tables change); None when they change none."""
    ini, med, fin = _syllable_parts(ch)
    options = []
    if med in medial:
        options.append((ini, medial[med], fin))
    if ini in initial:
        options.append((initial[ini], med, fin))
    if fin in final:
        options.append((ini, med, final[fin]))
    if not options:
        return None
    return _syllable(*options[int(rng.integers(len(options)))])


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
    # Every vowel is in _MEDIAL, so a syllable always changes.
    return value[:i] + _jamo_swap(value[i], rng, _INITIAL, _MEDIAL, _FINAL) + value[i + 1 :]


def ko_name_typo(rng: np.random.Generator, name: str, surname_len: int) -> str:
    """The generators' typo in a Korean name: one jamo of one syllable changed (민수 → 민슈,
    김 → 킴), mostly in the given name, by the narrower `NAME_*` tables; `name` itself when
    eight draws found no syllable those tables change."""
    syllables = [i for i, ch in enumerate(name) if _is_syllable(ch)]
    given = [i for i in syllables if i >= surname_len]
    pool = given if given and rng.random() < 0.85 else syllables
    for _ in range(8):
        i = pool[int(rng.integers(len(pool)))]
        new = _jamo_swap(name[i], rng, NAME_INITIAL, NAME_MEDIAL, NAME_FINAL)
        if new is not None:
            return name[:i] + new + name[i + 1 :]
    return name


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


def render_date(d: dt.date, style: str) -> str:
    """`d` written in `style`: `iso` (1982-09-12), `compact` (19820912), `dots` (1982.9.12),
    `korean` (1982년 9월 12일), `dmy` (12/09/1982) or `mdy` (09/12/1982)."""
    if style == "iso":
        return d.isoformat()
    if style == "compact":
        return f"{d.year}{d.month:02d}{d.day:02d}"
    if style == "dots":
        return f"{d.year}.{d.month}.{d.day}"
    if style == "korean":
        return f"{d.year}년 {d.month}월 {d.day}일"
    if style == "dmy":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if style == "mdy":
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    raise ParameterError(f"unknown date style {style!r}")


def _iso_date(value: str, order: str) -> str | None:
    from linkage.normalize import parse_dates

    parsed = parse_dates(pd.Series([value], dtype=object), order=order)
    return parsed["iso"].iloc[0]


def date_styles(iso: str, order: str) -> list[str]:
    """The written forms of an ISO date that the date normalizer reads back: ISO, compact,
    dotted, Korean (`1982년 9월 12일`), and year-last in the rules' day/month order."""
    date = dt.date(*(int(p) for p in iso.split("-")))
    styles = ["iso", "compact", "dots", "korean"]
    styles += {"DMY": ["dmy"], "MDY": ["mdy"]}.get(order, [])
    return [render_date(date, style) for style in styles]


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

# A phone is (country calling code, national digit groups with the trunk 0 where there is one).
Phone = tuple[str, tuple[str, ...]]

PHONE_STYLES = {
    "82": ["dash", "plain", "intl", "dot", "intl_dash"],
    "44": ["space", "plain", "intl", "intl_plain"],
    "1": ["paren", "intl", "dash", "plain", "dot", "intl_plain"],
}


def render_phone(phone: Phone, style: str) -> str:
    """`phone` written in `style` (one of `PHONE_STYLES` for its country): `dash`
    (010-1234-5678), `plain`, `dot`, `space`, `intl` (+82 10 1234 5678), `intl_dash`,
    `intl_plain` (+821012345678) or `paren` ((415) 555-1234)."""
    cc, groups = phone
    intl = [groups[0][1:] if groups[0].startswith("0") else groups[0], *groups[1:]]
    if style == "dash":
        return "-".join(groups)
    if style == "plain":
        return "".join(groups)
    if style == "dot":
        return ".".join(groups)
    if style == "space":
        return " ".join(groups)
    if style == "intl":
        if cc == "1":
            return f"+1 {'-'.join(groups)}"
        return f"+{cc} {' '.join(intl)}"
    if style == "intl_dash":
        return f"+{cc}-{'-'.join(intl)}"
    if style == "intl_plain":
        return f"+{cc}{''.join(intl)}"
    if style == "paren":
        return f"({groups[0]}) {groups[1]}-{groups[2]}"
    raise ParameterError(f"unknown phone style {style!r}")


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
    phone: Phone = ("82", (area, rest[:-4], rest[-4:]))
    styles = ("dash", "plain", "dot", "intl", "intl_dash", "intl_plain")
    return [render_phone(phone, style) for style in styles]


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


# Nicknames of English given names, for a duplicate that uses one (Robert → Bob).
NICKNAMES = {
    "Robert": ["Bob", "Rob", "Bobby"],
    "William": ["Bill", "Will", "Billy"],
    "Elizabeth": ["Liz", "Beth", "Betty"],
    "Katherine": ["Kate", "Katie"],
    "Catherine": ["Cathy", "Kate"],
    "Michael": ["Mike", "Mick"],
    "James": ["Jim", "Jimmy", "Jamie"],
    "Richard": ["Rick", "Dick", "Rich"],
    "Thomas": ["Tom", "Tommy"],
    "Christopher": ["Chris"],
    "Daniel": ["Dan", "Danny"],
    "Matthew": ["Matt"],
    "Anthony": ["Tony"],
    "Joseph": ["Joe", "Joey"],
    "Jennifer": ["Jen", "Jenny"],
    "Margaret": ["Maggie", "Peggy", "Meg"],
    "Patricia": ["Pat", "Trish"],
    "Susan": ["Sue", "Suzy"],
    "Alexander": ["Alex", "Sandy"],
    "Benjamin": ["Ben"],
    "Jonathan": ["Jon"],
    "Samuel": ["Sam"],
    "Nicholas": ["Nick"],
    "Edward": ["Ed", "Ted", "Eddie"],
    "Andrew": ["Andy", "Drew"],
    "Steven": ["Steve"],
    "Stephen": ["Steve"],
    "Timothy": ["Tim"],
    "Rebecca": ["Becky"],
    "Victoria": ["Vicky", "Tori"],
    "Jessica": ["Jess"],
    "Deborah": ["Debbie", "Deb"],
    "Charles": ["Charlie", "Chuck"],
    "Peter": ["Pete"],
    "David": ["Dave"],
    "Joshua": ["Josh"],
    "Zachary": ["Zach"],
    "Gregory": ["Greg"],
    "Kenneth": ["Ken", "Kenny"],
    "Donald": ["Don"],
    "Ronald": ["Ron", "Ronnie"],
    "Lawrence": ["Larry"],
    "Frederick": ["Fred", "Freddie"],
    "Harold": ["Harry"],
    "Henry": ["Harry", "Hank"],
    "Abigail": ["Abby"],
    "Amanda": ["Mandy"],
    "Samantha": ["Sam"],
    "Christina": ["Tina"],
    "Jacqueline": ["Jackie"],
    "Kimberly": ["Kim"],
    "Pamela": ["Pam"],
    "Barbara": ["Barb"],
    "Judith": ["Judy"],
    "Theresa": ["Terri"],
    "Cynthia": ["Cindy"],
    "Philip": ["Phil"],
    "Gerald": ["Gerry"],
    "Raymond": ["Ray"],
    "Eleanor": ["Ellie"],
    "Florence": ["Flo"],
}


# ------------------------------------------------------------------------------------------
# One kind on one value: what recall injection applies
# ------------------------------------------------------------------------------------------


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
    if role not in KIND_ROLES[kind]:
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
# Texts: the near-duplicates of a labelled text set
# ------------------------------------------------------------------------------------------

# Word swaps for near-duplicates ("a word changed").
WORD_SWAPS = [
    ("정말", "진짜"),
    ("진짜", "정말"),
    ("너무", "엄청"),
    ("마음에 들어요", "맘에 들어요"),
    ("좋아요", "좋네요"),
    ("별로예요", "별로네요"),
    ("최악이에요", "최악입니다"),
    ("보통이에요", "보통입니다"),
    ("배송", "택배"),
    ("부탁드립니다", "부탁드려요"),
    ("주문번호", "주문 번호"),
    ("really", "very"),
    ("great", "excellent"),
    ("terrible", "awful"),
    ("okay", "ok"),
    ("The ", "This "),
    ("delivery", "shipping"),
    ("price", "cost"),
    ("Order", "Order no."),
]
_PUNCT_END = re.compile(r"[.!?~]+$")


def safe_text_variant(rng: np.random.Generator, text: str) -> str:
    """`text` with white space, end punctuation or case changed: `normalize_text` undoes it."""
    for _ in range(20):
        op = rng.integers(3)
        if op == 0:
            words = text.split(" ")
            k = int(rng.integers(len(words)))
            words[k] += " "  # a doubled space, or a trailing one after the last word
            variant = " ".join(words)
        elif op == 1:
            variant = _PUNCT_END.sub("", text) + pick(rng, [".", "!", "!!", "...", ""])
        else:
            variant = text.lower() if rng.random() < 0.7 else text.upper()
        if variant != text:
            return variant
    return text + " "


def near_text_variant(rng: np.random.Generator, text: str) -> str:
    """`text` with a white space, punctuation or case change, a spacing slip, or a word swapped."""
    if rng.random() < 0.6:
        return safe_text_variant(rng, text)
    swaps = [(a, b) for a, b in WORD_SWAPS if a in text]
    if swaps and rng.random() < 0.8:
        a, b = swaps[int(rng.integers(len(swaps)))]
        return text.replace(a, b, 1)
    words = text.split(" ")
    if len(words) > 2:  # a spacing slip: two words run together
        k = int(rng.integers(len(words) - 1))
        return " ".join([*words[:k], words[k] + words[k + 1], *words[k + 2 :]])
    return ("정말 " if re.search("[가-힣]", text) else "Honestly, ") + text
