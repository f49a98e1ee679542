#!/usr/bin/env bash
# End-to-end benchmark: `assay run` on generated suites of test cases against
# the in-process `echo` demo agent, 5 checks per case (4 stock, 1 ROUGE by the
# rouge plugin loaded from its file; see host/examples/gen_suite.rs), under
# /usr/bin/time -v; then the agent-bound runs: 1,000 cases against the echo
# agent served on 127.0.0.1 answering after 50 ms, at -j 64, over HTTP
# (neuro-san's protocol) and over an `openai` connection (OpenAI's chat
# completions, one JSON body and server-sent events).
#
#   benches/e2e.sh            suites of 1,000 and 10,000 cases, one case with
#                             a warm vs a cold compile cache (the generated
#                             case, whose rouge check loads the rouge plugin,
#                             and the cold-start target of issue 21: one case
#                             of stock checks only against `echo`), the
#                             agent-bound run
#   benches/e2e.sh --100k     also 100,000 cases
#
# Prints the wall time, CPU time and maximum resident set size of each run.
# Work files go under $ASSAY_E2E_DIR (default /tmp/assay-e2e), which is
# cleared first. Set ASSAY_E2E_SKIP_BUILD=1 to use the binaries already
# built, and ASSAY_BIN=PATH to measure another build of assay (a "before"
# binary) with this checkout's suites.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

sizes=(1000 10000)
case "${1:-}" in
    "") ;;
    --100k) sizes+=(100000) ;;
    *)
        echo "usage: benches/e2e.sh [--100k]" >&2
        exit 2
        ;;
esac

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for /usr/bin/time -v)" >&2
    apt-get update -qq && apt-get install -y -qq time >/dev/null
fi

if [[ "${ASSAY_E2E_SKIP_BUILD:-}" != 1 ]]; then
    cargo build --release -p assay --bin assay --example gen_suite
fi
assay="${ASSAY_BIN:-$root/target/release/assay}"
gen="$root/target/release/examples/gen_suite"

work="${ASSAY_E2E_DIR:-/tmp/assay-e2e}"
rm -rf "$work"
mkdir -p "$work"
cache="$work/cache"

# Runs `assay run SUITE [ARGS...]` under /usr/bin/time -v with the cache
# directory $2;
# prints one table row: label, cases, wall seconds, CPU seconds (user +
# system), max RSS in MB, exit code, lines of results.jsonl.
measure() {
    local label=$1 cache_dir=$2 suite=$3 cases=$4
    shift 4
    local results="$work/results-$label" stats="$work/time-$label.txt"
    rm -rf "$results"
    local code=0 started ended
    # Wall time from the shell in nanoseconds (/usr/bin/time only has
    # centiseconds); max RSS and CPU time from /usr/bin/time.
    started=$(date +%s%N)
    /usr/bin/time -v -o "$stats" "$assay" run "$suite" --config "$suite/assay.toml" --quiet --results "$results" \
        --cache-dir "$cache_dir" "$@" >"$work/out-$label.txt" 2>&1 || code=$?
    ended=$(date +%s%N)
    local rss_kb user sys
    rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$stats")
    user=$(awk -F': ' '/User time \(seconds\)/ { print $2 }' "$stats")
    sys=$(awk -F': ' '/System time \(seconds\)/ { print $2 }' "$stats")
    local lines=0
    [[ -f "$results/results.jsonl" ]] && lines=$(wc -l <"$results/results.jsonl")
    awk -v label="$label" -v cases="$cases" -v ns=$((ended - started)) -v user="$user" -v sys="$sys" \
        -v rss="$rss_kb" -v code="$code" -v lines="$lines" \
        'BEGIN { printf "%-16s %8s %9.3f %9.2f %11.1f %5s %8s\n", label, cases, ns / 1e9, user + sys, rss / 1024, code, lines }'
    if [[ $code -ne 0 ]]; then
        echo "  assay exited $code; its output is in $work/out-$label.txt" >&2
    fi
}

echo "generating suites under $work"
"$gen" "$work/suite-1" 1 >/dev/null
# The cold-start target of issue 21: one case against `echo` with stock
# checks only (no plugin file: the run needs the stock plugin and the agent).
mkdir -p "$work/suite-stock"
: >"$work/suite-stock/assay.toml"
cat >"$work/suite-stock/one.hocon" <<'EOF'
{
    "agent": "echo",
    "interactions": [
        {
            "text": "Request 1: please reflect alpha and bravo back to me.",
            "sly_data": { "id": 1 },
            "response": {
                "text": { "keywords": ["alpha", "Request 1:"], "not_keywords": "zulu" },
                "sly_data": { "id": { "value": 1 } }
            }
        }
    ]
}
EOF
for n in "${sizes[@]}"; do
    "$gen" "$work/suite-$n" "$n" >/dev/null
done

echo
printf '%-16s %8s %9s %9s %11s %5s %8s\n' run cases wall_s cpu_s max_rss_MB exit results
# One case: cold = an empty compile cache each time; warm = a cache filled
# by an earlier run. `1-stock-*`: stock checks only (the stock plugin and
# the echo agent, which the binary embeds precompiled: cold compiles
# nothing); `1-rouge-*`: the generated case, whose rouge check compiles the
# rouge plugin from its file.
#
# Max RSS counts the pages of assay's own executable that the run maps, and
# how many one fault maps depends on how the file came into the page cache:
# a binary just written by the linker or `cp` sits in large folios, each
# mapped whole (one case: ~4 MB more than the same binary read back from
# disk). So every build is measured read back from disk, as after a reboot:
# its cached pages are dropped here and the fill runs below read them again.
sync "$assay"
dd if="$assay" iflag=nocache count=0 status=none
for suite in suite-1 suite-stock; do
    "$assay" run "$work/$suite" --config "$work/$suite/assay.toml" --quiet --results "$work/results-fill" \
        --cache-dir "$cache" >/dev/null 2>&1
done
# label prefix, cache ("empty": a new empty one each run), suite
for row in "1-stock-cold empty suite-stock" "1-rouge-cold empty suite-1" \
    "1-stock-warm filled suite-stock" "1-warm filled suite-1"; do
    read -r label kind suite <<<"$row"
    for i in 1 2 3; do
        cache_dir=$cache
        [[ $kind == empty ]] && cache_dir="$work/empty-cache-$label-$i"
        measure "$label-$i" "$cache_dir" "$work/$suite" 1
    done
done
for n in "${sizes[@]}"; do
    measure "$n-warm" "$cache" "$work/suite-$n" "$n"
done

# Agent-bound: the 1,000-case suite over HTTP to `assay agent serve` with a
# 50 ms latency per answer, 64 samples in flight. The ideal is
# 1,000 x 50 ms / 64 = 0.78 s.
latency_ms=50
jobs=64
servers=()
trap 'kill "${servers[@]}" 2>/dev/null || true' EXIT
# Starts `assay agent serve echo ARGS...` on a free port in the background
# (its process id added to $servers) and sets $served_url to its URL.
start_server() {
    local log="$work/serve-${#servers[@]}.txt"
    "$assay" agent serve echo --port 0 --latency-ms "$latency_ms" "$@" >"$log" 2>&1 &
    servers+=($!)
    for _ in $(seq 1 100); do
        grep -q "serving" "$log" 2>/dev/null && break
        sleep 0.1
    done
    served_url=$(sed -n 's/.* on \(http:[^ ]*\)$/\1/p' "$log")
}
ideal() {
    awk -v label="$1" -v latency="$latency_ms" -v jobs="$jobs" \
        'BEGIN { printf "  ideal for %s: %.3f s (1000 x %d ms / %d)\n", label, 1000 * latency / 1000 / jobs, latency, jobs }'
}
start_server
measure "1000-http" "$cache" "$work/suite-1000" 1000 --connection http --agent-url "$served_url" -j "$jobs"
ideal 1000-http

# The same over OpenAI's protocol: `assay agent serve --protocol openai`
# and two `openai` connections to it, one answered with one JSON body, one
# streamed as server-sent events.
start_server --protocol openai
cat >>"$work/suite-1000/assay.toml" <<EOF

[connections.openai]
type = "openai"
url = "$served_url"

[connections.openai_sse]
type = "openai"
url = "$served_url"
stream = true
EOF
measure "1000-openai" "$cache" "$work/suite-1000" 1000 --connection openai -j "$jobs"
ideal 1000-openai
measure "1000-openai-sse" "$cache" "$work/suite-1000" 1000 --connection openai_sse -j "$jobs"
ideal 1000-openai-sse
