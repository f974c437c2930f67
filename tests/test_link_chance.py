"""A link where some records have only the field that is also their blocking key (issue 14).

Two catalogues hold people, known only by a full name, and works (title, year, number). Every
candidate pair of two people was proposed by the name key, so among candidates a pair that has
a name agrees on it exactly, match or not: EM learns m = u = 1 there and a person pair scores
the prior alone (no person was linked before the fix). Outside the candidates the data say
more: the catalogues agree on a name far more often across than a catalogue does within
itself, and that excess is the matches (`linkage.pipeline.chance_agreement`, the scorer's
`chance_floor`). The truth stays in the test; it only scores.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from linkage.pipeline import chance_agreement
from linkage.settings import Rules
from tests.conftest import run_cli

_SYLLABLES = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "an", "is", "bri", "mar", "tin",
              "el", "ro", "na", "gus", "fe", "li", "da"]
_WORDS = ["night", "house", "river", "return", "chapter", "storm", "the", "last", "one", "city",
          "dream", "fire", "song", "road", "winter", "home"]


def _catalogues(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, set, set]:
    """(left, right, true links, true links of people)."""
    rng = np.random.default_rng(seed)

    def word(n: int) -> str:
        return "".join(rng.choice(_SYLLABLES, n)).capitalize()

    first = list(dict.fromkeys(word(2) for _ in range(2000)))[:300]
    last = list(dict.fromkeys(word(3) for _ in range(2000)))[:600]
    people = [f"{rng.choice(first)} {rng.choice(last)}" for _ in range(1200)]
    works = [(" ".join(rng.choice(_WORDS, rng.integers(1, 4))).capitalize(),
              str(rng.integers(1950, 2021)), str(rng.integers(1, 25))) for _ in range(900)]
    left, right, truth = [], [], []
    for i, name in enumerate(people[:800]):  # 500 of these 800 are also on the right
        left.append({"id": f"L{len(left)}", "name": name})
        if i < 500:
            right.append({"id": f"R{len(right)}", "name": name})
            truth.append((left[-1]["id"], right[-1]["id"]))
    right += [{"id": f"R{len(right) + i}", "name": n} for i, n in enumerate(people[800:])]
    persons = set(truth)
    for i, (title, year, number) in enumerate(works[:600]):
        left.append({"id": f"L{len(left)}", "title": title, "year": year, "number": number})
        if i < 400:
            right.append({"id": f"R{len(right)}", "title": title, "year": year,
                          "number": number})
            truth.append((left[-1]["id"], right[-1]["id"]))
    right += [{"id": f"R{len(right) + i}", "title": t, "year": y, "number": n}
              for i, (t, y, n) in enumerate(works[600:])]
    shuffle = np.random.default_rng(seed + 1)
    a, b = (pd.DataFrame(x).iloc[shuffle.permutation(len(x))].reset_index(drop=True)
            for x in (left, right))
    return a, b, set(truth), persons


def test_people_known_only_by_their_blocked_name_are_linked(tmp_path):
    left, right, truth, persons = _catalogues()
    files = [tmp_path / "left.csv", tmp_path / "right.csv"]
    left.to_csv(files[0], index=False)
    right.to_csv(files[1], index=False)
    out = tmp_path / "run"
    done = run_cli("link", *files, "--out", out, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    links = pd.read_parquet(out / "links.parquet")
    found = set(zip(links["id_l"].astype(str), links["id_r"].astype(str), strict=True))
    assert len(found & persons) >= 0.95 * len(persons)
    p, r = len(found & truth) / len(found), len(found & truth) / len(truth)
    assert 2 * p * r / (p + r) >= 0.85  # the target for imdb_tmdb, built for its trap
    model = json.loads((out / "model.json").read_text(encoding="utf-8"))
    floors = {f["comparison"]: f for f in model["diagnostics"]["chance_floor"]}
    assert "name" in floors and floors["name"]["weight"] > floors["name"]["weight_before"]


def test_chance_explains_agreement_on_independent_values_but_not_on_shared_entities():
    rng = np.random.default_rng(1)
    n = 2000
    names = np.array([f"n{i}" for i in rng.permutation(10**6)[:n]], dtype=object)
    city = rng.choice([f"c{i}" for i in range(40)], 2 * n).astype(object)
    work = {"name": np.concatenate([names, names[:800],   # 800 entities on both sides
                                    np.array([f"m{i}" for i in range(n - 800)], dtype=object)]),
            "city": city}  # drawn independently for every record: agreement is chance
    work["name"][5] = None  # missing values are not counted
    rules = Rules.from_dict({"blocking": [{"type": "keys", "keys": [["name"]]}], "comparisons": [
        {"type": "jaro_winkler", "column": "name", "thresholds": [0.9]},
        {"type": "exact", "column": "city"}], "scoring": {"type": "fellegi_sunter"}})
    chance = chance_agreement(rules.comparisons, work, [n, n])
    cross, by_chance = chance["name"]
    assert cross == 799 and by_chance < 10
    cross, by_chance = chance["city"]
    # all the cross agreement is chance (within the noise the scorer allows for)
    assert cross - by_chance < 3 * np.sqrt(by_chance + 1)
