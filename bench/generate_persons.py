"""Write a synthetic benchmark person table and its truth as Parquet.

    python bench/generate_persons.py --rows 1000000 --seed 42 --out bench/data/persons_1m.parquet

writes bench/data/persons_1m.parquet (rec_id, first_name, surname, dob, city, postcode, email,
phone) and bench/data/persons_1m_truth.parquet (rec_id, entity_id) beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

try:
    from linkage.synth import persons, summary
except ImportError:  # run from a checkout without `pip install -e .`: use the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from linkage.synth import persons, summary


def truth_path(out: Path) -> Path:
    """persons_1m.parquet -> persons_1m_truth.parquet, in the same folder."""
    return out.with_name(f"{out.stem}_truth{out.suffix or '.parquet'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows (default: 1000000)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default: 42)")
    parser.add_argument(
        "--dup-rate", type=float, default=0.2, help="share of duplicate rows (default: 0.2)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("bench/data/persons_1m.parquet"),
        help="records file; the truth goes beside it as <name>_truth.parquet",
    )
    args = parser.parse_args(argv)

    start = time.perf_counter()
    records, truth = persons(args.rows, seed=args.seed, dup_rate=args.dup_rate)
    generated = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    records.to_parquet(args.out, index=False)
    truth.to_parquet(truth_path(args.out), index=False)
    facts = summary(records, truth, id_col="entity_id")
    print(
        f"wrote {args.out} and {truth_path(args.out)}: {facts['rows']} rows, "
        f"{facts['people']} entities, {facts['duplicate_pairs']} duplicate pairs "
        f"(generated in {generated:.1f} s, total {time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
