"""Profiling from values first, column names second (issue 14, item 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.errors import RulesError
from linkage.profiling import profile_column, profile_table
from linkage.suggest import suggest_rules
from tests.conftest import run_cli

_GIVEN = ["anna", "ben", "carla", "dmitri", "emma", "farid", "greta", "hiro", "ines", "jonas",
          "kim", "lena", "marco", "nora", "omar", "paula", "quinn", "rosa", "sven", "tara"]
_SURNAMES = ["smith", "garcia", "mueller", "kowalski", "rossi", "dubois", "novak", "jensen",
             "silva", "tanaka", "kuznetsov", "olsen", "murphy", "schmidt", "lopez", "costa",
             "nagy", "horvat", "berg", "moreau", "fischer", "weber", "wagner", "becker"]


def _people(n: int, seed: int = 0) -> pd.DataFrame:
    """Persons with a birth date split in year, month and day, each twice (one with a typo)."""
    rng = np.random.default_rng(seed)
    base = pd.DataFrame({
        "given": rng.choice(_GIVEN, n), "surname": rng.choice(_SURNAMES, n),
        "year": rng.integers(1930, 2005, n), "month": rng.integers(1, 13, n),
        "day": rng.integers(1, 29, n),
    })
    copy = base.copy()
    typo = rng.random(n) < 0.3
    copy.loc[typo, "surname"] = copy.loc[typo, "surname"].str[:-1] + "x"
    frame = pd.concat([base, copy], ignore_index=True)
    frame.insert(0, "row", np.arange(len(frame)))
    frame["source"] = "registry"
    return frame


def test_split_date_parts_are_one_date():
    frame = _people(400)
    kinds = {p.column: p.kind for p in profile_table(frame)}
    assert (kinds["year"], kinds["month"], kinds["day"]) == ("year", "month", "day")
    rules = suggest_rules([frame]).rules
    steps = [s for s in rules["normalize"] if s["type"] == "date_parts"]
    assert steps == [{"column": "year", "type": "date_parts", "month": "month", "day": "day",
                      "output": "date_from_parts"}]
    compared = {c["column"]: c["type"] for c in rules["comparisons"]}
    assert compared.get("date_from_parts") == "date"
    assert not {"year", "month", "day"} & set(compared)
    text = lk.Rules.from_dict(rules).to_yaml()
    assert lk.Rules.from_dict(yaml.safe_load(text)).to_dict() == lk.Rules.from_dict(rules).to_dict()
    result = lk.dedupe(frame, lk.Rules.from_dict(rules), progress=False)
    assert result.summary_data["stages"]["normalize"]["date_from_parts"]["missing"] == 0
    cluster = result.clusters.set_index("row")["cluster_id"]
    together = np.mean([cluster[k] == cluster[k + 400] for k in range(400)])
    assert together > 0.95, together


def test_row_numbers_constants_and_group_labels_are_not_compared():
    frame = _people(300, seed=1)
    rng = np.random.default_rng(2)
    frame["cluster"] = np.concatenate([np.arange(300), np.arange(300)])  # labels of pairs
    frame["wikidata"] = ["Q" + str(v) for v in rng.integers(10**6, 10**7, 300)] * 2
    profiles = {p.column: p for p in profile_table(frame)}
    assert profiles["row"].kind == "row_number" and not profiles["row"].compare
    assert profiles["source"].kind == "constant" and not profiles["source"].compare
    for column in ("cluster", "wikidata"):
        assert not profiles[column].compare, profiles[column]
    compared = {c["column"] for c in suggest_rules([frame]).rules["comparisons"]}
    assert not {"row", "source", "cluster", "wikidata"} & compared


def test_codes_with_typos_are_identifiers_not_labels():
    rng = np.random.default_rng(3)
    codes = [str(v) for v in rng.integers(10**6, 10**7, 2000)]
    typed = codes + [c[:3] + str((int(c[3]) + 1) % 10) + c[4:] if k % 2 else c
                     for k, c in enumerate(codes[:1000])]
    p = profile_column("x", pd.Series(typed))
    assert p.kind == "id" and p.compare and p.identifying, p


def test_phone_numbers_of_several_countries():
    for values in (["+1 415 555 2671", "(212) 555-0199", "415-555-0134", "+1 650 253 0000"],
                   ["020 7946 0958", "+44 20 7946 0000", "0161 496 0123", "0113 496 0000"],
                   ["010-1234-5678", "+82 10 9999 0000", "02-123-4567", "031-123-4567"],
                   ["+49 30 901820", "030 12345678", "+49 89 636 48018", "089 1234567"]):
        profile = profile_column("c7", pd.Series(values * 10))
        assert profile.kind == "phone" and profile.identifying, (values, profile)


def test_column_names_only_break_ties():
    emails = pd.Series(["kim@example.kr", "lee@example.com", "park@mail.net"] * 20)
    assert profile_column("이름", emails).kind == "email"  # the values win over the name
    dates = pd.Series(["1990-03-05", "1985-12-01", "2001-07-30"] * 20)
    assert profile_column("전화", dates).kind == "date"
    rng = np.random.default_rng(4)
    hangul = pd.Series(["".join(rng.choice(list("김이박최정민수영희지훈서연"), 3))
                        for _ in range(300)])
    assert profile_column("c3", hangul).kind == profile_column("성명", hangul).kind \
        == "hangul_name"
    places = pd.Series([f"{a} {b}" for a, b in zip(rng.choice(_GIVEN, 300),
                                                   rng.choice(_SURNAMES, 300), strict=True)])
    frame = pd.DataFrame({"주소": places, "c9": places})
    kinds = {p.column: p.kind for p in profile_table(frame)}
    assert kinds["주소"] == "address" and kinds["c9"] != "address"  # a tie the name breaks


def _neutral(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, dict[str, str]]:
    order = np.random.default_rng(seed).permutation(len(frame.columns))
    columns = [frame.columns[i] for i in order]
    names = {c: f"c{k + 1}" for k, c in enumerate(columns)}
    return frame[columns].rename(columns=names), names


def test_neutral_shuffled_names_give_the_same_roles(datasets):
    historical = pd.read_parquet(
        datasets / "splink" / "historical_figures_with_errors_50k.parquet").drop(
        columns=["cluster"]).head(5_000)
    neutral, names = _neutral(historical, 7)
    named = {p.column: p.kind for p in profile_table(historical)}
    renamed = {p.column: p.kind for p in profile_table(neutral)}
    assert {c: renamed[names[c]] for c in named} == named
    assert named["first_name"] == "given_name" and named["surname"] == "surname"
    assert named["dob"] == "date" and named["unique_id"] == "id"

    febrl = pd.read_csv(datasets / "febrl" / "dataset3.csv", dtype=str, skipinitialspace=True)
    neutral, names = _neutral(febrl, 8)
    a, b = suggest_rules([febrl]).rules, suggest_rules([neutral]).rules
    assert names[a["id_column"]] == b["id_column"] == names["rec_id"]
    compared = {names[c["column"]]: c["type"] for c in a["comparisons"]}
    # The name breaks one tie in febrl: address_1 and address_2 hold short words, compared
    # as text under their own names; every other column is compared alike.
    differ = {names["address_1"], names["address_2"]}
    assert {k: v for k, v in compared.items() if k not in differ} == {
        c["column"]: c["type"] for c in b["comparisons"] if c["column"] not in differ}


def test_link_with_a_one_sided_and_a_renamed_column_runs(tmp_path):
    people = _people(200, seed=5).drop(columns=["row", "source"])
    people["email"] = [f"{g}.{s}{k}@example.org" for k, (g, s) in
                       enumerate(zip(people["given"], people["surname"], strict=True))]
    left = people.iloc[:200].assign(id=[f"L{k}" for k in range(200)], note="x")
    right = people.iloc[200:].rename(columns={"surname": "family"}).assign(
        id=[f"R{k}" for k in range(200)], shoe=np.arange(200) % 7)
    left.drop(columns=["note"]).to_csv(tmp_path / "a.csv", index=False)
    right.to_csv(tmp_path / "b.csv", index=False)
    rules = suggest_rules([pd.read_csv(tmp_path / "a.csv"),
                           pd.read_csv(tmp_path / "b.csv")]).rules
    assert rules["rename_right"] == {"family": "surname"}
    assert "shoe" not in {c["column"] for c in rules["comparisons"]}
    done = run_cli("link", tmp_path / "a.csv", tmp_path / "b.csv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((tmp_path / "out" / "rules.yaml").read_text())
    assert written["rename_right"] == {"family": "surname"}
    links = pd.read_parquet(tmp_path / "out" / "links.parquet")
    right_of = {f"L{k}": f"R{k}" for k in range(200)}
    found = sum(right_of[a] == b for a, b in zip(links["id_l"], links["id_r"], strict=True))
    assert found >= 180, found


def test_imdb_tmdb_links_with_suggested_rules(tmp_path, datasets):
    folder = datasets / "jedai" / "imdb_tmdb"
    done = run_cli("link", folder / "imdb.csv", folder / "tmdb.csv", "--sep", "|",
                   "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr


def test_a_date_parts_step_without_its_columns_is_bad_input(tmp_path):
    frame = _people(50)
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "rules.yaml").write_text(
        "normalize:\n- {column: year, type: date_parts, day: day, output: born}\n"
        "blocking:\n- {keys: [[surname]]}\ncomparisons:\n- {type: date, column: born}\n")
    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", tmp_path / "rules.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 2 and "month" in done.stderr, done.stderr


# ------------------------------------------------------------------------------------------
# Phones of several countries in one column (round 2)
# ------------------------------------------------------------------------------------------

_MIXED = pd.DataFrame({
    "tel": ["07858 439895", "+44 7858 439895", "06 88 11 54 84", "+33 6 88 11 54 84",
            "(404) 418-8768", "+1 404-418-8768", "0177 46548647", "0049 177 46548647",
            "010-9242-3321", "+82 10 9242 3321", None, "07445 903432"],
    "land": ["GB", "UK", "France", "FR", "US", "us", "DE", "Germany", "KR", "대한민국", "GB",
             None],
})


def test_each_national_number_is_read_in_its_records_country():
    from linkage.normalize import normalize_phone
    from linkage.settings import Normalize

    step = Normalize("tel", "phone", country="GB", region_column="land")
    assert step.inputs == ["tel", "land"]
    work = {c: _MIXED[c].to_numpy(dtype=object) for c in _MIXED}
    out = step.apply(pd.Series(step.joined(work), dtype=object)).tolist()
    # A number and the same number written internationally are one value.
    assert out[0::2][:5] == out[1::2][:5], out
    assert out[:10:2] == ["+447858439895", "+33688115484", "+14044188768", "+4917746548647",
                          "+821092423321"], out
    assert out[10] is None  # no number: missing, whatever the country
    assert out[11] == "+447445903432"  # no country: the column's region
    # Without a column of countries, one region for all; + and 00 are international anyway.
    alone = normalize_phone(_MIXED["tel"], country="GB").tolist()
    assert alone[0] == alone[1] == "+447858439895" and alone[7] == "+4917746548647"
    assert normalize_phone(_MIXED["tel"], country=None).tolist()[0] == "07858439895"


def test_phone_region_column_in_yaml_rules_validates(tmp_path):
    (tmp_path / "r.yaml").write_text(
        "normalize:\n- {column: tel, type: phone, country: GB, region_column: land}\n"
        "blocking:\n- {keys: [[tel]]}\ncomparisons:\n- {type: exact, column: tel}\n")
    rules = lk.Rules.from_yaml(tmp_path / "r.yaml")
    assert rules.normalize[0].inputs == ["tel", "land"]
    assert "region_column: land" in rules.to_yaml()
    (tmp_path / "bad.yaml").write_text("normalize:\n- {column: tel, type: phone, country: XX}\n"
                           "blocking:\n- {keys: [[tel]]}\ncomparisons:\n"
                           "- {type: exact, column: tel}\n")
    with pytest.raises(RulesError, match="region code"):
        lk.Rules.from_yaml(tmp_path / "bad.yaml")


def test_suggest_reads_phones_in_the_country_a_column_gives():
    from linkage import synth

    _, (records,), _ = synth.traps(600, seed=3, trap="foreign_phones")
    step = next(s for s in suggest_rules([records]).rules["normalize"]
                if s["column"] == "phone")
    assert step["region_column"] == "country", step
    # The same countries under a neutral name, as names: found by their values.
    names = {"GB": "United Kingdom", "US": "United States", "KR": "South Korea",
             "DE": "Germany", "FR": "France"}
    neutral = records.rename(columns={"country": "c9"}).assign(
        c9=records["country"].map(names))
    step = next(s for s in suggest_rules([neutral]).rules["normalize"]
                if s["column"] == "phone")
    assert step["region_column"] == "c9", step
    # One country: no column of countries to read, one region.
    one = pd.DataFrame({"tel": ["07858 439895", "+44 7858 439895", "07445 903432",
                                "020 7946 0958"] * 30, "n": [f"x{k}" for k in range(120)]})
    step = next(s for s in suggest_rules([one]).rules["normalize"] if s["column"] == "tel")
    assert step == {"column": "tel", "type": "phone", "country": "GB"}, step


def test_lists_of_a_few_labels_are_a_category_not_a_name():
    rng = np.random.default_rng(0)
    genres = ["Comedy", "Drama", "Crime", "Mystery", "Romance", "Western", "Horror", "Sport"]
    values = [",".join(sorted(rng.choice(genres, rng.integers(1, 4), replace=False)))
              for _ in range(400)]
    profile = profile_column("c3", pd.Series(values))
    assert profile.kind == "category" and not profile.identifying, profile
    # Names written "surname, given": as many words as people, still names.
    syllables = ["ka", "ro", "mi", "tel", "san", "bo", "ri", "lu", "den", "var"]
    surname = ["".join(rng.choice(syllables, 3)).title() for _ in range(400)]
    names = pd.Series([f"{s}, {g.title()}" for s, g in zip(surname, rng.choice(_GIVEN, 400),
                                                              strict=True)])
    assert profile_column("c4", names).kind != "category"


def test_numbered_columns_pair_by_their_values_not_their_numbers(tmp_path):
    """Both tables' columns numbered c1, c2 ... in each one's own order: a number shared by
    two fields (a date on one side, free text on the other) is two fields, and each pairs with
    the column that holds its values."""
    people = _people(200, seed=5)
    born = (people["year"].astype(str) + "-" + people["month"].astype(str).str.zfill(2) + "-"
            + people["day"].astype(str).str.zfill(2))
    rng = np.random.default_rng(1)
    words = np.array(["blue", "house", "river", "quiet", "morning", "paper", "stone", "lamp"])
    notes = [" ".join(rng.choice(words, 6)) for _ in range(200)]
    left = pd.DataFrame({"c1": [f"L{k}" for k in range(200)], "c2": people["surname"][:200],
                         "c3": born[:200], "c4": people["given"][:200]})
    right = pd.DataFrame({"c1": [f"R{k}" for k in range(200)],
                          "c2": people["surname"][200:].to_numpy(), "c3": notes,
                          "c4": people["given"][200:].to_numpy(),
                          "c5": born[200:].to_numpy()})
    left.to_csv(tmp_path / "a.csv", index=False)
    right.to_csv(tmp_path / "b.csv", index=False)
    rules = suggest_rules([left, right]).rules
    assert rules["rename_right"] == {"c5": "c3", "c3": "c3 (right)"}, rules["rename_right"]
    compared = {c["column"]: c["type"] for c in rules["comparisons"]}
    assert compared.get("c3") == "date" and "c3 (right)" not in compared, compared
    done = run_cli("link", tmp_path / "a.csv", tmp_path / "b.csv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    links = pd.read_parquet(tmp_path / "out" / "links.parquet")
    found = sum(a[1:] == b[1:] for a, b in zip(links["id_l"], links["id_r"], strict=True))
    assert found >= 180, found


def test_years_pair_by_how_often_each_year_comes_not_by_the_years_alone():
    """Years of release and years of death share their values; their shares tell them apart."""
    from linkage.profiling import pair_columns

    rng = np.random.default_rng(2)
    released = rng.normal(1990, 15, 3000).astype(int).clip(1920, 2020).astype(str)
    died = rng.normal(1975, 20, 3000).astype(int).clip(1920, 2020).astype(str)
    left = pd.DataFrame({"a": [f"{y}-01-01" for y in died[:1500]],
                         "b": [f"{y}-01-01" for y in released[:1500]]})
    right = pd.DataFrame({"x": [f"{y}-01-01" for y in released[1500:]]})
    pairs = pair_columns(left, right, profile_table(left), profile_table(right))
    assert [(a, b) for a, b, _ in pairs] == [("b", "x")], pairs


def test_country_names_come_from_phonenumbers_public_geocoder():
    """Country names (for a column of countries beside phones) in several languages, from
    phonenumbers' public API; codes and the everyday alias UK name regions too."""
    from linkage.normalize._phone import region_code

    assert region_code("Germany") == "DE" and region_code("Deutschland") == "DE"
    assert region_code("대한민국") == "KR" and region_code(" united kingdom. ") == "GB"
    assert region_code("uk") == "GB" and region_code("BL") == "BL"
    assert region_code("Atlantis") is None and region_code(None) is None


def test_birth_dates_pair_by_month_however_few_partners_a_sample_holds():
    """Two large tables of people: more people than days in their birth years, so a birth
    date repeats (under half the values distinct, no near copy), and the rows profiling reads
    of each hold few records of the same people, so the two share each date far less often
    than chance and duplicates together would make them at a small size; their dates fall in
    the same months as often. A date of death, of other months and years, stays apart."""
    from linkage.profiling import pair_columns

    rng = np.random.default_rng(5)

    def births(n):
        return pd.Series(pd.Timestamp("1935-01-01")
                         + pd.to_timedelta(rng.integers(0, 72 * 365, n), unit="D"))

    n = 60_000
    left = pd.DataFrame({"dob": births(n).dt.strftime("%Y-%m-%d"),
                         "died": (pd.Timestamp("1990-01-01") + pd.to_timedelta(
                             rng.integers(0, 30 * 365, n), unit="D")).strftime("%d/%m/%Y")})
    right = pd.DataFrame({"birth_date": births(n).dt.strftime("%d/%m/%Y")})
    pairs = pair_columns(left, right, profile_table(left), profile_table(right))
    assert [(a, b) for a, b, _ in pairs] == [("dob", "birth_date")], pairs


def test_emails_and_phones_under_other_names_pair_by_the_values_they_share():
    """Two customer tables that share a third of their people: e-mails and phones are
    near-unique, written in other cases and formats, under other names on each side. They
    pair by the share of one side's values that the other side holds anywhere (a sample of
    each would hold few of the same people); e-mails of other people never pair."""
    from linkage.profiling import pair_columns

    rng = np.random.default_rng(7)
    n = 60_000
    ids = rng.permutation(3 * n)
    left_ids, right_ids = ids[:n], rng.permutation(np.r_[ids[:n // 3], ids[n:n + 2 * n // 3]])
    others = ids[2 * n:]
    left = pd.DataFrame({"email": [f"user{i}@mail{i % 7}.com" for i in left_ids],
                         "phone": [f"+44 7{i:09d}" for i in left_ids]})
    right = pd.DataFrame({"mail_address": [f"User{i}@Mail{i % 7}.com" for i in right_ids],
                          "tel": [f"07{i:09d}" for i in right_ids],
                          "referrer_email": [f"user{i}@mail{i % 7}.com" for i in others]})
    pairs = pair_columns(left, right, profile_table(left), profile_table(right))
    assert sorted((a, b) for a, b, _ in pairs) == [("email", "mail_address"), ("phone", "tel")]
    assert all(0.25 <= score <= 0.4 for _, _, score in pairs), pairs


class _Unread:
    """A cell that fails the test when its text is read: a large table holds it in every row
    that profiling's sample leaves out."""

    def __str__(self):
        raise AssertionError("a row outside the sample was read")

    __repr__ = __str__


def _poisoned(values: pd.DataFrame, n: int, rows: np.ndarray) -> pd.DataFrame:
    """`n` rows of unreadable cells, with `values`' rows at `rows`."""
    columns = {}
    for c in values.columns:
        column = np.empty(n, dtype=object)
        column[:] = [_Unread()] * n
        column[rows] = values[c].astype(object).to_numpy()
        columns[c] = column
    return pd.DataFrame(columns)


def test_a_large_table_is_profiled_on_a_bounded_sample_of_its_rows():
    """Suggesting rules on 1M or 10M records reads a bounded sample where a sample answers
    (issue 18): profiling and the text statistics read only their seeded sample of rows, so
    a table whose other rows cannot be read gets the roles its sampled rows give."""
    from linkage.profiling import _ROWS, sample_rows
    from linkage.suggest_text import _ROWS as TEXT_ROWS
    from linkage.suggest_text import text_stats
    from linkage.synth import traps

    n = 150_000
    _, (persons,), _ = traps(_ROWS, seed=3, trap="persons")
    persons = persons.iloc[:_ROWS].reset_index(drop=True)
    rows = sample_rows(n, _ROWS)
    assert len(rows) == _ROWS and len(sample_rows(n, _ROWS)) < n
    large = _poisoned(persons, n, rows)
    kinds = {p.column: p.kind for p in profile_table(large)}
    assert kinds == {p.column: p.kind for p in profile_table(persons)}
    assert kinds["email"] == "email" and kinds["dob"] == "date"

    titles = pd.Series([f"steel pan model {k % 997} x{k % 13}" for k in range(TEXT_ROWS)])
    text = _poisoned(pd.DataFrame({"t": titles}), n, sample_rows(n, TEXT_ROWS))["t"]
    stats = text_stats(text)
    assert stats.filled == 1.0 and stats.tokens == pytest.approx(5.0)


@pytest.mark.filterwarnings("ignore:This pattern is interpreted as a regular expression")
def test_profile_shares_over_distinct_values_are_the_row_shares():
    """Profiling tests each distinct value of a sample once (`_Rows`) and weights it by its
    rows: every share and mean is the very number `Series.str` gives over the rows, whichever
    engine pandas picks for the column (Arrow's for ASCII text, Python's `re` otherwise) and
    for odd white space, non-ASCII digits and letters whose upper case differs by engine."""
    from linkage import profiling as p

    rng = np.random.default_rng(7)
    ascii_chars = list("abcXYZ019 -.+()@,;|_'&\t")
    odd_chars = [*ascii_chars, "\v", "\x1c", "\xa0", "\u2028", "\n", "ß", "é", "김", "ﬁ", "１",
                 "٣", "İ", "K"]
    patterns = [p._EMAIL, p._INTEGER, p._NUMBER, p._PHONE_CHARS, p._NAME_CHARS, p._LEGAL_FORM,
                r"[\s\-().+]", r"[,;|]", r"\s", r"\d", r"[A-Za-z]", r"\D"]
    assert {(how, getattr(q, "pattern", q)) for how, q in p._RE2} <= \
        {(how, getattr(q, "pattern", q)) for how in ("search", "match", "fullmatch")
         for q in [*patterns, p._POSTCODE]}
    for trial in range(60):
        chars = ascii_chars if trial % 2 else odd_chars
        pool = ["".join(rng.choice(chars, rng.integers(1, 12)))
                for _ in range(rng.integers(5, 400))]
        pool += ["1990", "+44 20 7946 0958", "anna@x.org", "Acme Ltd", "SW1A 1AA", "3.5e2",
                 "ACME LTD.", "x (gmbh)", "Foo,Inc", "kk", "a\x0bb@c.d", "a@b.c\n", "Anna-Marie",
                 "O'Neil, Jo & Co.", "a\x1cb", "1\n", "AB1\x0b2CD", "(0)20 7946-0958", "-.5E+3",
                 "Inc and Sons", "co op", "ltd. x"]
        weights = 1 / np.arange(1, len(pool) + 1) ** rng.uniform(0, 1.5)
        values = rng.choice(pool, int(rng.integers(50, 3000)), p=weights / weights.sum())
        for dtype in (object, "str"):
            sample = pd.Series(values, dtype=dtype)
            rows = p._Rows(sample)
            for pattern in patterns:
                for how, mine in (("contains", rows.search), ("match", rows.match),
                                  ("fullmatch", rows.fullmatch)):
                    expected = p._share(getattr(sample.str, how)(pattern))
                    assert rows.share(mine(pattern)) == expected, (how, pattern, dtype)
            assert rows.share(~rows.search(r"\s")) == p._share(~sample.str.contains(r"\s"))
            assert rows.mean(rows.words()) == sample.str.split().str.len().mean()
            assert rows.mean(rows.lengths()) == sample.str.len().mean()
            lengths = rows.unspaced_lengths()
            assert rows.share((lengths >= 2) & (lengths <= 5)) == \
                sample.str.replace(r"\s", "", regex=True).str.len().between(2, 5).mean()
            digits = rows.digits()
            assert rows.mean(digits) == \
                sample.str.replace(r"\D", "", regex=True).str.len().mean()
            phoney = rows.fullmatch(p._PHONE_CHARS) & (digits >= 7) & (digits <= 15)
            expected = sample.str.fullmatch(p._PHONE_CHARS) & \
                sample.str.replace(r"\D", "", regex=True).str.len().between(7, 15)
            assert rows.share(phoney) == p._share(expected)
            assert rows.at_rows(phoney).tolist() == sample[expected].tolist()
            assert rows.share(rows.starts_with("0")) == \
                p._share(sample.str.startswith("0"))
            assert rows.share(rows.hangul()) == p._share(sample.map(p.has_hangul))
            assert rows.share(rows.upper().fullmatch(p._POSTCODE)) == \
                p._share(sample.str.upper().str.fullmatch(p._POSTCODE))
            counts = sample.value_counts()
            assert p._count_share(counts, p._INTEGER) == \
                sample.str.fullmatch(p._INTEGER).mean()


def test_present_reads_arrow_text_as_text_read_back():
    """`_present` takes a column of Arrow strings as it is: the same values, dtype and index
    as reading it as Python text and back."""
    from linkage.io import as_text
    from linkage.profiling import _present

    values = pd.Series([" a ", None, "", "  ", "b\x0b", "\xa0c", "김", np.nan, "d"] * 3,
                       dtype="str", index=range(5, 32))
    old = pd.Series(as_text(values), dtype=object).dropna().astype(str).str.strip()
    old = old[old != ""].reset_index(drop=True)
    pd.testing.assert_series_equal(_present(values), old)


def test_words_of_ascii_text_are_the_runs_str_split_finds():
    """Words of ASCII text counted by their bytes (`_words_of_ascii`): `len(v.split())` for
    each value, with empty values, white space at either end or alone, the separators \\x1c to
    \\x1f, values whose first byte ends a word of the value before, and sliced arrays."""
    import pyarrow as pa

    from linkage.profiling import _words_of_ascii

    rng = np.random.default_rng(4)
    chars = list("ab \t\x0b\x1c\x1f\r.-")
    for _ in range(40):
        values = ["".join(rng.choice(chars, int(rng.integers(0, 8))))
                  for _ in range(int(rng.integers(1, 60)))]
        for array in (pa.array(values), pa.array(values, pa.large_string())):
            for start in (0, len(values) // 2):
                piece = array.slice(start)
                expected = [len(v.split()) for v in values[start:]]
                assert _words_of_ascii(piece).to_pylist() == expected
    assert _words_of_ascii(pa.array(["", ""])).to_pylist() == [0, 0]
    assert _words_of_ascii(pa.array([], pa.string())).to_pylist() == []


def test_text_of_some_rows_is_the_whole_columns_text_at_those_rows():
    """`_text_at` writes only the sampled rows of text, object and float columns (`as_text`
    writes those one value at a time), and the whole column of others: the same text as
    `as_text(values)[rows]`; words per row are each text's words, read once per text."""
    import re

    from linkage.io import as_text
    from linkage.profiling import _text_at, _words

    rng = np.random.default_rng(1)
    columns = [
        pd.Series([1.0, 2.5, np.nan, 1e20, -0.0, 19651013.0, 0.1, 1e-7, np.inf] * 30),
        pd.Series(["Ann Lee", None, "b_c  d", "", "Émile  O'Neil"] * 40, dtype="str"),
        pd.Series([1, "x y", None, 2.0, True, b"q"] * 20, dtype=object),
        pd.Series(pd.to_datetime(["2020-01-01", None, "2020-01-02 10:00"] * 20,
                                 format="mixed")),
        pd.Series(["x", None] * 20, dtype="string"), pd.Series([1, None, 3] * 20, dtype="Int64"),
        pd.Series([1.5, None] * 20, dtype="Float64"),
        pd.Series(np.arange(50, dtype=np.float32) / 3),
    ]
    tokens = re.compile(r"[^\W_]+")
    for values in columns:
        rows = np.sort(rng.choice(len(values), len(values) // 3, replace=False))
        text = as_text(values)[rows]
        assert _text_at(values, rows).tolist() == text.tolist(), values.dtype
        assert _words(values, rows) == [
            frozenset(tokens.findall(str(v).lower())) if v is not None and v == v else None
            for v in text]
