#!/usr/bin/env bash
# `assay merge` of SHARDS results folders of CASES cases each (default 10 ×
# 10,000): wall time and peak RSS, under /usr/bin/time -v.
#
# One run of a generated suite of CASES cases (host/examples/gen_suite.rs,
# against the in-process echo agent) gives one results folder; it is copied
# SHARDS times as shard k/SHARDS, each case's id (and file) under `sK/` so
# that no two shards hold the same case, and the copies are merged: results.jsonl,
# summary.json, junit.xml and report.html, as `assay merge` writes them.
#
#   benches/merge.sh [SHARDS [CASES]]
#
# ASSAY_BIN=PATH measures another build; ASSAY_MERGE_SKIP_BUILD=1 skips the
# release build; ASSAY_MERGE_DIR=DIR works there (default /tmp/assay-merge).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shards=${1:-10}
cases=${2:-10000}

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for /usr/bin/time -v)" >&2
    apt-get update -qq && apt-get install -y -qq time >/dev/null
fi
if [[ "${ASSAY_MERGE_SKIP_BUILD:-}" != 1 ]]; then
    cargo build --release -p assay --bin assay --example gen_suite
fi
assay="${ASSAY_BIN:-$root/target/release/assay}"
gen="$root/target/release/examples/gen_suite"
work="${ASSAY_MERGE_DIR:-/tmp/assay-merge}"
rm -rf "$work"
mkdir -p "$work"

"$gen" "$work/suite" "$cases" >/dev/null
"$assay" run "$work/suite" --config "$work/suite/assay.toml" --quiet --results "$work/one" >/dev/null 2>&1 || true
python3 - "$work" "$shards" <<'PY'
import json, os, sys
work, shards = sys.argv[1], int(sys.argv[2])
lines = open(os.path.join(work, "one", "results.jsonl")).read().splitlines()
summary = json.load(open(os.path.join(work, "one", "summary.json")))
for k in range(1, shards + 1):
    out = os.path.join(work, f"s{k}")
    os.makedirs(out)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for line in lines:
            case = json.loads(line)
            # As if the shard's cases were under sK/ of the suite: the id
            # is still the file's path, as a run would give it.
            case["id"] = f"s{k}/{case['id']}"
            case["file"] = os.path.join(work, "suite", case["id"] + ".hocon")
            f.write(json.dumps(case) + "\n")
    summary["shard"] = {"index": k, "total": shards}
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"))
PY
bytes=$(du -cb "$work"/s*/results.jsonl | tail -1 | cut -f1)
dirs=()
for k in $(seq 1 "$shards"); do dirs+=("$work/s$k"); done
started=$(date +%s%N)
code=0
/usr/bin/time -v -o "$work/time.txt" "$assay" merge "${dirs[@]}" --results "$work/merged" --quiet >"$work/out.txt" 2>&1 || code=$?
ended=$(date +%s%N)
rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt")
merged=$(wc -l <"$work/merged/results.jsonl")
awk -v shards="$shards" -v cases="$cases" -v ns=$((ended - started)) -v rss="$rss_kb" -v code="$code" -v merged="$merged" -v bytes="$bytes" \
    'BEGIN { printf "merge of %d folders x %d cases (%.0f MB of results): %.2f s, %.1f MB peak RSS, exit %s, %d lines merged\n", shards, cases, bytes / 1e6, ns / 1e9, rss / 1024, code, merged }'
