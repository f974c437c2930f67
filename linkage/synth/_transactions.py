"""`transactions()`: purchase rows with no transaction id, where rows identical on the
business columns are either real repeat purchases or ingestion double loads."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import ParameterError

TRANSACTION_COLUMNS = [
    "txn_row",
    "customer_id",
    "product",
    "amount",
    "purchase_date",
    "store",
    "ingest_batch",
    "load_ts",
    "source",
]
# The business columns: two rows that agree on all of them look like the same purchase.
TRANSACTION_KEY = ["customer_id", "product", "amount", "purchase_date", "store"]

# product, price in won, price in pence (London Bridge), weight, bought twice a day at times
_PRODUCTS = [
    ("아메리카노", 4500, 350, 14, True),
    ("Americano", 4500, 350, 8, True),
    ("카페라떼", 5000, 395, 9, True),
    ("Latte", 5000, 395, 8, True),
    ("Cold Brew", 5500, 425, 5, True),
    ("녹차라떼", 5500, 425, 4, True),
    ("바나나우유", 1800, 150, 5, True),
    ("Iced Tea", 4000, 300, 3, True),
    ("김밥", 3500, 450, 7, True),
    ("참치김밥", 4500, 550, 4, False),
    ("삼각김밥", 1500, 250, 5, True),
    ("떡볶이", 5000, 650, 3, False),
    ("Sandwich", 6500, 495, 5, False),
    ("Croissant", 3800, 295, 4, True),
    ("Bagel", 3500, 275, 3, False),
    ("Muffin", 3900, 295, 3, True),
    ("도시락", 6900, 795, 3, False),
    ("Lunch Box", 12900, 1095, 2, False),
    ("원두 200g", 12900, 999, 1, False),
]
_PRODUCT_P = np.array([p[3] for p in _PRODUCTS]) / sum(p[3] for p in _PRODUCTS)
_REPEATABLE = np.array([p[4] for p in _PRODUCTS])
_LONDON = "London Bridge"
_STORES = ["강남점", "홍대점", "잠실점", "판교점", "Shinchon", "Itaewon", "COEX Mall", _LONDON]
_STORE_P = np.array([0.2, 0.15, 0.13, 0.1, 0.14, 0.1, 0.1, 0.08])
_TXN_SOURCES = ["pos", "app", "web"]
_TXN_SOURCE_P = np.array([0.6, 0.25, 0.15])
_TXN_FIRST_DAY = dt.date(2025, 3, 1)
_TXN_DAYS = 61  # March and April 2025
# Till (pos) rows are loaded in three batches a day, after 11:00, 16:00 and midnight; app and web
# rows stream in a few minutes after the purchase and are batched per source and day.
_POS_WINDOW_ENDS = (11 * 60, 16 * 60, 24 * 60)
# Time slots (minutes after midnight) for purchases of one item on one day: each slot lies in
# its own till window, and slots are at least 1.5 hours apart.
_REPEAT_SLOTS = ((7 * 60, 10 * 60), (11 * 60 + 30, 14 * 60 + 30), (16 * 60 + 30, 21 * 60 + 30))


def _pos_window(minute: int) -> int:
    return next(i for i, end in enumerate(_POS_WINDOW_ENDS) if minute < end)


def transactions(n_customers: int = 300, seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Purchase rows of a café chain with no transaction id: about 6.8 rows per customer.

    Two kinds of identical-looking rows are mixed in. *Legitimate repeats* (about 10% of the
    purchases): the customer really bought the same item for the same amount on the same day in
    the same store again, so the row agrees with another on `TRANSACTION_KEY`, but it came in
    another ingest batch or was loaded hours apart. *Double loads* (about 8% of the rows): a batch,
    or a slice of it, was loaded twice, so the copy agrees on every column but `txn_row` and has a
    `load_ts` a few seconds later. Returns (records, truth): records has `TRANSACTION_COLUMNS` (all
    text), truth has `txn_row`, `event_id` (one per real purchase) and `kind` (original,
    repeat_purchase or double_load). The same arguments give the same frames.
    """
    if n_customers < 1:
        raise ParameterError(f"n_customers must be at least 1, got {n_customers}")
    rng = np.random.default_rng(seed)
    width = max(4, len(str(n_customers)))
    cust_ids = [f"C-{i + 1:0{width}d}" for i in range(n_customers)]
    cust_p = rng.gamma(1.5, size=n_customers)
    cust_p /= cust_p.sum()
    home = rng.choice(len(_STORES), size=n_customers, p=_STORE_P)

    # 1. Distinct purchases: no two agree on the business key.
    n_base = round(n_customers * 5.6)
    keys: set[tuple] = set()
    base: list[dict[str, Any]] = []
    while len(base) < n_base:
        c = int(rng.choice(n_customers, p=cust_p))
        store = int(home[c])
        if _STORES[store] != _LONDON and rng.random() < 0.25:
            store = int(rng.choice(len(_STORES) - 1, p=_STORE_P[:-1] / _STORE_P[:-1].sum()))
        product = int(rng.choice(len(_PRODUCTS), p=_PRODUCT_P))
        qty = int(rng.choice([1, 2, 3], p=[0.86, 0.11, 0.03]))
        price = _PRODUCTS[product][2 if _STORES[store] == _LONDON else 1]
        day = _TXN_FIRST_DAY + dt.timedelta(days=int(rng.integers(_TXN_DAYS)))
        key = (c, product, qty * price, day, store)
        if key in keys:
            continue
        keys.add(key)
        source = str(rng.choice(_TXN_SOURCES, p=_TXN_SOURCE_P))
        minute = int(rng.integers(7 * 60, 22 * 60))
        base.append({"key": key, "source": source, "minute": minute, "kind": "original"})

    # 2. Legitimate repeats: the same purchase again, later (or earlier) the same day.
    purchases = list(base)
    n_repeats = round(n_base / 9)  # so that repeats are 10% of all purchases
    candidates = [i for i, b in enumerate(base) if _REPEATABLE[b["key"][1]]]
    made = 0
    for i in rng.permutation(candidates):
        if made >= n_repeats:
            break
        extra = min(n_repeats - made, 1 if rng.random() < 0.85 else 2)
        slots = sorted(rng.choice(3, size=extra + 1, replace=False))
        minutes = [int(rng.integers(*_REPEAT_SLOTS[s])) for s in slots]
        original = base[int(i)]
        first = int(rng.integers(extra + 1))  # which of the purchases was the first row
        original["minute"] = minutes.pop(first)
        for minute in minutes:
            source = original["source"]
            if rng.random() < 0.3:
                source = str(rng.choice(_TXN_SOURCES, p=_TXN_SOURCE_P))
            purchases.append(
                {"key": original["key"], "source": source, "minute": minute, "kind": "repeat"}
            )
        made += extra

    # 3. Ingest batches and load times.
    batches: dict[tuple, list[int]] = {}
    for j, p in enumerate(purchases):
        day = p["key"][3]
        window = _pos_window(p["minute"]) if p["source"] == "pos" else 0
        batches.setdefault((day, p["source"], window), []).append(j)
    load: dict[int, dt.datetime] = {}
    batch_start: dict[tuple, dt.datetime] = {}
    for bkey, members in batches.items():
        day, source, window = bkey
        midnight = dt.datetime.combine(day, dt.time())
        members.sort(key=lambda j: (purchases[j]["minute"], purchases[j]["key"][0]))
        if source == "pos":
            end = midnight + dt.timedelta(minutes=_POS_WINDOW_ENDS[window])
            start = end + dt.timedelta(seconds=int(rng.integers(3 * 60, 25 * 60)))
            for k, j in enumerate(members):
                load[j] = start + dt.timedelta(seconds=k)
        else:
            for j in members:
                lag = int(rng.integers(60, 10 * 60))
                minute = purchases[j]["minute"]
                load[j] = midnight + dt.timedelta(minutes=minute, seconds=lag)
            start = min(load[j] for j in members)
        batch_start[bkey] = start
    order = sorted(batches, key=lambda b: (batch_start[b], b[1]))
    batch_id = {b: f"B-{i + 1:04d}" for i, b in enumerate(order)}
    rows = []
    for b in order:
        for j in batches[b]:
            c, product, amount, day, store = purchases[j]["key"]
            row = {
                "customer_id": cust_ids[c],
                "product": _PRODUCTS[product][0],
                "amount": str(amount),
                "purchase_date": day.isoformat(),
                "store": _STORES[store],
                "ingest_batch": batch_id[b],
                "load_ts": load[j],
                "source": purchases[j]["source"],
            }
            kind = "original" if purchases[j]["kind"] == "original" else "repeat_purchase"
            rows.append((row, j, kind))

    # 4. Double loads: whole batches or slices of them, loaded again seconds later.
    target = round(0.08 / 0.92 * len(purchases))
    by_batch: dict[str, list[int]] = {}
    for r, (row, _, _) in enumerate(rows):
        by_batch.setdefault(row["ingest_batch"], []).append(r)
    names = sorted(by_batch)
    copies = []
    for b in rng.permutation(len(names)):
        need = target - len(copies)
        if need <= 0:
            break
        members = by_batch[names[int(b)]]
        length = len(members)
        if rng.random() > 0.4 and length > 1:
            length = max(1, round(length * rng.uniform(0.3, 0.7)))
        length = min(length, need)
        first = int(rng.integers(len(members) - length + 1))
        delay = dt.timedelta(seconds=int(rng.integers(1, 5)))
        for r in members[first : first + length]:
            row, j, _ = rows[r]
            copies.append(({**row, "load_ts": row["load_ts"] + delay}, j, "double_load"))
    rows += copies

    # 5. Shuffle and number; one event id per purchase, in order of first appearance.
    rows = [rows[i] for i in rng.permutation(len(rows))]
    width = max(6, len(str(len(rows))))
    ids = [f"T-{i + 1:0{width}d}" for i in range(len(rows))]
    event_of: dict[int, str] = {}
    for _, j, _ in rows:
        event_of.setdefault(j, f"E-{len(event_of) + 1:0{width}d}")
    records = pd.DataFrame([row for row, _, _ in rows])
    records["load_ts"] = [t.isoformat(timespec="seconds") for t in records["load_ts"]]
    records.insert(0, "txn_row", ids)
    records = records[TRANSACTION_COLUMNS].astype(pd.StringDtype())
    truth = pd.DataFrame(
        {
            "txn_row": ids,
            "event_id": [event_of[j] for _, j, _ in rows],
            "kind": [kind for _, _, kind in rows],
        },
        dtype="str",
    )
    return records, truth
