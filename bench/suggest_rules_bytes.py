"""Every suggested rules file of a fixed set of tables, written to a folder: run it on two
checkouts and diff the folders to show that a change to suggesting rules changed no rule.

    PYTHONPATH=. python bench/suggest_rules_bytes.py --out /tmp/rules_after
    PYTHONPATH=/work/main python bench/suggest_rules_bytes.py --out /tmp/rules_before
    diff -r /tmp/rules_before /tmp/rules_after

Tables: the bundled samples (customers, households, transactions, labelled_text, link_left with
link_right); every data set of ../shared/datasets that bench/generalization.py reads, named and
with neutral shuffled columns; the trap tables of `linkage.synth.traps` (seed 42, as
bench/generalization.py builds them) at each of --sizes; and the persons table of
bench/suggest_share.py (`traps(rows, seed=2, trap="persons")`) at --persons rows (0: none).
Each table is read as `linkage suggest` reads it (`linkage.io.read` of a CSV or Parquet file);
each file is `Suggestion.to_yaml()`, the profiles' and keys' comments included. The time of each
suggestion is printed (not written: the files hold no time).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLES = {
    "customers": ["customers.csv"],
    "households": ["households.csv"],
    "transactions": ["transactions.csv"],
    "labelled_text": ["labelled_text.csv"],
    "link": ["link_left.csv", "link_right.csv"],
}


def _suggest(name: str, paths: list[Path], out: Path) -> None:
    from linkage.io import read
    from linkage.suggest import suggest_rules

    frames = [read(p) for p in paths]
    start = time.perf_counter()
    text = suggest_rules(frames).to_yaml()
    print(f"{name:40s} {time.perf_counter() - start:6.2f} s", flush=True)
    (out / f"{name}.yaml").write_text(text, encoding="utf-8")


def _parquet(frames, work: Path, name: str) -> list[Path]:
    paths = []
    for k, frame in enumerate(frames):
        path = work / f"{name}_{k + 1}.parquet"
        frame.to_parquet(path, index=False)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the rules files")
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000],
                        help="rows of each trap table (default 100000)")
    parser.add_argument("--persons", type=int, default=1_000_000,
                        help="rows of the persons table of bench/suggest_share.py (0: none)")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the Parquet files (the persons table is kept there)")
    parser.add_argument("--skip-datasets", action="store_true",
                        help="no data sets of ../shared/datasets")
    args = parser.parse_args()

    import linkage

    print(f"linkage from {Path(linkage.__file__).parent}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="suggest_rules_bytes_"))
    work.mkdir(parents=True, exist_ok=True)
    for name, files in SAMPLES.items():
        _suggest(f"sample_{name}", [ROOT / "sample_data" / f for f in files], args.out)
    if not args.skip_datasets:
        sys.path.insert(0, str(HERE))
        import generalization as g

        for name, (load, _) in g.DATASETS.items():
            _, frames, _ = load()  # the truth is dropped here
            for variant, tables in (("named", frames), ("neutral", g._neutral(frames, g.SEED))):
                label = f"{name}_{variant}"
                _suggest(label, _parquet(tables, work, label), args.out)
    from linkage.synth import TRAPS, traps

    for size in args.sizes:
        for trap in TRAPS:
            _, frames, _ = traps(size, seed=42, trap=trap)
            label = f"trap_{trap}_{size}"
            _suggest(label, _parquet(frames, work, label), args.out)
    if args.persons:
        path = work / f"persons_{args.persons}.parquet"
        if not path.exists():
            _, frames, _ = traps(args.persons, seed=2, trap="persons")
            frames[0].to_parquet(path, index=False)
        _suggest(f"persons_{args.persons}", [path], args.out)


if __name__ == "__main__":
    main()
