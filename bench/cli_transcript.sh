#!/bin/bash
# The command line as a user sees it: every verb's --help, and the stdout, stderr (tracebacks
# left out) and exit code of about 60 invocations on the bundled samples (successes, usage
# errors, bad input, gates, closed pipes), then the md5 of the files they wrote. Run it on two
# checkouts and diff the transcripts to show that a change kept the CLI's contract.
# usage: bench/cli_transcript.sh REPO WORKDIR OUTFILE   (PYTHON= the interpreter; default
# .venv/bin/python). WORKDIR is emptied; the samples are linked into it, so paths read alike.
set -u
CODE=$(cd "$1" && pwd); W=$2; OUTF=$(realpath -m "$3")
PY="${PYTHON:-$(pwd)/.venv/bin/python}"
export PYTHONPATH=$CODE PYTHONHASHSEED=0 PYTHONIOENCODING=utf-8
rm -rf "$W"; mkdir -p "$W"; cd "$W"
ln -s "$CODE/sample_data" sample_data; ln -s "$CODE/rules" rules
: > $OUTF
n=0
for v in $($PY -c "from linkage.cli import main; print(' '.join(sorted(main.commands)))"); do
  echo "### --help $v" >> $OUTF; $PY -m linkage $v --help >> $OUTF 2>&1
done
echo "### --help" >> $OUTF; $PY -m linkage --help >> $OUTF 2>&1
L() { n=$((n+1)); echo "### $n: linkage $*" >> $OUTF; nice -n 10 $PY -m linkage "$@" > o.txt 2> e.txt; echo "rc=$?" >> $OUTF; echo "--- stdout" >> $OUTF; cat o.txt >> $OUTF; echo "--- stderr" >> $OUTF; grep -v "^  File \|^    " e.txt >> $OUTF; }
L dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/c --no-progress
L dedupe sample_data/households.csv --out out/h --no-progress
L link sample_data/link_left.csv sample_data/link_right.csv --rules rules/link.yaml --out out/l --no-progress
L dedupe nosuch.csv --out out/z
L dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/c --engine nope
L update out/c sample_data/customers_day2.csv --out out/c2
L forget out/c C-000019 --out out/cf
L forget out/c --out out/x
L forget out/c --column email --out out/x
L explain out/c C-000019
L sample out/c --out t0.csv
L sample out/c --on weight --bands 0,2,4,6,8 --per-band 10 --out todo.csv
L sample out/c --active --n 10 --out todo2.csv
L sample out/c --bands x --out t.csv
L sample out/c --bands "" --out t3.csv
$PY - <<'PY'
import pandas as pd
t = pd.read_csv('todo.csv', dtype=str, keep_default_na=False)
truth = pd.read_csv('sample_data/customers_truth.csv', dtype=str)
e = dict(zip(truth.customer_id, truth.person_id))
t['label'] = (t.id_l.map(e) == t.id_r.map(e)).astype(int).astype(str)
t.to_csv('labels.csv', index=False)
PY
L calibrate out/c labels.csv --on weight --bands 0,2,4,6,8 --write-rules r.yaml
L calibrate out/c labels.csv --bands x
L calibrate out/c labels.csv --bands ""
L report out/c
L report out/c --bands "" --out rep.html
L report out/c --bands x
L report out/c --labels labels.csv --redact email --out rep2.html
L report nosuch
L evaluate out/c --truth sample_data/customers_truth.csv --truth-id customer_id --truth-cluster person_id
L evaluate out/c --truth sample_data/customers_truth.csv --truth-id customer_id --truth-cluster person_id --json --thresholds 2,4
L evaluate out/c --truth sample_data/customers_truth.csv --truth-id customer_id --truth-cluster nope --json
L evaluate out/c --truth sample_data/customers_truth.csv --truth-id customer_id --truth-cluster person_id --thresholds x
L recall sample_data/customers.csv --rules rules/customers.yaml --inject 40 --out out/r
L recall sample_data/customers.csv --inject 40 --json
L recall sample_data/customers.csv --kinds bad
L check sample_data/customers.csv --rules rules/customers.yaml --max-duplicate-rate 0.01
L check sample_data/customers.csv --rules rules/customers.yaml --max-duplicate-rate 0.9 --json
L check sample_data/customers.csv --max-duplicate-rate 0.5
L check nosuch.csv --max-duplicate-rate 0.5 --json
L check sample_data/customers.csv --max-duplicate-rate 5 --json
L drift out/c labels.csv --baseline out/c
L drift out/c2 labels.csv --max-drop 0.01 --json
L drift out/c labels.csv --max-drop 2
L drift out/c labels.csv --bands x
L drift out/c labels.csv --bands ""
L decontaminate sample_data/labelled_text.csv --eval sample_data/labelled_text.csv --out out/d
L lsh-params --threshold 0.8
L lsh-params --threshold 2
L lsh-params --threshold 0.8 --bands 0
L strip-boilerplate sample_data/labelled_text.csv --column text --min-documents 2 --out out/s
L strip-boilerplate sample_data/labelled_text.csv --column nope --out out/s2
L suggest sample_data/customers.csv
L suggest a b c
for r in rules/*.yaml; do L validate $r; done
L validate nosuch.yaml
L
L --version
n=$((n+1)); echo "### $n: pipe" >> $OUTF; nice -n 10 $PY -m linkage suggest sample_data/customers.csv 2>>$OUTF | head -1 >> $OUTF; echo "rc=${PIPESTATUS[0]}" >> $OUTF
n=$((n+1)); echo "### $n: check pipe" >> $OUTF; nice -n 10 $PY -m linkage check sample_data/customers.csv --rules rules/customers.yaml --max-duplicate-rate 0.01 2>>$OUTF | head -0 >> $OUTF; echo "rc=${PIPESTATUS[0]}" >> $OUTF
echo "### files" >> $OUTF
find . -type f ! -name "*.html" ! -name timings.json ! -name o.txt ! -name e.txt | sort | xargs md5sum >> $OUTF
find . -name "*.html" | sort >> $OUTF
sed -i "s#$CODE/#REPO/#g" "$OUTF"  # a warning names the file it came from
