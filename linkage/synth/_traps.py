"""`traps()`: tables that each hold one trap for zero-configuration linkage: person tables
(split birth dates, households, link columns that differ, sparse columns, numeric codes,
foreign phones) and two ledgers of payments whose memos differ at their ends."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.synth._draw import digit_text, take, zipf
from linkage.synth._persons import (
    DOB_DAYS,
    DOB_FIRST,
    N_VARIANTS,
    Postcodes,
    persons,
    surname_pool,
    with_variants,
)
from linkage.synth._vocab import (
    EN_FEMALE,
    EN_MALE,
    EN_SURNAMES,
    STREET_ABBREV,
    UK_STREETS,
    UK_SUFFIXES,
    UK_TOWNS,
)

# Each trap and whether its table is deduplicated (one frame) or linked (two frames).
TRAPS = {
    "persons": "dedupe",  # the plain generator: the scale trap (same F1 at 100k and 1M)
    "split_dates": "dedupe",  # birth date in year, month and day columns; no e-mail, phone
    "households": "dedupe",  # people of one household share surname, address and city
    "link_columns": "link",  # columns on one side only, the same field under another name
    "sparse": "dedupe",  # mostly-empty columns
    "numeric_codes": "dedupe",  # a categorical code, a row number, a stale group label
    "foreign_phones": "dedupe",  # names, birth date and phones of five countries, each in
    # national, international or E.164 form, and the country
    "all": "dedupe",  # households with every dedupe trap above at once
    "payments": "link",  # a ledger and a bank statement: the memo re-keyed at its end, the
    # date a few days later, the amount less a fee; hundreds of payments a day
}

# (region, calling code, weight): the mobile numbers traps() writes; all pass phonenumbers'
# is_valid_number in E.164 form.
_TRAP_PHONE_REGIONS = [("GB", "44", 0.3), ("US", "1", 0.25), ("KR", "82", 0.15),
                       ("DE", "49", 0.15), ("FR", "33", 0.15)]
_US_AREAS = [212, 415, 617, 312, 206, 512, 303, 503, 404, 646, 213, 720]


def _trap_phones(rng: np.random.Generator, n_ent: int, entity: np.ndarray) -> pd.DataFrame:
    """A mobile number per entity in one of five countries, each row in a random format.

    Formats: national as dialled at home, international with spaces, E.164. Copies of one
    person pick their format independently, so the same number is often written two ways.
    Returns `phone` (text per row) and `country` (ISO region per row).
    """
    p = np.array([w for _, _, w in _TRAP_PHONE_REGIONS])
    region = rng.choice(len(_TRAP_PHONE_REGIONS), n_ent, p=p / p.sum())
    a = rng.integers(0, 10_000, n_ent)  # four-digit block
    b = rng.integers(0, 10_000, n_ent)  # another four-digit block
    c = rng.integers(0, 100, n_ent)  # two digits
    r, n = region[entity], entity.size
    a4, b4, c2 = digit_text(a[entity], 4), digit_text(b[entity], 4), digit_text(c[entity], 2)
    a2b = a4.str[2:]
    b2, b2b = b4.str[:2], b4.str[2:]
    style = rng.integers(0, 3, n)  # 0 national, 1 international, 2 E.164
    # GB: 07 + 4..9 + 8 digits: 07xxx xxxxxx / +44 7xxx xxxxxx
    gb_head = "7" + take(list("45789"), a[entity] % 5) + a4.str[2:]  # 076: pagers
    gb_nat, gb_int = "0" + gb_head + " " + b4 + c2, "+44 " + gb_head + " " + b4 + c2
    gb_e164 = "+44" + gb_head + b4 + c2
    # US: area, exchange 200-999, line: (415) 555-1234 / +1 415-555-1234
    area = pd.Series(np.array(_US_AREAS)[a[entity] % len(_US_AREAS)]).astype("str")
    exch = digit_text(200 + b[entity] % 800, 3)
    line = c2 + a2b
    us_nat, us_int = "(" + area + ") " + exch + "-" + line, "+1 " + area + "-" + exch + "-" + line
    us_e164 = "+1" + area + exch + line
    # KR: 010-xxxx-xxxx
    kr_a = take(list("2346789"), a[entity] % 7) + a4.str[1:]  # 010-597x..599x are unassigned
    kr_nat, kr_int = "010-" + kr_a + "-" + b4, "+82 10-" + kr_a + "-" + b4
    kr_e164 = "+8210" + kr_a + b4
    # DE: 017x + 8 digits: 0171 23456789 / +49 171 23456789
    de_head = "17" + digit_text(a[entity] % 10, 1)
    de_rest = b4 + c2 + a2b
    de_nat, de_int, de_e164 = "0" + de_head + " " + de_rest, "+49 " + de_head + " " + de_rest, (
        "+49" + de_head + de_rest)
    # FR: 06 4x-8x xx xx xx / +33 6 xx xx xx xx
    fr = [digit_text(40 + a[entity] // 100 % 50, 2), a2b, b2, b2b]  # 0639, 069x: not mobile
    fr_nat = "06 " + fr[0] + " " + fr[1] + " " + fr[2] + " " + fr[3]
    fr_int = "+33 6 " + fr[0] + " " + fr[1] + " " + fr[2] + " " + fr[3]
    fr_e164 = "+336" + fr[0] + fr[1] + fr[2] + fr[3]
    table = [[gb_nat, gb_int, gb_e164], [us_nat, us_int, us_e164], [kr_nat, kr_int, kr_e164],
             [de_nat, de_int, de_e164], [fr_nat, fr_int, fr_e164]]
    phone = np.empty(n, dtype=object)
    for k in range(len(table)):
        for s in range(3):
            pick = (r == k) & (style == s)
            phone[pick] = table[k][s].to_numpy()[pick]
    regions = [code for code, _, _ in _TRAP_PHONE_REGIONS]
    return pd.DataFrame({"phone": pd.Series(phone, dtype="str"), "country": take(regions, r)})


def _split_dates(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Replace an ISO date column by birth_year, birth_month and birth_day number columns."""
    parts = frame[column].str.extract(r"^(\d{4})-(\d{2})-(\d{2})$")
    at = frame.columns.get_loc(column)
    out = frame.drop(columns=[column])
    for k, name in enumerate(["birth_year", "birth_month", "birth_day"]):
        values = parts[k].str.lstrip("0")  # numbers as a spreadsheet would export them
        out.insert(at + k, name, values)
    return out


def _add_sparse(frame: pd.DataFrame, entity: np.ndarray, rng: np.random.Generator) -> None:
    """Add mostly-empty columns in place: a middle name and a title that belong to the person,
    and a fax number and a note that are filled in for a few rows at random."""
    n, n_ent = entity.size, int(entity.max()) + 1
    firsts = list(dict.fromkeys(EN_MALE + EN_FEMALE))
    middle = rng.integers(0, len(firsts), n_ent)
    has_middle = rng.random(n_ent) < 0.06
    frame["middle_name"] = take(firsts, middle[entity]).mask(
        ~(has_middle[entity] & (rng.random(n) < 0.7)))
    titles = ["Dr", "Rev", "Prof", "Sir", "Dame", "Capt"]
    frame["title"] = take(titles, rng.integers(0, len(titles), n_ent)[entity]).mask(
        ~((rng.random(n_ent) < 0.03)[entity]))
    frame["fax"] = ("01" + digit_text(rng.integers(0, 1_000_000_000, n), 9)).mask(
        rng.random(n) > 0.01)
    notes = ["call back", "moved", "prefers post", "vip", "complaint 2019", "do not call"]
    frame["notes"] = take(notes, rng.integers(0, len(notes), n)).mask(rng.random(n) > 0.02)


def _add_codes(frame: pd.DataFrame, entity: np.ndarray, group: pd.Series,
               rng: np.random.Generator) -> None:
    """Add numeric-looking columns in place that must not be compared as evidence of a match:
    `row` (the row number), `branch_code` (a categorical code of 40 three-digit values, one per
    person) and `cluster` (a stale group label from an earlier, coarser grouping: `group`)."""
    n, n_ent = entity.size, int(entity.max()) + 1
    frame.insert(1, "row", pd.Series(np.arange(1, n + 1)).astype("str"))
    codes = np.sort(rng.choice(np.arange(100, 1000), 40, replace=False))
    frame["branch_code"] = digit_text(codes[rng.integers(0, 40, n_ent)][entity], 3)
    labels = pd.factorize(group)[0]
    frame["cluster"] = pd.Series(rng.permutation(labels.max() + 1)[labels]).astype("str")


def _households(n_rows: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The union of two administrative sources about the people of a town's households.

    People of one household share surname, address, city and postcode and differ in given name,
    sex and birth date. About 85% of the people are in source A and 75% in source B (everyone in
    at least one); B's copy has its own typos, abbreviations, blanks and moves.
    """
    rng = np.random.default_rng(seed)
    n_people = int(n_rows / 1.55) + 10
    sizes = rng.choice([1, 2, 3, 4, 5, 6], n_people, p=[0.28, 0.3, 0.16, 0.16, 0.07, 0.03])
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), n_people)) + 1]
    n_hh = sizes.size
    hh = np.repeat(np.arange(n_hh), sizes)
    n_people = hh.size

    males, females = list(dict.fromkeys(EN_MALE)), list(dict.fromkeys(EN_FEMALE))
    first_names, surnames = males + females, surname_pool()
    n_first, n_sur, n_real = len(first_names), len(surnames), len(dict.fromkeys(EN_SURNAMES))
    first_pool, sur_pool = with_variants(rng, first_names), with_variants(rng, surnames)
    sur_p = np.concatenate([zipf(n_real, 12.0), rng.lognormal(0.0, 0.7, n_sur - n_real)])
    sur_p[n_real:] *= sur_p[:n_real].sum() / sur_p[n_real:].sum()
    town_p = np.array([t[3] for t in UK_TOWNS], dtype=float)
    postcodes = Postcodes()

    # Households.
    surname = rng.choice(n_sur, n_hh, p=sur_p / sur_p.sum())
    town = rng.choice(len(UK_TOWNS), n_hh, p=town_p / town_p.sum())
    postcode = postcodes.draw(rng, town)
    streets = [f"{s} {x}" for s in UK_STREETS for x in UK_SUFFIXES]
    short = [f"{s} {STREET_ABBREV[x]}" for s in UK_STREETS for x in UK_SUFFIXES]
    street = rng.integers(0, len(streets), n_hh)
    number = rng.integers(1, 250, n_hh)

    # People: distinct given names within a household (redrawn where two collide).
    male = rng.random(n_people) < 0.5
    p_m, p_f = zipf(len(males), 15.0, 0.9), zipf(len(females), 15.0, 0.9)

    def draw(k: np.ndarray) -> np.ndarray:
        return np.where(male[k], rng.choice(len(males), k.size, p=p_m),
                        len(males) + rng.choice(len(females), k.size, p=p_f))

    first = draw(np.arange(n_people))
    for _ in range(5):
        clash = pd.DataFrame({"h": hh, "f": first}).duplicated().to_numpy()
        if not clash.any():
            break
        first[clash] = draw(np.flatnonzero(clash))
    dob = rng.integers(0, DOB_DAYS + 1, n_people)

    # Rows: a copy in A and/or B.
    in_a = rng.random(n_people) < 0.85
    in_b = (rng.random(n_people) < 0.75) | ~in_a
    entity = np.concatenate([np.flatnonzero(in_a), np.flatnonzero(in_b)])
    from_b = np.concatenate([np.zeros(int(in_a.sum()), bool), np.ones(int(in_b.sum()), bool)])
    order = rng.permutation(entity.size)[:n_rows]
    entity, from_b = entity[order], from_b[order]
    n = entity.size
    house = hh[entity]

    first_row, sur_row = first[entity], surname[house]
    typo_first = from_b & (rng.random(n) < 0.1)
    typo_sur = from_b & (rng.random(n) < 0.05)
    variant = rng.integers(0, N_VARIANTS, n)
    first_row = np.where(typo_first, n_first + first_row * N_VARIANTS + variant, first_row)
    sur_row = np.where(typo_sur, n_sur + sur_row * N_VARIANTS + variant, sur_row)
    days = dob[entity] + np.where(from_b & (rng.random(n) < 0.05), rng.choice([-1, 1], n), 0)
    days = np.clip(days, 0, DOB_DAYS) + 1
    dates = np.datetime_as_string(DOB_FIRST - 1 + np.arange(DOB_DAYS + 3), unit="D").tolist()

    town_row, postcode_row = town[house], postcode[house]
    street_row, number_row = street[house], number[house]
    moved = from_b & (rng.random(n) < 0.05)
    k = int(moved.sum())
    town_row[moved] = rng.choice(len(UK_TOWNS), k, p=town_p / town_p.sum())
    postcode_row[moved] = postcodes.draw(rng, town_row[moved])
    street_row[moved] = rng.integers(0, len(streets), k)
    number_row[moved] = rng.integers(1, 250, k)
    abbreviate = from_b & (rng.random(n) < 0.4)
    address = (pd.Series(number_row).astype("str") + " "
               + take(streets, street_row).where(~abbreviate, take(short, street_row)))
    columns = {
        "source": take(["A", "B"], from_b.astype(np.int64)),
        "first_name": take(first_pool, first_row),
        "surname": take(sur_pool, sur_row),
        "dob": take(dates, days),
        "sex": take(["F", "M"], male[entity].astype(np.int64)),
        "address": address,
        "city": take([t[0] for t in UK_TOWNS], town_row),
        "postcode": postcodes.text(postcode_row),
    }
    blank = from_b & (rng.random(n) < 0.1)
    blank_field = rng.integers(0, 3, n)
    for j, name in enumerate(["dob", "address", "postcode"]):
        columns[name] = columns[name].mask(blank & (blank_field == j))
    width = max(7, len(str(n)))
    rec_id = "H" + pd.Series(rng.permutation(n) + 1).astype("str").str.zfill(width)
    records = pd.DataFrame({"rec_id": rec_id, **columns})
    truth = pd.DataFrame({"rec_id": rec_id, "entity_id": entity.astype(np.int64)})
    return records, truth


def _link_columns(n_rows: int, seed: int) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Two person tables to link whose columns differ: the left has e-mail, the right phone,
    and the right names its shared fields differently and in another order."""
    records, truth = persons(n_rows, seed=seed, dup_rate=0.3)
    rng = np.random.default_rng(seed + 1)
    entity = truth["entity_id"].to_numpy()
    copy = pd.Series(entity).groupby(entity).cumcount().to_numpy()
    single = ~pd.Series(entity).duplicated(keep=False).to_numpy()
    coin = rng.random(entity.size) < 0.5
    left = ((copy == 0) & ~single) | (single & coin)
    right = (copy == 1) | (single & ~coin)
    a = records[left].drop(columns=["phone"]).reset_index(drop=True)
    b = records[right].drop(columns=["email"]).reset_index(drop=True)
    b = b.rename(columns={"rec_id": "id", "first_name": "given_name", "surname": "family_name",
                          "dob": "birth_date", "city": "town", "postcode": "post_code",
                          "phone": "mobile"})
    b["id"] = "R" + b["id"].str[1:]
    b = b[["id", "family_name", "given_name", "mobile", "post_code", "town", "birth_date"]]
    pairs = pd.DataFrame({"id_l": a["rec_id"], "e": entity[left]}).merge(
        pd.DataFrame({"id_r": b["id"], "e": entity[right]}), on="e")
    return [a, b], pairs[["id_l", "id_r"]].sort_values("id_l").reset_index(drop=True)


_PURPOSES = ["payment", "invoice", "donation", "refund", "rent", "fees", "order", "subs"]
_CHANNELS = ["BGC", "CHQ", "FPS", "DD", "SO", "BACS", "TFR", "CSH"]
_MEMO_WIDTH = (18, 15)  # each side's memo field is cut at its own width


def _payments(n_rows: int, seed: int) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Two ledgers of the same payments to link, one-to-one: the payer's side writes each
    memo as initials and surname, a purpose and a channel code; the bank's statement copies
    that narrative for half of the payments and writes its own purpose (or none) and code for
    the rest, and each side cuts the memo at its field's width. The statement's date is 0 to
    10 days later, its amount the same or less a fee of up to 5%. Payers pay several times
    (a few of them often), over 120 days: from 100,000 rows on, hundreds of payments a day."""
    rng = np.random.default_rng(seed)
    n = max(n_rows // 2, 5)
    n_payers = max(n // 3, 2)
    initials = list("ABCDEFGHJKLMNPRSTW")
    first = take(initials, rng.integers(0, len(initials), n_payers)).to_numpy()
    second = np.where(rng.random(n_payers) < 0.5,
                      " " + take(initials, rng.integers(0, len(initials), n_payers)), "")
    surnames = [w.upper() for w in surname_pool()]
    surname = take(surnames, rng.choice(len(surnames), n_payers,
                                        p=zipf(len(surnames), 50.0))).to_numpy()
    payer = rng.choice(n_payers, n, p=zipf(n_payers, 10.0))
    words = (first + second + " " + surname)[payer]

    def narrative(keep_purpose: np.ndarray) -> np.ndarray:
        purpose = take(_PURPOSES, rng.integers(0, len(_PURPOSES), n)).to_numpy()
        channel = take(_CHANNELS, rng.integers(0, len(_CHANNELS), n)).to_numpy()
        return words + np.where(keep_purpose, " " + purpose, "") + " " + channel

    told = narrative(rng.random(n) < 0.7)
    own = narrative(rng.random(n) < 0.3)
    statement = np.where(rng.random(n) < 0.5, told, own)
    day = np.datetime64("2024-01-01") + rng.integers(0, 120, n).astype("timedelta64[D]")
    lag = np.minimum(rng.geometric(0.45, n) - 1, 10).astype("timedelta64[D]")
    amount = np.round(np.exp(rng.normal(4.5, 1.3, n)), 2)
    fee = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.0, 0.05, n))
    left = pd.DataFrame({"payment_id": "P" + digit_text(rng.permutation(n), 7),
                         "memo": pd.Series(told).str.slice(0, _MEMO_WIDTH[0]),
                         "date": pd.Series(day).dt.strftime("%Y-%m-%d"),
                         "amount": amount})
    right = pd.DataFrame({"entry": "S" + digit_text(rng.permutation(n), 7),
                          "memo": pd.Series(statement).str.slice(0, _MEMO_WIDTH[1]),
                          "date": pd.Series(day + lag).dt.strftime("%Y-%m-%d"),
                          "amount": np.round(amount * (1.0 - fee), 2)})
    pairs = pd.DataFrame({"id_l": left["payment_id"], "id_r": right["entry"]})
    right = right.iloc[rng.permutation(n)].reset_index(drop=True)  # the statement's own order
    return [left, right], pairs.sort_values("id_l").reset_index(drop=True)


def traps(
    n_rows: int, seed: int = 42, trap: str = "all"
) -> tuple[str, list[pd.DataFrame], pd.DataFrame]:
    """A table of about `n_rows` rows (persons; payments for "payments") that holds one trap for
    zero-configuration linkage.

    `trap` is a key of `TRAPS`. Returns (mode, frames, truth): mode is "dedupe" or "link";
    frames holds one table (dedupe) or two (link, `n_rows` over both); truth has the id column
    and `entity_id` per row (dedupe) or the matching pairs `id_l`, `id_r` (link). The truth is
    for scoring only. Built with array operations: a million rows take seconds.
    """
    if trap not in TRAPS:
        raise ParameterError(f"unknown trap {trap!r}; one of {', '.join(TRAPS)}")
    if n_rows < 10:
        raise ParameterError(f"n_rows must be at least 10, got {n_rows}")
    if trap == "link_columns":
        frames, pairs = _link_columns(n_rows, seed)
        return "link", frames, pairs
    if trap == "payments":
        frames, pairs = _payments(n_rows, seed)
        return "link", frames, pairs
    if trap == "households" or trap == "all":
        records, truth = _households(n_rows, seed)
    else:
        records, truth = persons(n_rows, seed=seed)
    rng = np.random.default_rng(seed + 7)
    entity = truth["entity_id"].to_numpy()
    if trap in ("split_dates", "all"):
        records = _split_dates(records, "dob")
    if trap == "split_dates":  # an administrative person table: the birth date must count
        records = records.drop(columns=["email", "phone"])
    if trap in ("sparse", "all"):
        _add_sparse(records, entity, rng)
        if "email" in records:
            records["email"] = records["email"].mask(rng.random(entity.size) > 0.1)
    if trap in ("numeric_codes", "all"):
        city = records["city"] if "city" in records else pd.Series([""] * entity.size)
        # The stale label: an earlier grouping of one person's surname and town, so namesakes
        # in one town share it and a copy with a typo or a move does not.
        first_copy = pd.Series(np.arange(entity.size)).groupby(entity).transform("first")
        group = (records["surname"].take(first_copy).to_numpy().astype(str) + "|"
                 + city.take(first_copy).to_numpy().astype(str))
        _add_codes(records, entity, pd.Series(group), rng)
    if trap in ("foreign_phones", "all"):
        phones = _trap_phones(rng, int(entity.max()) + 1, entity)
        gone = ["email", "phone"] + (["city", "postcode"] if trap == "foreign_phones" else [])
        records = records.drop(columns=[c for c in gone if c in records])
        records["phone"] = phones["phone"].mask(rng.random(entity.size) < 0.05)
        records["country"] = phones["country"]
    return "dedupe", [records], truth
