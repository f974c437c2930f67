"""`persons()`: an English-style person table of any size, built with numpy array operations
only (a million rows take seconds), for benchmarks; and the pools it shares with `traps()`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.synth._draw import take, zipf
from linkage.synth._vocab import (
    EN_FEMALE,
    EN_MALE,
    EN_SURNAME_HEADS,
    EN_SURNAME_TAILS,
    EN_SURNAMES,
    UK_POSTCODE_LETTERS,
    UK_TOWNS,
)
from linkage.synth.perturb import en_name_typo

PERSON_COLUMNS = ["rec_id", "first_name", "surname", "dob", "city", "postcode", "email", "phone"]


_PERSON_MAIL_DOMAINS = [
    "gmail.com",
    "hotmail.co.uk",
    "outlook.com",
    "yahoo.co.uk",
    "btinternet.com",
    "icloud.com",
    "sky.com",
    "live.co.uk",
    "aol.com",
    "virginmedia.com",
    "protonmail.com",
]
_PERSON_MAIL_P = np.array([0.35, 0.12, 0.1, 0.1, 0.06, 0.07, 0.05, 0.05, 0.03, 0.04, 0.03])
N_VARIANTS = 6  # typo variants precomputed per name
DOB_FIRST = np.datetime64("1935-01-01", "D")
_DOB_LAST = np.datetime64("2006-12-31", "D")
DOB_DAYS = int((_DOB_LAST - DOB_FIRST).astype(np.int64))


def surname_pool() -> list[str]:
    real = list(dict.fromkeys(EN_SURNAMES))
    seen = dict.fromkeys(real)
    built = []
    for head in EN_SURNAME_HEADS:
        for tail in EN_SURNAME_TAILS:
            name = head + tail
            if name not in seen:
                seen[name] = None
                built.append(name)
    return real + built


def with_variants(rng: np.random.Generator, names: list[str]) -> list[str]:
    """Names followed by `N_VARIANTS` typo variants of each (name i's are at n + i*V + v)."""
    return names + [en_name_typo(rng, name) for name in names for _ in range(N_VARIANTS)]


class Postcodes:
    """UK postcodes as integer codes (area, district, inward part), turned into text at the end."""

    def __init__(self) -> None:
        town_areas = [t[1].split() for t in UK_TOWNS]
        self.areas = [a for group in town_areas for a in group]
        self.count = np.array([len(g) for g in town_areas])
        self.start = np.concatenate([[0], np.cumsum(self.count)[:-1]])
        letters = UK_POSTCODE_LETTERS
        self.inward = [f"{d}{a}{b}" for d in range(1, 10) for a in letters for b in letters]

    def draw(self, rng: np.random.Generator, towns: np.ndarray) -> np.ndarray:
        area = self.start[towns] + (rng.random(towns.size) * self.count[towns]).astype(np.int64)
        district = rng.integers(1, 30, towns.size)
        inward = rng.integers(0, len(self.inward), towns.size)
        return np.stack([area, district, inward], axis=1)

    def text(self, codes: np.ndarray) -> pd.Series:
        districts = [str(i) for i in range(30)]
        return (
            take(self.areas, codes[:, 0])
            + take(districts, codes[:, 1])
            + " "
            + take(self.inward, codes[:, 2])
        )


def _dup_structure(
    rng: np.random.Generator, n_rows: int, dup_rate: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """Entity of each row (shuffled) and whether the row is an extra copy; 1-3 copies each."""
    n_dup = round(n_rows * dup_rate)
    n_ent = n_rows - n_dup
    extra = np.empty(0, dtype=np.int64)
    if n_dup:
        # Draw copy counts until they add up to n_dup exactly; the last one is cut to fit.
        copies = rng.choice([1, 2, 3], size=n_dup, p=[0.6, 0.3, 0.1])
        total = np.cumsum(copies)
        k = int(np.searchsorted(total, n_dup))
        copies = copies[: k + 1]
        copies[-1] -= total[k] - n_dup
        owners = rng.choice(n_ent, size=copies.size, replace=copies.size > n_ent)
        extra = np.repeat(owners, copies)
    entity = np.concatenate([np.arange(n_ent), extra])
    is_dup = np.concatenate([np.zeros(n_ent, bool), np.ones(extra.size, bool)])
    order = rng.permutation(n_rows)
    return entity[order], is_dup[order], n_ent


def _person_emails(
    rng: np.random.Generator,
    first: np.ndarray,
    surname: np.ndarray,
    year: np.ndarray,
    first_names: list[str],
    surnames: list[str],
) -> pd.Series:
    """One e-mail per entity from its true name, in six local-part patterns, made unique."""
    n = first.size
    # Pieces: X + sep + Y + tail; X and Y index one pool of first names, initials and surnames.
    lower = (
        [x.lower() for x in first_names]
        + [x[0].lower() for x in first_names]
        + [x.lower() for x in surnames]
    )
    init_off, sur_off = len(first_names), 2 * len(first_names)
    two = [f"{i:02d}" for i in range(100)] + [""]
    pattern = rng.choice(6, n, p=[0.3, 0.15, 0.15, 0.15, 0.15, 0.1])
    # pattern: 0 first.last  1 firstlast  2 flastNN  3 first_lastYY  4 first.lastNN  5 last.first
    x = np.select([pattern == 2, pattern == 5], [init_off + first, sur_off + surname], first)
    y = np.where(pattern == 5, first, sur_off + surname)
    sep = np.array([0, 1, 1, 2, 0, 0])[pattern]
    nn = rng.integers(0, 100, n)
    tail = np.select([(pattern == 2) | (pattern == 4), pattern == 3], [nn, year % 100], 100)
    local = take(lower, x) + take([".", "", "_"], sep) + take(lower, y) + take(two, tail)
    p = _PERSON_MAIL_P / _PERSON_MAIL_P.sum()
    domain = "@" + take(_PERSON_MAIL_DOMAINS, rng.choice(len(_PERSON_MAIL_DOMAINS), n, p=p))
    email = local + domain
    three = [f"{i:03d}" for i in range(1000)]
    clash = email.duplicated().to_numpy()
    while clash.any():  # two John Smiths cannot own the same mailbox
        tag = take(three, rng.integers(0, 1000, int(clash.sum()))).to_numpy()
        email[clash] = local[clash].to_numpy() + tag + domain[clash].to_numpy()
        clash = email.duplicated().to_numpy()
    return email


def persons(
    n_rows: int, seed: int = 42, dup_rate: float = 0.2
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An English-style person table of `n_rows` rows for benchmarks, built with array operations.

    About `dup_rate` of the rows are extra copies (1-3 per duplicated entity) of another row, with
    a typo in a name, a blank field, a shifted or day/month-swapped birth date or another city.
    Returns (records, truth): records has `PERSON_COLUMNS` (strings, missing is NaN); truth has
    `rec_id` and an integer `entity_id`. A million rows take a few seconds.
    """
    if n_rows < 1:
        raise ParameterError(f"n_rows must be at least 1, got {n_rows}")
    if not 0.0 <= dup_rate <= 0.5:
        raise ParameterError(f"dup_rate must be between 0 and 0.5, got {dup_rate}")
    rng = np.random.default_rng(seed)
    entity, is_dup, n_ent = _dup_structure(rng, n_rows, dup_rate)

    # Pools. First names and the real surnames follow a Zipf-like curve and compound surnames
    # share half the mass, so (first name, surname, birth date) rarely collides between people.
    males, females = list(dict.fromkeys(EN_MALE)), list(dict.fromkeys(EN_FEMALE))
    first_names, surnames = males + females, surname_pool()
    n_first, n_sur, n_real = len(first_names), len(surnames), len(dict.fromkeys(EN_SURNAMES))
    first_pool = with_variants(rng, first_names)
    sur_pool = with_variants(rng, surnames)
    sur_p = np.concatenate([zipf(n_real, 12.0), rng.lognormal(0.0, 0.7, n_sur - n_real)])
    sur_p[n_real:] *= sur_p[:n_real].sum() / sur_p[n_real:].sum()
    town_p = np.array([t[3] for t in UK_TOWNS], dtype=float)
    town_p /= town_p.sum()
    postcodes = Postcodes()

    # Entities.
    male = rng.random(n_ent) < 0.5
    first = np.where(
        male,
        rng.choice(len(males), n_ent, p=zipf(len(males), 15.0, 0.9)),
        len(males) + rng.choice(len(females), n_ent, p=zipf(len(females), 15.0, 0.9)),
    )
    surname = rng.choice(n_sur, n_ent, p=sur_p / sur_p.sum())
    dob = rng.integers(0, DOB_DAYS + 1, n_ent)
    town = rng.choice(len(UK_TOWNS), n_ent, p=town_p)
    postcode = postcodes.draw(rng, town)
    year = (dob.astype("timedelta64[D]") + DOB_FIRST).astype("datetime64[Y]").astype(np.int64)
    email = _person_emails(rng, first, surname, year + 1970, first_names, surnames)
    mobile = rng.choice(600_000_000, size=n_ent, replace=False) + 400_000_000  # 07 4xx-9xx

    # Rows: copy the entity's values, then add noise to the extra copies only.
    n = n_rows
    first_row, sur_row = first[entity], surname[entity]
    typo = is_dup & (rng.random(n) < 0.45)
    in_first = rng.random(n) < 0.5
    variant = rng.integers(0, N_VARIANTS, n)
    first_row = np.where(typo & in_first, n_first + first_row * N_VARIANTS + variant, first_row)
    sur_row = np.where(typo & ~in_first, n_sur + sur_row * N_VARIANTS + variant, sur_row)

    days = dob[entity].astype("timedelta64[D]") + DOB_FIRST
    month_start = days.astype("datetime64[M]")
    year_start = days.astype("datetime64[Y]")
    month = (month_start - year_start.astype("datetime64[M]")).astype(np.int64) + 1
    day = (days - month_start.astype("datetime64[D]")).astype(np.int64) + 1
    swapped = (year_start.astype("datetime64[M]") + (day - 1).astype("timedelta64[M]")).astype(
        "datetime64[D]"
    ) + (month - 1).astype("timedelta64[D]")
    shifted = days + rng.choice([-1, 1], n).astype("timedelta64[D]")
    date_noise = is_dup & (rng.random(n) < 0.15)
    # A day/month swap only reads as a date when the day is 12 or less; else shift by a day.
    use_swap = date_noise & (day <= 12) & (day != month) & (rng.random(n) < 0.4)
    days = np.where(use_swap, swapped, np.where(date_noise & ~use_swap, shifted, days))
    dob_row = (days - DOB_FIRST).astype(np.int64) + 1  # +1: the date pool starts a day early

    town_row, postcode_row = town[entity], postcode[entity]
    moved = is_dup & (rng.random(n) < 0.1)
    town_row[moved] = rng.choice(len(UK_TOWNS), int(moved.sum()), p=town_p)
    new_postcode = moved & (rng.random(n) < 0.5)  # half of the movers also update the postcode
    postcode_row[new_postcode] = postcodes.draw(rng, town_row[new_postcode])

    dates = np.datetime_as_string(DOB_FIRST - 1 + np.arange(DOB_DAYS + 3), unit="D").tolist()
    three = [f"{i:03d}" for i in range(1000)]
    m = mobile[entity]
    columns = {
        "first_name": take(first_pool, first_row),
        "surname": take(sur_pool, sur_row),
        "dob": take(dates, dob_row),
        "city": take([t[0] for t in UK_TOWNS], town_row),
        "postcode": postcodes.text(postcode_row),
        "email": email.take(entity).reset_index(drop=True),
        "phone": "07"
        + take(three, m // 1_000_000)
        + " "
        + take(three, m // 1000 % 1000)
        + take(three, m % 1000),
    }
    blank = is_dup & (rng.random(n) < 0.3)
    blank_field = rng.choice(5, n, p=[0.25, 0.15, 0.2, 0.2, 0.2])
    for k, name in enumerate(["dob", "city", "postcode", "email", "phone"]):
        columns[name] = columns[name].mask(blank & (blank_field == k))

    width = max(7, len(str(n_rows)))
    rec_id = "P" + pd.Series(np.arange(1, n + 1)).astype("str").str.zfill(width)
    records = pd.DataFrame({"rec_id": rec_id, **columns})
    truth = pd.DataFrame({"rec_id": rec_id, "entity_id": entity.astype(np.int64)})
    return records, truth
