#!/usr/bin/env bash
# CPU per request of renard-go against the bare net/http yardstick (tools/bare), under
# wrk -t1 -c50 keep-alive for SECONDS (default 3) each, servers on CPU 0, wrk on CPU 1,
# ROUNDS (default 2) rounds interleaved. CPU = utime + stime from /proc/PID/stat.
# usage: tools/cpu.sh [SECONDS] [ROUNDS]        (from servers/go, after the build)
set -euo pipefail
seconds=${1:-3} rounds=${2:-2}
cd "$(dirname "$0")/.."
go build -o bin/bare ./tools/bare
tick=$(getconf CLK_TCK)
measure() { # measure NAME PORT COMMAND...
  local name=$1 port=$2; shift 2
  taskset -c 0 "$@" >/dev/null 2>&1 & local pid=$!
  sleep 0.5
  wrk -t1 -c50 -d1s "http://127.0.0.1:$port/" >/dev/null   # warm-up
  local before; before=$(awk '{print $14 + $15}' /proc/$pid/stat)
  local out; out=$(taskset -c 1 wrk -t1 -c50 -d"${seconds}s" "http://127.0.0.1:$port/")
  local after; after=$(awk '{print $14 + $15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  local requests; requests=$(grep -o '[0-9]* requests in' <<<"$out" | cut -d' ' -f1)
  awk -v n="$name" -v r="$requests" -v c="$((after - before))" -v t="$tick" -v s="$seconds" \
    'BEGIN { printf "%-10s %9d req/s  %6.2f CPU us/req\n", n, r / s, c / t * 1e6 / r }'
}
for _ in $(seq "$rounds"); do
  measure renard-go 18931 bin/renard-go --listen 127.0.0.1:18931 --threads 1
  measure bare 18932 bin/bare 127.0.0.1:18932
done
