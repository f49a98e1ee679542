#!/usr/bin/env bash
# The HTML report at 10,000 cases: generates a suite (host/examples/gen_suite.rs),
# runs it, renders its report with `assay report`, and measures the file's
# size and how long headless Chromium takes to draw the first screen (the
# page writes performance.now() into #rendered when its first screen is
# drawn; read from --dump-dom). Targets (issue 18): < 2 s, < 20 MB.
#
#   benches/report.sh [N]        # N cases, default 10000
#
# Uses the debug build (the machine is shared; the report's size and the
# browser's time do not depend on how assay was built).
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-10000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build -q -p assay --bin assay --example gen_suite
assay=target/debug/assay
target/debug/examples/gen_suite "$work/suite" "$cases" >/dev/null
"$assay" run "$work/suite" --config "$work/suite/assay.toml" --quiet --results "$work/results" >/dev/null || true

start=$(date +%s.%N)
peak_kb=$( { /usr/bin/time -f %M "$assay" report "$work/results" >/dev/null; } 2>&1 | tail -1 )
end=$(date +%s.%N)
report="$work/results/report.html"
bytes=$(stat -c %s "$report")

# Three loads; each prints the page's own first-screen mark.
for run in 1 2 3; do
    profile="$work/profile-$run"
    t0=$(date +%s.%N)
    dom=$(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
        --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND" \
        --virtual-time-budget=5000 --dump-dom "file://$report" 2>/dev/null)
    t1=$(date +%s.%N)
    drawn=$(grep -o 'data-ms="[0-9.]*"' <<<"$dom" | grep -o '[0-9.]*')
    rows=$(grep -o '<td class="case-id">' <<<"$dom" | wc -l)
    printf 'load %d: first screen drawn at %s ms (performance.now()), %d rows; chromium process %.2f s\n' \
        "$run" "$drawn" "$rows" "$(echo "$t1 - $t0" | bc)"
done
printf '%d cases: report.html %.1f MB, rendered by `assay report` (debug build) in %.2f s, peak %d MB resident\n' \
    "$cases" "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$end - $start" | bc)" "$((peak_kb / 1024))"
