"""Hangul helpers: jamo decomposition for edit distances and 초성 (initial consonant) keys.

A precomposed syllable (가-힣) is ((initial * 21) + medial) * 28 + final + 0xAC00. Decomposing to
jamo lets an edit distance see that 김민수 and 김민슈 differ by one vowel, not by a whole syllable.
"""

from __future__ import annotations

import re
import unicodedata

_SYLLABLE_FIRST = 0xAC00
_SYLLABLE_LAST = 0xD7A3
_CHOSUNG = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_HANGUL_RE = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")


def has_hangul(text: str) -> bool:
    """True when `text` holds at least one Hangul syllable or jamo."""
    return bool(_HANGUL_RE.search(text))


def to_jamo(text: str) -> str:
    """Decompose Hangul syllables into conjoining jamo (NFD); other characters are unchanged."""
    return unicodedata.normalize("NFD", text)


def chosung(text: str) -> str:
    """The initial consonants of the Hangul syllables in `text` (김민수 → ㄱㅁㅅ).

    Characters that are not Hangul syllables are kept as they are (lower-cased), except white
    space, which is dropped, so that mixed keys such as "LG전자" → "lgㅈㅈ" still block together.
    """
    out = []
    for ch in text:
        code = ord(ch)
        if _SYLLABLE_FIRST <= code <= _SYLLABLE_LAST:
            out.append(_CHOSUNG[(code - _SYLLABLE_FIRST) // 588])
        elif not ch.isspace():
            out.append(ch.lower())
    return "".join(out)
