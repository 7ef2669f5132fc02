#!/usr/bin/env bash
# User-space instructions per request of the open and the billed path, counted by valgrind's
# callgrind: a figure that, unlike CPU time, does not move with the host's noise, so that two
# builds can be told apart by a few percent. Each count is the difference of two whole runs (a
# start, W+N sequential requests on one keep-alive connection, a clean stop) and (a start, W
# requests, a clean stop), divided by N: start-up, warm-up and shutdown cancel out. The kernel's
# work (system calls, loopback) is not counted: bench/run.sh measures it.
#   bench/instructions.sh                       # build/tollgate
#   BENCH_BASE_BIN=/path/to/other/tollgate bench/instructions.sh   # and another build beside it
# Environment: TOLLGATE_BIN, BENCH_BASE_BIN, BENCH_COUNT=2000 (N), BENCH_WARM=200 (W).
# Needs valgrind and nginx (scripts/setup --bench); takes about a minute per build.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/build/bench/instructions"
BIN=${TOLLGATE_BIN:-$ROOT/build/tollgate}
COUNT=${BENCH_COUNT:-2000}
WARM=${BENCH_WARM:-200}
die() { echo "instructions.sh: $*" >&2; exit 1; }
for tool in valgrind nginx g++; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup --bench)"; done
[[ -x $BIN ]] || die "no Tollgate binary at $BIN (scripts/build, or set TOLLGATE_BIN)"

rm -rf "$OUT"
mkdir -p "$OUT/mock/tmp"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

g++ -O2 -std=c++20 -o "$OUT/loadgen" "$ROOT/bench/loadgen.cpp" || die "loadgen build failed"
freeport() { "$OUT/loadgen" freeport; }
MOCK_PORT=$(freeport)
SSE_PORT=$(freeport)
sed -e "s|@PREFIX@|$OUT/mock|g" -e "s|@JSON_PORT@|$MOCK_PORT|g" -e "s|@SSE_PORT@|$SSE_PORT|g" \
  "$ROOT/bench/nginx/mock.conf.in" >"$OUT/mock/nginx.conf"
chmod a+rx "$OUT" "$OUT/mock"
nginx -p "$OUT/mock" -c "$OUT/mock/nginx.conf" -e "$OUT/mock/error.log" 2>"$OUT/mock/stderr.log" &
PIDS+=($!)
sed 's/"model":"gpt-4o-mini"/"model":"bench_model"/' "$ROOT/bench/chat_request.json" >"$OUT/body.json"
export BENCH_UPSTREAM_KEY="sk-bench-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"

run() { # run BIN AUTH REQUESTS -> total instructions of one whole run
  local bin=$1 auth=$2 n=$3 dir="$OUT/run" port pid key=""
  rm -rf "$dir"
  mkdir -p "$dir"
  port=$(freeport)
  cat >"$dir/tollgate.toml" <<EOF
[gateway]
listen = "127.0.0.1:$port"
auth = "$auth"
workers = 1
[storage]
url = "sqlite://$dir/tollgate.db"
[models.bench_model]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.bench_model.providers.mock]
type = "openai"
api_base = "http://127.0.0.1:$MOCK_PORT/v1"
model = "gpt-4o-mini"
api_key = "env::BENCH_UPSTREAM_KEY"
EOF
  valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
    "$bin" serve --config "$dir/tollgate.toml" >"$dir/stdout.log" 2>"$dir/stderr.log" &
  pid=$!
  PIDS+=("$pid")
  for ((i = 0; i < 300; i++)); do
    grep -q "listening on" "$dir/stdout.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || die "tollgate exited during startup: $(tail -3 "$dir/stderr.log")"
    sleep 0.1
  done
  if [[ $auth == required ]]; then
    key=$(sed -n 's/^export TOLLGATE_API_KEY=//p' "$dir/stdout.log")
    "$bin" admin --config "$dir/tollgate.toml" teams topup default 1000000 >/dev/null
  fi
  BENCH_AUTH="Bearer ${key:-sk-bench-0000000000000000}" timeout 300 "$OUT/loadgen" ttfb \
    --port "$port" --body "$OUT/body.json" --count "$n" --warmup 0 --marker "" \
    --expect chat.completion --max-seconds 280 >"$dir/loadgen.txt" || die "loadgen failed: $(cat "$dir/loadgen.txt")"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  sed -n 's/^summary: //p;s/^totals: //p' "$dir/callgrind.out" | head -1
}

per_request() { # per_request BIN AUTH
  local small big
  small=$(run "$1" "$2" "$WARM")
  big=$(run "$1" "$2" $((WARM + COUNT)))
  echo $(((big - small) / COUNT))
}

printf '%-40s %16s %16s\n' "build" "open instr/req" "billed instr/req"
for bin in ${BENCH_BASE_BIN:+"$BENCH_BASE_BIN"} "$BIN"; do
  printf '%-40s %16s %16s\n' "$bin" "$(per_request "$bin" open)" "$(per_request "$bin" required)"
done
