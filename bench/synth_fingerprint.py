"""Fingerprints of every synthetic generator and of recall injection, to prove a refactor kept
their output byte for byte.

Generates each generator's tables at a few seeds and sizes, and the injected copies of the
sample customers (every kind, one and two fields per copy), and prints one SHA-256 per output
(of its CSV text and dtypes) as JSON. Run it before and after a change and compare::

    python bench/synth_fingerprint.py > before.json
    ... change ...
    python bench/synth_fingerprint.py > after.json && diff before.json after.json

or against the committed fingerprints (made before `linkage/synth.py` became `linkage/synth/`):
`python bench/synth_fingerprint.py --check bench/synth_fingerprint.json` exits 1 on a difference.

`--quick` leaves out the largest tables (the 1400-people customers and their updates).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from linkage import synth  # noqa: E402


def _digest(frame: pd.DataFrame) -> str:
    text = synth.csv_text(frame) + "\n" + repr([str(t) for t in frame.dtypes])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _generators(quick: bool) -> dict[str, str]:
    out: dict[str, str] = {}

    def add(name: str, frames) -> None:
        for k, frame in enumerate(frames):
            out[f"{name}[{k}]"] = _digest(frame)

    if not quick:
        add("customers()", synth.customers())
        for day, pair in enumerate(synth.customer_updates(days=2, per_day=150), start=2):
            add(f"customer_updates(2,150)/day{day}", pair)
    add("customers(200,1)", synth.customers(n_people=200, seed=1))
    add("customers(60,9)", synth.customers(n_people=60, seed=9))
    for day, pair in enumerate(synth.customer_updates(days=2, per_day=40, n_people=80, seed=3),
                               start=2):
        add(f"customer_updates(2,40,80,3)/day{day}", pair)
    add("persons(10000)", synth.persons(10_000))
    add("persons(3000,5,0.3)", synth.persons(3000, seed=5, dup_rate=0.3))
    add("persons(7,3,0)", synth.persons(7, seed=3, dup_rate=0.0))
    for trap in synth.TRAPS:
        for rows, seed in ((2000, 3), (600, 42)):
            _mode, frames, truth = synth.traps(rows, seed=seed, trap=trap)
            add(f"traps({rows},{seed},{trap})", [*frames, truth])
    add("transactions()", synth.transactions())
    add("transactions(40,2)", synth.transactions(n_customers=40, seed=2))
    add("labelled_texts()", synth.labelled_texts())
    add("labelled_texts(300,4)", synth.labelled_texts(n=300, seed=4))
    return out


def _values() -> list[tuple[str, str]]:
    """(value, role) pairs from the sample data and a few written for the purpose."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    roles = {"name": "name", "birth_date": "date", "phone": "phone", "email": "email",
             "company": "company", "address": "text", "postcode": "postcode", "city": "text"}
    pairs = []
    for column, role in roles.items():
        pairs += [(v, role) for v in customers[column].dropna().head(150)]
    extra = ("Apt. 21D", "Smith-Jones", "a", "ab", "김", "서울특별시 강남구")
    pairs += [(v, "text") for v in extra]
    pairs += [(v, "phone") for v in ("+44 7700 900123", "(415) 555-1234", "02-123-4567")]
    pairs += [(v, "postcode") for v in ("03153", "SW1A 1AA")]
    return pairs


def _perturbations() -> dict[str, str]:
    from linkage.synth import perturb as inject

    out = {}
    pairs = _values()
    for kind in inject.KINDS:
        for order in ("DMY", "MDY", "YMD"):
            rng = np.random.default_rng([5, inject.KINDS.index(kind), len(order)])
            results = [inject.perturb(kind, v, role, rng, date_order=order) for v, role in pairs]
            out[f"perturb({kind},{order})"] = hashlib.sha256(
                repr(results).encode("utf-8")).hexdigest()[:20]
    rng = np.random.default_rng(11)
    words = [v for v, role in pairs if role in ("name", "text")]
    out["latin_typo"] = hashlib.sha256(
        repr([inject.latin_typo(w, rng) for w in words]).encode()).hexdigest()[:20]
    out["hangul_typo"] = hashlib.sha256(
        repr([inject.hangul_typo(w, rng) for w in words]).encode()).hexdigest()[:20]
    return out


def _injections() -> dict[str, str]:
    import linkage as lk
    from linkage.measure.recall import inject

    frame = lk.read(str(ROOT / "sample_data" / "customers.csv"))
    rules = lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml")
    baseline = lk.dedupe(frame, rules, progress=False)
    out = {}
    for n, fields, seed in ((120, 1, 0), (60, 2, 3)):
        injection = inject(frame, rules, n, baseline=baseline, seed=seed,
                           fields_per_copy=fields)
        out[f"inject({n},{fields},{seed})/copies"] = _digest(injection.copies)
        out[f"inject({n},{fields},{seed})/log"] = _digest(injection.log)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the largest tables")
    parser.add_argument("--no-inject", action="store_true", help="generators only")
    parser.add_argument("--check", metavar="JSON", default=None,
                        help="compare with fingerprints written before; exit 1 on a difference")
    args = parser.parse_args()
    out = _generators(args.quick)
    if not args.no_inject:
        out.update(_perturbations())
        out.update(_injections())
    if args.check is None:
        print(json.dumps(out, indent=1, sort_keys=True))
        return 0
    expected = json.loads(Path(args.check).read_text(encoding="utf-8"))
    differ = sorted(k for k in out if k in expected and expected[k] != out[k])
    for key in differ:
        print(f"differs: {key}")
    print(f"{len(out) - len(differ)} of {len(out)} outputs identical to {args.check}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
