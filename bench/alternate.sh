#!/bin/bash
# Alternated runs of `linkage dedupe` from several source trees on one table, for A/B timings
# on a machine whose speed drifts from hour to hour (bench/RESULTS_10M.md).
#
#   bench/alternate.sh ROUNDS LABEL:TREE[:VAR=value ...] ...
#   e.g. git archive OLD | tar -x -C /tmp/old   (then link .venv and bench/data into it)
#        bench/alternate.sh 3 before:/tmp/old after:$PWD
#
# Each tree runs with its own `.venv` and its own `linkage` (PYTHONPATH=TREE), from the tree's
# root, on DATA (default bench/data/persons_10000000_42.parquet, relative to the tree: the
# input path as given is written into deduplicated.parquet's metadata, so keep it the same
# for every tree) with RULES (default --rules bench/persons_scale.yaml; RULES= for suggested
# rules). Prints per run: label, peak RSS (KiB), wall, user and system seconds, an md5 of the
# output files but summary.json, report.html and timings.json (concatenated in name order),
# each stage's seconds (timings.json) and the load average.
set -u
DATA=${DATA:-bench/data/persons_10000000_42.parquet}
RULES=${RULES---rules bench/persons_scale.yaml}
rounds=$1; shift
for _ in $(seq "$rounds"); do
  for spec in "$@"; do
    IFS=: read -r label tree envs <<< "$spec"
    out=/tmp/alternate_out_$label
    rm -rf "$out"
    (cd "$tree" && env ${envs:-} PYTHONPATH="$tree" /usr/bin/time -f "%M %e %U %S" \
       -o /tmp/alternate_time .venv/bin/python -m linkage dedupe "$DATA" $RULES --out "$out" \
       --no-progress > /dev/null 2>&1) || { echo "$label failed: see $out"; continue; }
    md5=$(cd "$out" && ls | grep -v -E "^(summary.json|report.html|timings.json)$" | xargs cat \
          | md5sum | cut -c1-12)
    stages=$(python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['seconds']; \
print(' '.join(f'{k}={v:.1f}' for k, v in d.items()))" "$out/timings.json")
    echo "$label $(cat /tmp/alternate_time) $md5 | $stages | load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
