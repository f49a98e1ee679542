#!/usr/bin/env bash
# Judge-bound benchmark: `assay run` on 1,000 `gist` checks against a local
# OpenAI-compatible judge answering after 200 ms (host/examples/slow_judge.rs
# on 127.0.0.1), the echo demo agent in process:
#
#   1x1000  1,000 cases, one `gist` check each
#   10x100  100 cases, ten `gist` checks on each response
#
# each with the judge's concurrency at 16 (the default) and 64
# (ASSAY_JUDGE_CONCURRENCY). The ideal is ceil(1000 / concurrency) x 0.2 s:
# 12.6 s at 16, 3.2 s at 64. Prints, per run: wall seconds, the ideal, their
# ratio, and the most requests the judge ever had in flight at once.
#
#   benches/judge.sh [ASSAY_RUN_ARGS...]   e.g. benches/judge.sh -j 64
#
# ASSAY_BIN=PATH measures another assay binary (e.g. one built before a
# change; one that predates `[judge] concurrency` ignores the variable).
# Set ASSAY_JUDGE_SKIP_BUILD=1 to use the binaries already built. Work files
# go under $ASSAY_JUDGE_DIR (default /tmp/assay-judge-bench), cleared first.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [[ "${ASSAY_JUDGE_SKIP_BUILD:-}" != 1 ]]; then
    cargo build --release -p assay --bin assay --example slow_judge
fi
assay="${ASSAY_BIN:-$root/target/release/assay}"
judge="$root/target/release/examples/slow_judge"

work="${ASSAY_JUDGE_DIR:-/tmp/assay-judge-bench}"
rm -rf "$work"
mkdir -p "$work"

latency_ms=200
checks=1000

# Writes a suite of $2 cases with $3 `gist` checks each under $1; every
# check's criteria differ, so that no two prompts are the same.
suite() {
    local dir=$1 cases=$2 per=$3
    mkdir -p "$dir"
    for ((i = 0; i < cases; i++)); do
        local criteria="\"say pass ($i.0)\""
        for ((k = 1; k < per; k++)); do
            criteria+=", \"say pass ($i.$k)\""
        done
        printf '{ "agent": "echo", "interactions": [ { "text": "Request %d: reflect this back", "response": { "text": { "gist": [%s] } } } ] }\n' \
            "$i" "$criteria" >"$dir/c$(printf '%05d' "$i").hocon"
    done
}
suite "$work/suite-1x1000" 1000 1
suite "$work/suite-10x100" 100 10

server=
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null || true' EXIT
# Starts a fresh judge (its count of requests in flight starts at zero) and
# sets $url to it.
start_judge() {
    if [[ -n "$server" ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    "$judge" "$latency_ms" >"$work/judge.txt" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do
        grep -q "serving" "$work/judge.txt" 2>/dev/null && break
        sleep 0.1
    done
    url=$(sed -n 's/^serving on \(http:[^ ]*\)$/\1/p' "$work/judge.txt")
}

printf '%-8s %11s %8s %8s %7s %9s %5s\n' suite concurrency wall_s ideal_s ratio in_flight exit
for concurrency in 16 64; do
    for name in 1x1000 10x100; do
        start_judge
        results="$work/results-$name-$concurrency"
        code=0
        started=$(date +%s%N)
        ASSAY_JUDGE_URL="$url" ASSAY_JUDGE_MODEL=bench ASSAY_JUDGE_CONCURRENCY="$concurrency" \
            "$assay" run "$work/suite-$name" --quiet --no-judge-cache --results "$results" "$@" \
            >"$work/out-$name-$concurrency.txt" 2>&1 || code=$?
        ended=$(date +%s%N)
        in_flight=$(sed -n 's/^in flight: //p' "$work/judge.txt" | tail -1)
        awk -v name="$name" -v c="$concurrency" -v ns=$((ended - started)) -v checks="$checks" \
            -v latency="$latency_ms" -v in_flight="${in_flight:-0}" -v code="$code" \
            'BEGIN {
                ideal = int((checks + c - 1) / c) * latency / 1000
                printf "%-8s %11d %8.3f %8.1f %7.2f %9d %5s\n", name, c, ns / 1e9, ideal, ns / 1e9 / ideal, in_flight, code
            }'
        if [[ $code -ne 0 ]]; then
            echo "  assay exited $code; its output is in $work/out-$name-$concurrency.txt" >&2
        fi
    done
done
