"""Lists of person names ("a. blum, m. furst, and r. j. lipton"): authors, inventors, cast.

One list is written many ways: given names in full or as initials, surname first or last
("blum, a., furst, m."), separated by commas, semicolons, "and" or "&", some names left out.
What stays the same is each person's surname and the first letter of the given name, in any
order. `name_list` compares the two lists' sets of those, weighing a rare surname above a
common one (IDF over the whole column, as `token_cosine` weighs words), so a list written two
ways agrees where a word or edit comparison of the whole strings does not.
"""

from __future__ import annotations

import re
import unicodedata

from linkage.comparators._tokens import TokenCosine

# Between two names: a semicolon, a comma, "&", "/", "and", "und", "et"
_SEPARATOR = re.compile(r"\s*(?:[;,&/]|\band\b|\bund\b|\bet\b)\s*", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+")
# a hyphen or apostrophe inside a word ("cesa-bianchi", "o'neil", a word broken at a line)
_INSIDE = re.compile(r"(?<=[^\W\d_])['’‐-](?=[^\W\d_])")
# words in a name list that are no part of a name: suffixes, "et al.", editors
_NOT_NAMES = frozenset({"jr", "sr", "ii", "iii", "iv", "al", "eds", "ed", "editor", "editors"})


def _segments(text: str) -> list[list[str]]:
    """The names of a list, each as its words (case-folded), initials as one-letter words."""
    text = _INSIDE.sub("", unicodedata.normalize("NFKC", text))
    # Initials run together in capitals ("Lipton RJ") are letters, where the text is not all
    # capitals (there "NG" may be a surname)
    mixed = text != text.upper()
    out = []
    for part in _SEPARATOR.split(text.casefold() if not mixed else text):
        words = []
        for word in _WORD.findall(part):
            if mixed and len(word) <= 3 and word.isupper():
                words.extend(word.casefold())
            elif word.casefold() not in _NOT_NAMES:
                words.append(word.casefold())
        if words:
            out.append(words)
    return out


def names_of(text: str) -> list[tuple[str, str]]:
    """The (surname, first initial) of each person in a list of names; the initial is "" where
    the list gives a surname alone. Surname-first names with their initials after a comma
    ("blum, a. l.") and surname-last names ("avrim l. blum", "a. blum") are both read."""
    segments = _segments(text)
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(segments):
        words = segments[i]
        after = segments[i + 1] if i + 1 < len(segments) else None
        if len(words) == 1 and len(words[0]) > 1 and after and all(len(w) == 1 for w in after):
            out.append((words[0], after[0]))  # "blum, a." : surname, then initials
            i += 2
            continue
        full = [w for w in words if len(w) > 1]
        if not full:
            pass  # initials with no surname left to pair with
        elif len(words) == 1:
            out.append((words[0], ""))
        elif len(words[0]) > 1 and all(len(w) == 1 for w in words[1:]):
            out.append((words[0], words[1]))  # "blum a l": surname, then initials
        else:
            out.append((full[-1], words[0][0]))  # "a. blum", "avrim l. blum"
        i += 1
    return out


def name_tokens(text: str) -> list[str]:
    """The tokens `name_list` weighs: each surname, and each surname with its first initial
    (two names with one surname and different initials agree on half of their tokens)."""
    out = []
    for surname, initial in names_of(text):
        out.append(surname)
        if initial:
            out.append(f"{surname} {initial}")
    return out


class NameList(TokenCosine):
    """Cosine of two lists of person names over their surnames and surname-initial pairs, each
    weighed by its inverse frequency in the column: order, separators, full given names against
    initials and surname-first against surname-last do not matter. Levels: else, one per
    threshold (lowest first), exact (identical text).

    YAML: `{type: name_list, column: authors, thresholds: [0.9, 0.7, 0.5]}`
    """

    kind = "name_list"
    tokens = staticmethod(name_tokens)


__all__ = ["NameList", "name_tokens", "names_of"]
