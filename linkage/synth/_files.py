"""Writing the samples (`python -m linkage.synth --out sample_data`) and playing the person
who labels (`python -m linkage.synth answer`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from linkage.errors import InputError
from linkage.synth._customers import customer_updates, customers
from linkage.synth._texts import labelled_texts
from linkage.synth._transactions import transactions
from linkage.synth._traps import traps


def summary(records: pd.DataFrame, truth: pd.DataFrame, id_col: str = "person_id") -> dict:
    """Rows, distinct people, people with duplicates and true duplicate pairs of a generated set."""
    sizes = truth[id_col].value_counts()
    return {
        "rows": len(records),
        "people": int(sizes.size),
        "people_with_duplicates": int((sizes > 1).sum()),
        "duplicate_pairs": int((sizes * (sizes - 1) // 2).sum()),
    }


def csv_text(frame: pd.DataFrame) -> str:
    """The exact CSV text written for the sample data: header, no index, "\\n" line ends."""
    return frame.to_csv(index=False, lineterminator="\n")


def write_customers(
    out_dir: str | Path, n_people: int = 1400, seed: int = 7
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write customers.csv and customers_truth.csv (UTF-8) into `out_dir`; return both frames."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records, truth = customers(n_people=n_people, seed=seed)
    for name, frame in (("customers.csv", records), ("customers_truth.csv", truth)):
        # newline="" keeps "\n" line ends on Windows too, so the files stay byte-identical.
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")
    return records, truth


def _write_pair(out_dir: str | Path, stem: str, records: pd.DataFrame, truth: pd.DataFrame) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in ((f"{stem}.csv", records), (f"{stem}_truth.csv", truth)):
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")


def write_transactions(
    out_dir: str | Path, n_customers: int = 300, seed: int = 11
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write transactions.csv and transactions_truth.csv into `out_dir`; return both frames."""
    records, truth = transactions(n_customers=n_customers, seed=seed)
    _write_pair(out_dir, "transactions", records, truth)
    return records, truth


def write_labelled_texts(
    out_dir: str | Path, n: int = 1500, seed: int = 13
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write labelled_text.csv and labelled_text_truth.csv into `out_dir`; return both frames."""
    records, truth = labelled_texts(n=n, seed=seed)
    _write_pair(out_dir, "labelled_text", records, truth)
    return records, truth


def write_customer_updates(
    out_dir: str | Path, days: int = 2, per_day: int = 150, n_people: int = 1400, seed: int = 7
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Write customers_day2.csv, customers_day3.csv ... (each with its *_truth.csv): the loads
    that follow customers.csv (`customer_updates`); return the frames."""
    tables = customer_updates(days, per_day, n_people=n_people, seed=seed)
    for day, (records, truth) in enumerate(tables, start=2):
        _write_pair(out_dir, f"customers_day{day}", records, truth)
    return tables


def write_link(out_dir: str | Path, n_rows: int = 600, seed: int = 42) -> None:
    """Write link_left.csv and link_right.csv, two person tables to link whose columns differ
    (`traps(trap="link_columns")`), and link_truth.csv: every record of both (`record_id`,
    the left ids `P...` and the right ids `R...` apart) with its `entity_id`."""
    _mode, (left, right), pairs = traps(n_rows, seed=seed, trap="link_columns")
    entity = dict(zip(pairs["id_r"], pairs["id_l"], strict=True))
    ids = pd.concat([left["rec_id"], right["id"]], ignore_index=True)
    owner = ids.map(lambda i: entity.get(i, i))
    number = pd.Series(pd.factorize(owner)[0] + 1)
    truth = pd.DataFrame({"record_id": ids, "entity_id": number.map("E-{:04d}".format)})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in (("link_left.csv", left), ("link_right.csv", right),
                        ("link_truth.csv", truth)):
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")


def write_households(out_dir: str | Path, n_rows: int = 500, seed: int = 42) -> None:
    """Write households.csv and households_truth.csv: people of one household share surname,
    address and city (`traps(trap="households")`)."""
    _mode, (records,), truth = traps(n_rows, seed=seed, trap="households")
    _write_pair(out_dir, "households", records, truth)


def answer(todo: str | Path, truth: str | Path, out: str | Path | None = None) -> pd.DataFrame:
    """Play the person who labels: fill the `label` column of a `linkage sample` file (1 when
    `id_l` and `id_r` are the same entity in `truth`, else 0) and write it back (or to `out`).

    `truth` is a CSV of record id (first column) and entity (second), as the samples' *_truth.csv
    files. Only for trying the labelling loop on the samples: a run never reads a truth file.
    """
    pairs = pd.read_csv(todo, dtype=str, keep_default_na=False)
    table = pd.read_csv(truth, dtype=str, keep_default_na=False)
    entity = dict(zip(table.iloc[:, 0], table.iloc[:, 1], strict=True))
    missing = sorted({*pairs["id_l"], *pairs["id_r"]} - entity.keys())
    if missing:
        raise InputError(f"{truth} has no entity for {len(missing)} id(s) of {todo}, e.g. "
                         f"{missing[0]!r}: is it the truth of the table that run read?")
    same = [entity[a] == entity[b] for a, b in zip(pairs["id_l"], pairs["id_r"], strict=True)]
    pairs["label"] = ["1" if s else "0" for s in same]
    Path(out or todo).write_text(csv_text(pairs), encoding="utf-8", newline="")
    return pairs


DATASETS = ("customers", "transactions", "texts", "updates", "link", "households")


def _answer_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m linkage.synth answer",
        description="Fill the `label` column of a `linkage sample` CSV from a sample's truth "
        "file (1 same entity, 0 not), in place of a person: for trying the labelling loop.",
    )
    parser.add_argument("todo", help="the CSV `linkage sample` wrote (id_l, id_r, label, ...)")
    parser.add_argument("--truth", required=True,
                        help="record id and entity, e.g. sample_data/customers_truth.csv")
    parser.add_argument("--out", default=None, help="write here instead of over TODO")
    args = parser.parse_args(argv)
    try:
        pairs = answer(args.todo, args.truth, args.out)
    except (OSError, ValueError, KeyError, InputError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    matches = int((pairs["label"] == "1").sum())
    print(f"labelled {len(pairs)} pairs in {args.out or args.todo} from {args.truth}: "
          f"{matches} same, {len(pairs) - matches} different")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["answer"]:
        return _answer_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m linkage.synth",
        description="Write the synthetic samples: customers.csv (and the later loads "
        "customers_day2.csv, customers_day3.csv), transactions.csv, labelled_text.csv, "
        "households.csv, each with a *_truth.csv, and link_left.csv, link_right.csv with "
        "link_truth.csv. `python -m linkage.synth answer TODO --truth FILE` fills a "
        "`linkage sample` file's labels from a truth file.",
    )
    parser.add_argument("--out", default="sample_data", help="output folder (default: %(default)s)")
    parser.add_argument(
        "--dataset",
        choices=[*DATASETS, "all"],
        default="all",
        help="which sample to write (default: %(default)s)",
    )
    parser.add_argument("--people", type=int, default=1400, help="distinct people (default: 1400)")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="random seed (default: 7 for customers and updates, 11 for transactions, 13 for "
        "texts, 42 for link and households)",
    )
    args = parser.parse_args(argv)
    chosen = DATASETS if args.dataset == "all" else (args.dataset,)
    if "customers" in chosen:
        seed = 7 if args.seed is None else args.seed
        records, truth = write_customers(args.out, n_people=args.people, seed=seed)
        facts = ", ".join(f"{k} {v}" for k, v in summary(records, truth).items())
        print(f"wrote customers.csv and customers_truth.csv to {args.out}: {facts}")
    if "transactions" in chosen:
        seed = 11 if args.seed is None else args.seed
        records, truth = write_transactions(args.out, seed=seed)
        kinds = ", ".join(f"{k} {v}" for k, v in truth["kind"].value_counts().items())
        print(f"wrote transactions.csv and transactions_truth.csv to {args.out}: {kinds}")
    if "texts" in chosen:
        seed = 13 if args.seed is None else args.seed
        records, truth = write_labelled_texts(args.out, seed=seed)
        kinds = ", ".join(f"{k} {v}" for k, v in truth["kind"].value_counts().items())
        print(f"wrote labelled_text.csv and labelled_text_truth.csv to {args.out}: {kinds}")
    if "updates" in chosen:
        seed = 7 if args.seed is None else args.seed
        tables = write_customer_updates(args.out, n_people=args.people, seed=seed)
        rows = ", ".join(f"day {d} {len(r)} rows" for d, (r, _t) in enumerate(tables, start=2))
        print(f"wrote customers_day2.csv, customers_day3.csv and their truth to {args.out}: "
              f"{rows}")
    if "link" in chosen:
        write_link(args.out, seed=42 if args.seed is None else args.seed)
        print(f"wrote link_left.csv, link_right.csv and link_truth.csv to {args.out}")
    if "households" in chosen:
        write_households(args.out, seed=42 if args.seed is None else args.seed)
        print(f"wrote households.csv and households_truth.csv to {args.out}")
    return 0
