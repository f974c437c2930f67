"""Company names: legal-form words (주식회사, (주), Inc., Ltd., GmbH...) removed or made uniform."""

from __future__ import annotations

import re
import unicodedata

import pandas as pd

from ._text import check_choice, check_series, map_unique, text_core

_LEGAL_FORM_MODES = ("remove", "suffix")

# Korean abbreviations written in brackets: (주) 주식회사, (유) 유한회사, (재) 재단법인,
# (사) 사단법인. NFKC has already turned ㈜ into "(주)". "주)" without "(" is a common typo.
_KOREAN_ABBREVIATIONS = {"주": "주식회사", "유": "유한회사", "재": "재단법인", "사": "사단법인"}
_ABBREVIATION_AT_START = re.compile(r"^\s*\(?\s*([주유재사])\s*\)")
_ABBREVIATION_AT_END = re.compile(r"\(\s*([주유재사])\s*\)\s*$")

# Korean forms: long enough to be found even when written without a space ("주식회사삼성전자"),
# and used at either end of a name. Longest first so "유한책임회사" is not read as a shorter form.
_KOREAN_FORMS = ("유한책임회사", "주식회사", "유한회사", "재단법인", "사단법인")

# English forms, as token sequences after text normalization (punctuation is gone by then:
# "L.L.C." is "l l c"), and their canonical spelling. Only found at the end of a name, where
# English puts them; at the start they would eat real words ("AG Barr", "Co-op Bank").
_ENGLISH_FORMS: dict[tuple[str, ...], str] = {
    ("inc",): "inc",
    ("incorporated",): "inc",
    ("corp",): "corp",
    ("corporation",): "corp",
    ("ltd",): "ltd",
    ("limited",): "ltd",
    ("co",): "co",
    ("company",): "co",
    ("llc",): "llc",
    ("l", "l", "c"): "llc",
    ("plc",): "plc",
    ("gmbh",): "gmbh",
    ("ag",): "ag",
    ("sa",): "sa",
    ("s", "a"): "sa",
}
# Longest first, so "l l c" is taken whole rather than as a lone "c".
_ENGLISH_BY_LENGTH = sorted(_ENGLISH_FORMS.items(), key=lambda item: -len(item[0]))


def _expand_abbreviations(text: str) -> str:
    """Spell out "(주)" and friends at either end, so the token rules below can find them."""
    while True:
        expanded = _ABBREVIATION_AT_START.sub(
            lambda m: f" {_KOREAN_ABBREVIATIONS[m.group(1)]} ", text, count=1
        )
        expanded = _ABBREVIATION_AT_END.sub(
            lambda m: f" {_KOREAN_ABBREVIATIONS[m.group(1)]} ", expanded, count=1
        )
        if expanded == text:
            return text
        text = expanded


def _take_form_at_end(tokens: list[str]) -> str | None:
    """Remove a legal form from the end of `tokens` and return its canonical spelling."""
    last = tokens[-1]
    for form in _KOREAN_FORMS:
        if last == form:
            tokens.pop()
            return form
        if last.endswith(form):
            tokens[-1] = last[: -len(form)]
            return form
    for form_tokens, canonical in _ENGLISH_BY_LENGTH:
        if tuple(tokens[-len(form_tokens) :]) == form_tokens:
            del tokens[-len(form_tokens) :]
            return canonical
    return None


def _take_form_at_start(tokens: list[str]) -> str | None:
    """Remove a Korean legal form from the start of `tokens` and return it."""
    first = tokens[0]
    for form in _KOREAN_FORMS:
        if first == form:
            tokens.pop(0)
            return form
        if first.startswith(form):
            tokens[0] = first[len(form) :]
            return form
    return None


def _normalize_one(text: str, *, legal_form: str) -> str:
    text = _expand_abbreviations(unicodedata.normalize("NFKC", text))
    original = text_core(text).split()
    tokens = list(original)
    leading: list[str] = []
    trailing: list[str] = []
    while tokens:
        if (form := _take_form_at_start(tokens)) is not None:
            leading.append(form)
        elif (form := _take_form_at_end(tokens)) is not None:
            trailing.insert(0, form)  # found from the outside in; keep reading order
        else:
            break
    if not tokens:
        # The whole value is a legal form ("(주)", "Limited"): nothing else to compare by.
        return " ".join(original)
    if legal_form == "suffix":
        # dict.fromkeys drops repeats ("(주)삼성전자 주식회사") and keeps first-seen order.
        tokens.extend(dict.fromkeys(leading + trailing))
    return " ".join(tokens)


def normalize_company(values: pd.Series, *, legal_form: str = "remove") -> pd.Series:
    """Normalize company names: legal forms handled, then text normalization.

    Legal forms are found after NFKC (so "㈜" is "(주)"): Korean 주식회사, (주), 주),
    유한회사, (유), 유한책임회사, 재단법인, (재), 사단법인, (사) at the start or end, with or
    without a space; English Inc, Incorporated, Corp, Corporation, Ltd, Limited, Co, Company,
    "Co., Ltd.", LLC, L.L.C., PLC, GmbH, AG, S.A. at the end. A value that is nothing but a
    legal form is kept as text.

    Options:
        legal_form: "remove" (default) drops them ("(주)삼성전자" → "삼성전자");
            "suffix" drops them and appends one canonical form at the end
            ("㈜삼성전자" → "삼성전자 주식회사", "ACME, Inc" → "acme inc").
    """
    check_series(values, "company")
    check_choice("company", "legal_form", legal_form, _LEGAL_FORM_MODES)
    return map_unique(values, lambda s: _normalize_one(s, legal_form=legal_form))
