#!/bin/bash
# The bytes of a fixed set of runs on the bundled samples (rules, no rules, chunked, labels,
# link, update), as an md5 list next to OUTDIR: run it on two checkouts and diff the lists to
# show that a refactor changed no output byte. report.html and timings.json hold times.
# usage: bench/output_bytes.sh REPO OUTDIR   (PYTHON= the interpreter; default .venv/bin/python)
set -e
REPO=$1; OUT=$2; rm -rf $OUT; mkdir -p $OUT
PY="${PYTHON:-$(pwd)/.venv/bin/python}"
export PYTHONPATH=$REPO PYTHONHASHSEED=0
cd $REPO
L="nice -n 5 $PY -m linkage"
$L dedupe sample_data/customers.csv --rules rules/customers.yaml --out $OUT/customers --no-progress >/dev/null 2>&1 || true
LINKAGE_CHUNK_ROWS=100 $L dedupe sample_data/customers.csv --rules rules/customers.yaml --out $OUT/customers_chunk --no-progress >/dev/null 2>&1 || true
$L dedupe sample_data/customers.csv --out $OUT/customers_norules --no-progress >/dev/null 2>&1 || true
$L dedupe sample_data/transactions.csv --rules rules/transactions.yaml --out $OUT/transactions --no-progress >/dev/null 2>&1 || true
$L dedupe sample_data/labelled_text.csv --rules rules/labelled_text.yaml --out $OUT/labelled_text --no-progress >/dev/null 2>&1 || true
$L dedupe sample_data/households.csv --out $OUT/households --no-progress >/dev/null 2>&1 || true
$L link sample_data/link_left.csv sample_data/link_right.csv --rules rules/link.yaml --out $OUT/link --no-progress >/dev/null 2>&1 || true
$L link sample_data/link_left.csv sample_data/link_right.csv --out $OUT/link_norules --no-progress >/dev/null 2>&1 || true
$L update $OUT/customers sample_data/customers_day2.csv --out $OUT/customers_upd >/dev/null 2>&1 || echo update-failed
$L sample $OUT/customers_norules --active --n 10 --out $OUT/todo.csv >/dev/null 2>&1 || true
$PY - "$OUT" <<'PY'
import sys, pandas as pd
from pathlib import Path
out = Path(sys.argv[1])
t = pd.read_csv(out/'todo.csv', dtype=str, keep_default_na=False)
truth = pd.read_csv('sample_data/customers_truth.csv', dtype=str)
e = dict(zip(truth.customer_id, truth.person_id))
t['label'] = (t.id_l.map(e) == t.id_r.map(e)).astype(int).astype(str)
t.to_csv(out/'labels.csv', index=False)
PY
$L dedupe sample_data/customers.csv --labels $OUT/labels.csv --out $OUT/customers_labels --no-progress >/dev/null 2>&1 || echo labels-failed
cd $OUT && find . -type f ! -name "*.html" ! -name timings.json | sort | xargs md5sum > $OUT/../$(basename $OUT).md5
