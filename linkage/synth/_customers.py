"""`customers()` and `customer_updates()`: a small bilingual CRM table with labelled
duplicates (typos, nicknames, format variants, blanks, moves) and lookalikes that are not
duplicates (relatives, twins, namesakes)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.synth._draw import digit_string, pick, random_date, zipf
from linkage.synth._vocab import (
    COMPANY_STYLES,
    EN_COMMON_FULL,
    EN_COMPANIES,
    EN_FEMALE,
    EN_MALE,
    EN_SURNAMES,
    KO_APARTMENTS,
    KO_COMMON_FULL,
    KO_COMPANIES,
    KO_FEMALE,
    KO_GIVEN_PARTS,
    KO_MAIL_DOMAINS,
    KO_MAIL_P,
    KO_MALE,
    KO_REGION_P,
    KO_REGIONS,
    KO_ROADS,
    KO_SURNAME_P,
    KO_SURNAME_ROMAN,
    KO_SURNAMES,
    KO_SYLLABLE_ROMAN,
    N_CUSTOMER_UK_TOWNS,
    STREET_ABBREV,
    UK_MAIL_DOMAINS,
    UK_MAIL_P,
    UK_POSTCODE_LETTERS,
    UK_STREETS,
    UK_SUFFIXES,
    UK_TOWNS,
    US_CITIES,
    US_MAIL_DOMAINS,
    US_MAIL_P,
    US_STREETS,
    US_SUFFIXES,
)
from linkage.synth.perturb import (
    NICKNAMES,
    PHONE_STYLES,
    Phone,
    en_name_typo,
    ko_name_typo,
    render_date,
    render_phone,
)

CUSTOMER_COLUMNS = [
    "customer_id",
    "name",
    "birth_date",
    "phone",
    "email",
    "company",
    "address",
    "postcode",
    "city",
    "source",
    "signup_date",
]

_SOURCES = ["crm", "web", "shop", "import"]
_SOURCE_P = np.array([0.4, 0.3, 0.2, 0.1])


# --------------------------------------------------------------------------------------------
# customers(): people
# --------------------------------------------------------------------------------------------


@dataclass
class _Person:
    lang: str  # "ko" or "en": how the name is written
    country: str  # "KR", "UK" or "US": where the home is
    surname: str
    given: str
    sex: str
    birth: dt.date
    home: dict[str, str]
    phone: Phone
    phone_style: str
    email: str = ""
    company: tuple[str, str, str, int] | None = None  # (name, domain, legal form, usual style)


def _new_home(
    rng: np.random.Generator, country: str, avoid_city: str | None = None
) -> dict[str, str]:
    for _ in range(20):
        home = _new_home_once(rng, country)
        if home["city"] != avoid_city:
            return home
    return home


def _new_home_once(rng: np.random.Generator, country: str) -> dict[str, str]:
    if country == "KR":
        sido, short, district, city, alts, prefix, area, _ = KO_REGIONS[
            int(rng.choice(len(KO_REGIONS), p=KO_REGION_P))
        ]
        number = str(int(rng.integers(1, 600)))
        if rng.random() < 0.15:
            number += f"-{int(rng.integers(1, 30))}"
        kind = rng.random()
        if kind < 0.45:
            detail = (
                f"{pick(rng, KO_APARTMENTS)} {int(rng.integers(101, 120))}동 "
                f"{int(rng.integers(1, 26))}{int(rng.integers(1, 5)):02d}호"
            )
        elif kind < 0.65:
            detail = f"{int(rng.integers(2, 20))}층"
        else:
            detail = ""
        return {
            "country": "KR",
            "sido": sido,
            "sido_short": short,
            "district": district,
            "road": pick(rng, KO_ROADS),
            "number": number,
            "detail": detail,
            "city": city,
            "city_alts": alts,
            "postcode": prefix + digit_string(rng, 2),
            "area": area,
        }
    if country == "UK":
        weights = np.array([t[3] for t in UK_TOWNS[:N_CUSTOMER_UK_TOWNS]], dtype=float)
        town, areas, area, _ = UK_TOWNS[int(rng.choice(len(weights), p=weights / weights.sum()))]
        postcode = (
            f"{pick(rng, areas.split())}{int(rng.integers(1, 21))} {int(rng.integers(1, 10))}"
            f"{pick(rng, list(UK_POSTCODE_LETTERS))}{pick(rng, list(UK_POSTCODE_LETTERS))}"
        )
        unit = f"Flat {int(rng.integers(1, 40))}" if rng.random() < 0.3 else ""
        return {
            "country": "UK",
            "number": str(int(rng.integers(1, 250))),
            "street": pick(rng, UK_STREETS),
            "suffix": pick(rng, UK_SUFFIXES),
            "unit": unit,
            "city": town,
            "city_alts": f"{town.upper()}|{town}, UK",
            "postcode": postcode,
            "area": area,
        }
    city, _state, zip3, areas, alts = US_CITIES[int(rng.integers(len(US_CITIES)))]
    unit = f"Apt {int(rng.integers(1, 30))}{pick(rng, list('ABCD'))}" if rng.random() < 0.3 else ""
    return {
        "country": "US",
        "number": str(int(rng.integers(10, 9900))),
        "street": pick(rng, US_STREETS),
        "suffix": pick(rng, US_SUFFIXES),
        "unit": unit,
        "city": city,
        "city_alts": alts,
        "postcode": zip3 + digit_string(rng, 2),
        "area": pick(rng, areas.split()),
    }


def _new_mobile(rng: np.random.Generator, country: str, used: dict[str, bool]) -> Phone:
    while True:
        if country == "KR":
            phone: Phone = ("82", ("010", digit_string(rng, 4, True), digit_string(rng, 4)))
        elif country == "UK":
            phone = ("44", (f"07{int(rng.integers(400, 1000))}", digit_string(rng, 6)))
        else:
            area = pick(rng, pick(rng, US_CITIES)[3].split())
            phone = ("1", (area, str(int(rng.integers(201, 1000))), digit_string(rng, 4)))
        key = "".join(phone[1])
        if key not in used:
            used[key] = True
            return phone


def _new_landline(rng: np.random.Generator, home: dict[str, str], used: dict[str, bool]) -> Phone:
    while True:
        area = home["area"]
        if home["country"] == "KR":
            middle = digit_string(rng, 4 if area == "02" else 3, True)
            phone: Phone = ("82", (area, middle, digit_string(rng, 4)))
        elif home["country"] == "UK":
            if len(area) == 3:
                phone = ("44", (area, digit_string(rng, 4, True), digit_string(rng, 4)))
            elif len(area) == 4:
                phone = ("44", (area, digit_string(rng, 3, True), digit_string(rng, 4)))
            else:
                phone = ("44", (area, digit_string(rng, 6, True)))
        else:
            phone = ("1", (area, str(int(rng.integers(201, 1000))), digit_string(rng, 4)))
        key = "".join(phone[1])
        if key not in used:
            used[key] = True
            return phone


def _phone_style(rng: np.random.Generator, phone: Phone) -> str:
    """The style a person usually writes their number in (mostly the national convention)."""
    cc = phone[0]
    if cc == "82":
        return "dash" if rng.random() < 0.88 else "plain"
    if cc == "44":
        return "space" if rng.random() < 0.5 else "intl"
    return pick(rng, ["paren", "intl", "dash"], np.array([0.4, 0.4, 0.2]))


def _ko_roman(given: str) -> list[str]:
    return [KO_SYLLABLE_ROMAN[s] for s in given]


def _new_email(rng: np.random.Generator, p: _Person, used: dict[str, bool]) -> str:
    year = p.birth.year
    if p.lang == "ko":
        parts = _ko_roman(p.given)
        g, s, ini = "".join(parts), KO_SURNAME_ROMAN[p.surname], "".join(x[0] for x in parts)
    else:
        g, s = p.given.lower(), p.surname.lower()
        ini = g[0]
    for attempt in range(30):
        nn = int(rng.integers(1, 100))
        local = pick(
            rng,
            [
                f"{g}.{s}",
                f"{s}{g}",
                f"{s}.{g}",
                f"{s}{ini}{year % 100:02d}",
                f"{g}{year}",
                f"{ini}{s}{nn}",
                f"{g}_{s}",
                f"{g[0]}{s}",
            ],
        )
        if attempt > 10:
            local += str(int(rng.integers(10, 1000)))
        if p.company is not None and rng.random() < 0.2:
            domain = p.company[1]
        elif p.country == "KR" or p.lang == "ko":
            domain = pick(rng, KO_MAIL_DOMAINS, KO_MAIL_P / KO_MAIL_P.sum())
        elif p.country == "UK":
            domain = pick(rng, UK_MAIL_DOMAINS, UK_MAIL_P / UK_MAIL_P.sum())
        else:
            domain = pick(rng, US_MAIL_DOMAINS, US_MAIL_P / US_MAIL_P.sum())
        email = f"{local}@{domain}"
        if email not in used:
            used[email] = True
            return email
    raise RuntimeError("could not find a free e-mail address")  # pragma: no cover


def _new_company(rng: np.random.Generator, country: str) -> tuple[str, str, str, int]:
    if country == "KR":
        name, domain, form = pick(rng, KO_COMPANIES)
    else:
        name, domain = pick(rng, EN_COMPANIES)
        if country == "UK":
            form = pick(rng, ["ltd", "plc"], np.array([0.75, 0.25]))
        else:
            form = pick(rng, ["inc", "llc", "corp"], np.array([0.5, 0.3, 0.2]))
    usual = 0 if rng.random() < 0.6 else int(rng.integers(len(COMPANY_STYLES[form]) - 1))
    return name, domain, form, usual


def _given_pool(lang: str, sex: str) -> tuple[list[str], np.ndarray]:
    """Given names and their weights for customers()."""
    if lang == "en":
        names = EN_MALE[:120] if sex == "M" else EN_FEMALE[:120]
        return names, zipf(len(names), 8.0, 0.7)
    # The listed popular names take half the draws and syllable combinations the other half, so
    # that full-name clashes are about as rare as in a real customer base.
    listed = list(dict.fromkeys(KO_MALE if sex == "M" else KO_FEMALE))
    heads, tails = KO_GIVEN_PARTS[sex]
    seen = dict.fromkeys(listed)
    built = [h + t for h in heads for t in tails if h != t and h + t not in seen]
    weights = np.concatenate(
        [np.full(len(listed), 0.5 / len(listed)), np.full(len(built), 0.5 / len(built))]
    )
    return listed + built, weights


_GIVEN_POOLS = {(lang, sex): _given_pool(lang, sex) for lang in ("ko", "en") for sex in "MF"}


def _draw_given(
    rng: np.random.Generator,
    lang: str,
    sex: str,
    avoid: Sequence[str] = (),
    share_first: str | None = None,
) -> str:
    names, weights = _GIVEN_POOLS[(lang, sex)]
    keep = np.array([n not in avoid for n in names])
    if share_first:
        # Korean siblings often share a generation syllable (돌림자): 민수 and 민호.
        same = keep & np.array([n.startswith(share_first) for n in names])
        if same.any():
            keep = same
    p = np.where(keep, weights, 0.0)
    return pick(rng, names, p / p.sum())


def _draw_surname(rng: np.random.Generator, lang: str) -> str:
    if lang == "ko":
        return pick(rng, KO_SURNAMES, KO_SURNAME_P)
    return pick(rng, EN_SURNAMES[:150], zipf(150, 6.0))


def _new_person(
    rng: np.random.Generator,
    lang: str,
    country: str,
    used: dict[str, bool],
    *,
    surname: str | None = None,
    given: str | None = None,
    sex: str | None = None,
    birth: dt.date | None = None,
    home: dict[str, str] | None = None,
) -> _Person:
    sex = sex or ("M" if rng.random() < 0.5 else "F")
    mobile_country = country
    if lang == "en" and rng.random() < 0.3:
        mobile_country = "KR"  # expats in Korea keep an English address on file but use a 010
    phone = _new_mobile(rng, mobile_country, used)
    p = _Person(
        lang=lang,
        country=country,
        surname=surname or _draw_surname(rng, lang),
        given=given or _draw_given(rng, lang, sex),
        sex=sex,
        birth=birth or random_date(rng, dt.date(1950, 1, 1), dt.date(2005, 12, 31)),
        home=home or _new_home(rng, country),
        phone=phone,
        phone_style="",
    )
    p.phone_style = _phone_style(rng, phone)
    if rng.random() < 0.65:
        p.company = _new_company(rng, country)
    return p


def _draw_lang(rng: np.random.Generator) -> tuple[str, str]:
    if rng.random() < 0.6:
        return "ko", "KR"
    return "en", ("UK" if rng.random() < 0.5 else "US")


def _household(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    """Relatives: one surname, home and landline or company; different given names and births."""
    lang, country = _draw_lang(rng)
    size = int(rng.choice([2, 3, 4], p=[0.55, 0.35, 0.1]))
    head = _new_person(rng, lang, country, used)
    head.birth = random_date(rng, dt.date(1950, 1, 1), dt.date(1978, 12, 31))
    members = [head]
    generation = None
    while len(members) < size:
        sex = "M" if rng.random() < 0.5 else "F"
        if rng.random() < 0.7:
            birth = head.birth + dt.timedelta(days=int(rng.integers(24 * 365, 37 * 365)))
        else:
            birth = head.birth + dt.timedelta(days=int(rng.integers(-8 * 365, 8 * 365)))
        if any(abs((birth - m.birth).days) < 300 for m in members):
            continue  # twins are made on purpose elsewhere; here births must differ
        if lang == "ko" and len(members) >= 2 and generation is None and rng.random() < 0.5:
            generation = members[-1].given[0]
        given = _draw_given(rng, lang, sex, [m.given for m in members], generation)
        relative = _new_person(
            rng,
            lang,
            country,
            used,
            surname=head.surname,
            given=given,
            sex=sex,
            birth=birth,
            home=head.home,
        )
        members.append(relative)
    landline = rng.random() < 0.55
    shared_company = not landline or rng.random() < 0.25
    line = _new_landline(rng, head.home, used) if landline else None
    company = _new_company(rng, country)
    for m in members:
        if line is not None:
            m.phone, m.phone_style = line, _phone_style(rng, line)
        if shared_company:
            m.company = company  # a family business
    return members


def _twins(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    lang, country = _draw_lang(rng)
    first = _new_person(rng, lang, country, used)
    first.birth = random_date(rng, dt.date(1965, 1, 1), dt.date(2005, 12, 31))
    sex = "M" if rng.random() < 0.5 else "F"
    share = first.given[0] if lang == "ko" and rng.random() < 0.5 else None
    given = _draw_given(rng, lang, sex, [first.given], share)
    second = _new_person(
        rng,
        lang,
        country,
        used,
        surname=first.surname,
        given=given,
        sex=sex,
        birth=first.birth,
        home=first.home,
    )
    return [first, second]


def _namesakes(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    """Same common full name, but different birth date, phone and city."""
    lang, country = _draw_lang(rng)
    surname, given, sex = pick(rng, KO_COMMON_FULL if lang == "ko" else EN_COMMON_FULL)
    people: list[_Person] = []
    for _ in range(int(rng.choice([2, 3], p=[0.7, 0.3]))):
        home = _new_home(rng, country, avoid_city=people[-1].home["city"] if people else None)
        people.append(
            _new_person(rng, lang, country, used, surname=surname, given=given, sex=sex, home=home)
        )
    return people


def _make_people(rng: np.random.Generator, n_people: int) -> list[_Person]:
    used: dict[str, bool] = {}
    plan = (
        ["house"] * round(n_people * 0.035)
        + ["twins"] * round(n_people * 0.008)
        + ["namesakes"] * round(n_people * 0.016)
    )
    people: list[_Person] = []
    for kind in plan:
        if kind == "house":
            group = _household(rng, used)
        elif kind == "twins":
            group = _twins(rng, used)
        else:
            group = _namesakes(rng, used)
        people.extend(group[: n_people - len(people)])
    while len(people) < n_people:
        lang, country = _draw_lang(rng)
        people.append(_new_person(rng, lang, country, used))
    for p in people:
        p.email = _new_email(rng, p, used)
    return people


# --------------------------------------------------------------------------------------------
# customers(): records
# --------------------------------------------------------------------------------------------


def _render_address(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    if home["country"] == "KR":
        sido = home["sido"]
        detail = home["detail"]
        sep = ", "
        if vary:
            sido = pick(rng, [home["sido_short"], "", sido])
            if detail and rng.random() < 0.4:
                detail = ""
            sep = pick(rng, [", ", " "])
        head = " ".join(x for x in (sido, home["district"], home["road"], home["number"]) if x)
        return head + (sep + detail if detail else "")
    suffix, unit = home["suffix"], home["unit"]
    if vary and rng.random() < 0.6:
        suffix = STREET_ABBREV[suffix]
    street = f"{home['number']} {home['street']} {suffix}"
    if unit:
        if home["country"] == "UK":
            flat = unit.split()[1]
            text = pick(rng, [f"{unit}, {street}", f"{street}, {unit}", f"{flat}/{street}"])
            text = text if vary else f"{unit}, {street}"
        else:
            apt = unit.split()[1]
            text = pick(rng, [f"{street} {unit}", f"{street}, Apt. {apt}", f"{street} #{apt}"])
            text = text if vary else f"{street} {unit}"
    else:
        text = street
    if vary and rng.random() < 0.15:
        text = text.upper()
    return text


def _render_city(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    if vary:
        return pick(rng, home["city_alts"].split("|"))
    return home["city"]


def _render_postcode(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    code = home["postcode"]
    if vary and home["country"] == "UK":
        return pick(rng, [code.replace(" ", ""), code.lower()])
    return code


def _render_name(rng: np.random.Generator, p: _Person, dup: bool) -> str:
    if p.lang == "ko":
        name = p.surname + p.given
        if dup and rng.random() < 0.12:
            name = ko_name_typo(rng, name, len(p.surname))
        if rng.random() < (0.15 if dup else 0.03):
            name = name[: len(p.surname)] + " " + name[len(p.surname) :]
        return name
    first, last = p.given, p.surname
    if dup and first in NICKNAMES and rng.random() < 0.3:
        first = pick(rng, NICKNAMES[first])
    if dup and rng.random() < 0.12:
        if rng.random() < 0.5:
            first = en_name_typo(rng, first)
        else:
            last = en_name_typo(rng, last)
    name = f"{last} {first}" if dup and rng.random() < 0.07 else f"{first} {last}"
    if dup and rng.random() < 0.04:
        name = name.upper()
    return name


def _render_email(rng: np.random.Generator, email: str, dup: bool) -> str:
    if not dup or rng.random() >= 0.15:
        return email
    local, domain = email.split("@")
    style = int(rng.integers(3))
    if style == 0:
        return email.upper()
    if style == 1:
        return ".".join(x.capitalize() for x in local.split(".")) + "@" + domain.capitalize()
    return f"{local}@{domain.upper()}"


_BASE_MISSING = {
    "birth_date": 0.06,
    "phone": 0.03,
    "email": 0.05,
    "company": 0.0,
    "address": 0.03,
    "postcode": 0.05,
    "city": 0.02,
}
_DUP_MISSING = 0.15  # share of each non-key field left blank in a duplicate record


def _render_record(
    rng: np.random.Generator, p: _Person, dup: bool, used: dict[str, bool]
) -> dict[str, str | None]:
    source = pick(rng, _SOURCES, _SOURCE_P)
    # Duplicates and bulk imports are where the non-standard spellings come from.
    p_vary = (0.45 if dup else 0.12) + (0.25 if source == "import" else 0.0)

    phone, phone_style, email, home = p.phone, p.phone_style, p.email, p.home
    if dup and rng.random() < 0.08:
        phone = _new_mobile(rng, p.country if p.phone[0] != "82" else "KR", used)
    if dup and rng.random() < 0.08:
        email = _new_email(rng, p, used)  # a new address after changing provider or job
    if dup and rng.random() < 0.04:
        home = _new_home(rng, p.country, avoid_city=p.home["city"])

    if rng.random() < p_vary:
        phone_style = pick(rng, [s for s in PHONE_STYLES[phone[0]] if s != phone_style])
    date_style = "iso"
    if rng.random() < p_vary:
        # D/M/Y is the British habit; 1990년 3월 5일 only appears for Korean customers.
        styles = (
            ["compact", "dots", "korean"] if p.lang == "ko" else ["dmy", "dmy", "compact", "dots"]
        )
        date_style = pick(rng, styles)
    company = None
    if p.company is not None:
        name, _domain, form, usual = p.company
        style = usual
        if rng.random() < p_vary + 0.1:
            style = int(rng.integers(len(COMPANY_STYLES[form])))
        company = COMPANY_STYLES[form][style].format(b=name, B=name.upper())

    record: dict[str, str | None] = {
        "name": _render_name(rng, p, dup),
        "birth_date": render_date(p.birth, date_style),
        "phone": render_phone(phone, phone_style),
        "email": _render_email(rng, email, dup),
        "company": company,
        "address": _render_address(rng, home, rng.random() < p_vary),
        "postcode": _render_postcode(rng, home, rng.random() < p_vary),
        "city": _render_city(rng, home, rng.random() < p_vary),
        "source": source,
        "signup_date": random_date(rng, dt.date(2016, 1, 1), dt.date(2025, 6, 30)).isoformat(),
    }
    for key, p_base in _BASE_MISSING.items():
        if rng.random() < (_DUP_MISSING if dup else p_base):
            record[key] = None
    return record


def customers(n_people: int = 1400, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small CRM customer table, about 60% Korean and 40% English customers.

    About 30% of the people have 2-4 records that differ by typos, nicknames, spacing, formats,
    blanks and moves; relatives, twins and namesakes look alike but are different people.
    Returns (records, truth): records has `CUSTOMER_COLUMNS` (all strings, missing is NaN), and
    truth maps every `customer_id` to a `person_id`. The same arguments give the same frames.
    """
    records, truth, _people, _used = _customers(n_people, seed)
    return records, truth


def _customers(
    n_people: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, list[_Person], dict[str, bool]]:
    """customers(), and the people behind it (person i is `P-{i + 1}`) with the e-mail
    addresses and phone numbers it used, from which later loads go on."""
    if n_people < 1:
        raise ParameterError(f"n_people must be at least 1, got {n_people}")
    rng = np.random.default_rng(seed)
    people = _make_people(rng, n_people)
    people = [people[i] for i in rng.permutation(n_people)]  # person ids must not reveal groups
    n_records = np.ones(n_people, dtype=int)
    has_dups = rng.random(n_people) < 0.3
    n_records[has_dups] += rng.choice([1, 2, 3], size=int(has_dups.sum()), p=[0.6, 0.3, 0.1])

    used = {p.email: True for p in people}
    used.update({"".join(p.phone[1]): True for p in people})
    width = max(5, len(str(n_people)))
    rows, owners = [], []
    for i, (p, k) in enumerate(zip(people, n_records, strict=True)):
        for j in range(int(k)):
            rows.append(_render_record(rng, p, dup=j > 0, used=used))
            owners.append(f"P-{i + 1:0{width}d}")

    order = rng.permutation(len(rows))
    width = max(6, len(str(len(rows))))
    ids = [f"C-{i + 1:0{width}d}" for i in range(len(rows))]
    records = pd.DataFrame([rows[i] for i in order], columns=CUSTOMER_COLUMNS[1:])
    records.insert(0, "customer_id", ids)
    # A string dtype that keeps missing values missing on pandas 2.2 too ("str" there is
    # Python's str, which turns None into the text "None").
    records = records.astype(pd.StringDtype())
    truth = pd.DataFrame({"customer_id": ids, "person_id": [owners[i] for i in order]}, dtype="str")
    return records, truth, people, used


def customer_updates(
    days: int = 2, per_day: int = 150, n_people: int = 1400, seed: int = 7
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """The loads that follow `customers(n_people, seed)`: `days` tables (day 2, day 3, ...) of
    about `per_day` new records each, for `linkage update`.

    Half of a day's records are later records of people already on file (from the first table
    or an earlier day), with a duplicate's noise (typos, formats, blanks, moves); the others are
    new people, a fifth of them with two records that day. Ids go on where the previous table
    stopped (`C-002005` ...), new people's where the people stopped (`P-01401` ...). Returns
    one (records, truth) per day, shaped as customers()'s; the same arguments give the same
    frames.
    """
    if days < 1 or per_day < 2:
        raise ParameterError(f"days must be at least 1 and per_day at least 2, got {days}, "
                             f"{per_day}")
    first, _truth, people, used = _customers(n_people, seed)
    rng = np.random.default_rng([seed, 2])  # a stream of its own: the first table stays as it is
    width = max(5, len(str(n_people)))
    owners = [f"P-{i + 1:0{width}d}" for i in range(len(people))]
    next_id = len(first) + 1
    id_width = max(6, len(str(len(first))))
    tables = []
    for _day in range(days):
        rows, who = [], []
        for i in rng.choice(len(people), per_day // 2, replace=False):
            rows.append(_render_record(rng, people[i], dup=True, used=used))
            who.append(owners[i])
        while len(rows) < per_day:
            lang, country = _draw_lang(rng)
            person = _new_person(rng, lang, country, used)
            person.email = _new_email(rng, person, used)
            people.append(person)
            owners.append(f"P-{len(people):0{width}d}")
            for j in range(1 + int(rng.random() < 0.2)):
                rows.append(_render_record(rng, person, dup=j > 0, used=used))
                who.append(owners[-1])
        order = rng.permutation(len(rows))
        ids = [f"C-{next_id + i:0{id_width}d}" for i in range(len(rows))]
        next_id += len(rows)
        records = pd.DataFrame([rows[i] for i in order], columns=CUSTOMER_COLUMNS[1:])
        records.insert(0, "customer_id", ids)
        records = records.astype(pd.StringDtype())
        truth = pd.DataFrame({"customer_id": ids, "person_id": [who[i] for i in order]},
                             dtype="str")
        tables.append((records, truth))
    return tables
