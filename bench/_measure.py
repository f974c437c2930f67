"""Run one command and print its wall time and peak resident memory as JSON on the last line.

Separate from run_bench.py so that RUSAGE_CHILDREN covers exactly one child.
"""

import json
import resource
import subprocess
import sys
import time

start = time.perf_counter()
done = subprocess.run(sys.argv[1:], check=False)
wall = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"returncode": done.returncode, "wall_s": wall, "peak_rss_mib": peak_kib / 1024}))
sys.exit(done.returncode)
