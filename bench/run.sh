#!/usr/bin/env bash
# Tollgate load benchmark: mock upstream direct vs nginx reverse proxy vs Tollgate (and Tollgate's
# Anthropic path: the same requests translated to and from the mock's Anthropic Messages API).
# See bench/README.md for what every figure means. Run from anywhere:
#   bench/run.sh                      # default: 3 runs, 10 interleaved rounds, 20 s soak, ~15 min
#   BENCH_SOAK=60 bench/run.sh        # 60 s RSS soak per proxy
# Environment (all optional):
#   BENCH_RUNS=3            runs per case; medians are reported
#   BENCH_DURATION=5        seconds of wrk per connection count (16 and 64)
#   BENCH_RATE=5000         fixed offered rate (req/s) for the latency test
#   BENCH_RATE_DURATION=8   measured seconds of the fixed-rate test (after 1 s warm-up)
#   BENCH_RATE_CONNS=32     keep-alive connections of the fixed-rate test
#   BENCH_SAME_RATE=20000   a rate near the open path's most, offered to nginx and the open path
#                           alike over 64 connections: their CPU per request at the same rate
#                           (at each one's own most, the slower leaves the load CPU idle, and
#                           waking it costs the proxy kernel time); 0 disables
#   BENCH_TTFB_COUNT=2000   sequential streaming requests per TTFB measurement
#   BENCH_STREAM_RATE=500   fixed offered rate (streams/s) of the streaming test
#   BENCH_STREAM_DURATION=8 measured seconds of the streaming test (after 1 s warm-up)
#   BENCH_STREAM_CONNS=32   keep-alive connections of the streaming test
#   BENCH_SOAK=20           seconds of the RSS soak (fixed rate) per proxy; 0 disables
#   BENCH_TARGETS="direct nginx tollgate tollgate_auth"  (tollgate_auth: auth = "required" and a
#                           valid key on every request, beside the open path; tollgate_pg: the
#                           same, its store a PostgreSQL cluster the benchmark starts on the load
#                           CPU, added by default when the server is installed; tollgate_dark
#                           and tollgate_traced: the billed path with [metrics] enabled = false
#                           and no traces, and with metrics and every exchange's spans exported
#                           to a collector (the mock's POST /v1/traces), for what telemetry
#                           costs: their rounds, side by side; tollgate_limited: the billed
#                           path with key, team and model rate limits configured, none ever
#                           reached, for what counting them costs beside tollgate_auth)
#   BENCH_PROXY_CPU=0       CPU for the proxy under test
#   BENCH_LOAD_CPU=1        CPU for the load generators and the mock upstream
#   TOLLGATE_BIN=build/tollgate
#   BENCH_TOLLGATE_LOG=FILE where Tollgate's stderr (access log) goes; default /dev/null
#   BENCH_KEEP=1            keep the temporary run directory under build/bench/
#   BENCH_WAIT_IDLE=0       wait up to this many seconds for an idle machine before starting
#   BENCH_RETRIES=2         repeat a run of a path disturbed by other load on our CPUs (at most N times) ...
#   BENCH_BUDGET=360        ... while the estimated total stays within this many seconds
#   BENCH_ROUNDS=10         interleaved rounds of every path at 64 connections (0: none)
#   BENCH_ROUND_SECONDS=4   seconds per path per round
#   BENCH_LOAD_MAX=90       a round in which the load CPU passed this busy share (%) for any path
#                           is left out of the rounds' figures (the load side, not the proxy,
#                           may have limited it)
#   BENCH_PROVIDERS="anth azure gemini bedrock"  the provider paths measured beside the
#                           OpenAI-compatible one (Tollgate only; "" for none)
#   BENCH_FLOOD=0           1: the billed paths' fixed-rate test runs again while two connections
#                           flood the console's sign-in with bad links (POST /console/api/auth/link
#                           as fast as they are answered): the billed p99 under an anonymous flood
#   BENCH_PERF=0            1: after the rounds, profile each path (nginx's too) with perf for one
#                           round's time; the top entries go to build/bench/perf-TARGET.txt
#   BENCH_FLOOR=8000        with tollgate_auth: bench/commit_floor.cpp on the proxy's CPU, this
#                           many requests a line: what SQLite alone costs for the billed path's
#                           transaction at each batch size, the floor under the writer's CPU
#                           (about 20 s); 0 disables
#   BENCH_IO_FLOOR=1        the interleaved rounds gain the path `floor`: bench/proxy_floor.cpp,
#                           a proxy on the gateway's I/O stack (Asio, coroutines, one thread)
#                           that relays the bytes and does nothing else: the stack's own CPU
#                           per request beside nginx's and the open path's; 0 leaves it out
#   BENCH_BASE_BIN=         another build of the gateway (the commit a change started from):
#                           its open path joins the interleaved rounds as tollgate_base (and its
#                           billed path as tollgate_auth_base, with tollgate_auth), so the
#                           change's ratios to it are taken in the same rounds
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
OUT="$ROOT/build/bench"

RUNS=${BENCH_RUNS:-3}
DUR=${BENCH_DURATION:-5}
RATE=${BENCH_RATE:-5000}
RATE_DUR=${BENCH_RATE_DURATION:-8}
RATE_CONNS=${BENCH_RATE_CONNS:-32}
SAME_RATE=${BENCH_SAME_RATE:-20000}
TTFB_N=${BENCH_TTFB_COUNT:-2000}
STREAM_RATE=${BENCH_STREAM_RATE:-500}
STREAM_DUR=${BENCH_STREAM_DURATION:-8}
STREAM_CONNS=${BENCH_STREAM_CONNS:-32}
SOAK=${BENCH_SOAK:-20}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
DEFAULT_TARGETS="direct nginx tollgate tollgate_auth"
[[ -n $PG_BIN && -x $PG_BIN/initdb ]] && DEFAULT_TARGETS+=" tollgate_pg"
TARGETS=${BENCH_TARGETS:-$DEFAULT_TARGETS}
PROXY_CPU=${BENCH_PROXY_CPU:-0}
LOAD_CPU=${BENCH_LOAD_CPU:-1}
TOLLGATE_BIN=${TOLLGATE_BIN:-$ROOT/build/tollgate}
TOLLGATE_LOG=${BENCH_TOLLGATE_LOG:-/dev/null}
KEEP=${BENCH_KEEP:-0}
WAIT_IDLE=${BENCH_WAIT_IDLE:-0}
RETRIES=${BENCH_RETRIES:-2}
BUDGET=${BENCH_BUDGET:-360}
ROUNDS=${BENCH_ROUNDS:-10}
ROUND_DUR=${BENCH_ROUND_SECONDS:-4}
LOAD_MAX=${BENCH_LOAD_MAX:-90}
PERF=${BENCH_PERF:-0}
FLOOR=${BENCH_FLOOR:-8000}
BASE_BIN=${BENCH_BASE_BIN:-}
[[ -z $BASE_BIN || -x $BASE_BIN ]] || { echo "BENCH_BASE_BIN: no executable at $BASE_BIN" >&2; exit 2; }
FLOOD=${BENCH_FLOOD:-0}
IO_FLOOR=${BENCH_IO_FLOOR:-1}
read -r -a PROVIDER_PATHS <<<"${BENCH_PROVIDERS-anth azure gemini bedrock}"
# Each provider path: the model its requests name, and what the report calls it.
declare -A PROVIDER_MODEL=([anth]=bench_claude [azure]=bench_azure [gemini]=bench_gemini [bedrock]=bench_bedrock)
declare -A PROVIDER_LABEL=([anth]=Anthropic [azure]="Azure OpenAI" [gemini]=Gemini [bedrock]=Bedrock)
for p in "${PROVIDER_PATHS[@]}"; do
  [[ -n ${PROVIDER_MODEL[$p]:-} ]] || { echo "BENCH_PROVIDERS: unknown path $p" >&2; exit 2; }
done
DISTURBED=0

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

int_in() {  # int_in NAME VALUE MIN MAX
  [[ $2 =~ ^[0-9]+$ ]] || die "$1 must be a non-negative integer (got '$2')"
  ((10#$2 >= $3 && 10#$2 <= $4)) || die "$1 must be in [$3, $4] (got $2)"
}
int_in BENCH_RUNS "$RUNS" 1 20
int_in BENCH_DURATION "$DUR" 1 120
int_in BENCH_RATE "$RATE" 1 200000
int_in BENCH_RATE_DURATION "$RATE_DUR" 1 600
int_in BENCH_RATE_CONNS "$RATE_CONNS" 1 1024
int_in BENCH_TTFB_COUNT "$TTFB_N" 1 100000
int_in BENCH_STREAM_RATE "$STREAM_RATE" 1 100000
int_in BENCH_STREAM_DURATION "$STREAM_DUR" 1 600
int_in BENCH_STREAM_CONNS "$STREAM_CONNS" 1 1024
int_in BENCH_SOAK "$SOAK" 0 3600
int_in BENCH_PROXY_CPU "$PROXY_CPU" 0 4095
int_in BENCH_LOAD_CPU "$LOAD_CPU" 0 4095
int_in BENCH_WAIT_IDLE "$WAIT_IDLE" 0 3600
int_in BENCH_RETRIES "$RETRIES" 0 5
int_in BENCH_BUDGET "$BUDGET" 0 36000
int_in BENCH_LOAD_MAX "$LOAD_MAX" 1 100
int_in BENCH_PERF "$PERF" 0 1
int_in BENCH_FLOOD "$FLOOD" 0 1
int_in BENCH_IO_FLOOR "$IO_FLOOR" 0 1
((PERF == 0)) || command -v perf >/dev/null 2>&1 || die "BENCH_PERF=1: 'perf' not found (apt-get install linux-perf)"
for t in $TARGETS; do
  case $t in direct | nginx | tollgate | tollgate_auth | tollgate_pg | tollgate_dark | tollgate_traced | tollgate_limited) ;; *) die "unknown target '$t' in BENCH_TARGETS" ;; esac
done

for tool in wrk nginx g++ taskset timeout; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found: run scripts/setup --bench"
done
taskset -c "$PROXY_CPU" true 2>/dev/null || die "cannot pin to CPU $PROXY_CPU (BENCH_PROXY_CPU)"
taskset -c "$LOAD_CPU" true 2>/dev/null || die "cannot pin to CPU $LOAD_CPU (BENCH_LOAD_CPU)"
[[ $PROXY_CPU != "$LOAD_CPU" ]] || log "warning: proxy and load generator share CPU $PROXY_CPU"

# ------------------------------------------------------------------ processes and cleanup

mkdir -p "$OUT"
WORK=$(mktemp -d "$OUT/run.XXXXXX")
declare -a STARTED=()  # "pid:starttime" of every process this script started

proc_start_time() { # field 22 of /proc/PID/stat; empty if gone
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  set -- $s
  echo "${20}"
}

remember() { # remember PID...
  local p st
  for p in "$@"; do
    st=$(proc_start_time "$p")
    [[ -n $st ]] && STARTED+=("$p:$st")
  done
  return 0
}

alive() { # alive "pid:starttime" -> still the process we started?
  local p=${1%%:*} st=${1##*:}
  [[ "$(proc_start_time "$p")" == "$st" ]]
}

stop_pids() { # stop_pids root|all "pid:starttime"... : TERM (the first, or all), wait up to 5 s, then KILL
  local how=$1 e i any
  shift
  if [[ $how == root ]]; then
    alive "$1" && kill -TERM "${1%%:*}" 2>/dev/null || true
  else
    for e in "$@"; do alive "$e" && kill -TERM "${e%%:*}" 2>/dev/null || true; done
  fi
  for ((i = 0; i < 50; i++)); do
    any=0
    for e in "$@"; do alive "$e" && any=1; done
    ((any)) || break
    sleep 0.1
  done
  for e in "$@"; do alive "$e" && kill -KILL "${e%%:*}" 2>/dev/null || true; done
  for e in "$@"; do wait "${e%%:*}" 2>/dev/null || true; done
  return 0
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  ((${#STARTED[@]})) && stop_pids all "${STARTED[@]}"
  stop_postgres
  if [[ $KEEP == 1 ]]; then
    log "kept $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

children_of() { # direct children of PID
  local f d s
  local -a fld
  if ls "/proc/$1/task/"*/children >/dev/null 2>&1; then
    for f in "/proc/$1/task/"*/children; do
      cat "$f" 2>/dev/null || true
    done | tr ' ' '\n' | grep -E '^[0-9]+$' || true
    return 0
  fi
  for d in /proc/[0-9]*; do  # fallback: scan parent PIDs (no name matching)
    s=$(cat "$d/stat" 2>/dev/null) || continue
    s=${s##*) }
    read -r -a fld <<<"$s"
    [[ ${fld[1]} == "$1" ]] && echo "${d#/proc/}"
  done
  return 0
}

tree_of() { # PID and its descendants (two levels: nginx master/workers, a possible tollgate worker)
  local c g
  echo "$1"
  for c in $(children_of "$1"); do
    echo "$c"
    for g in $(children_of "$c"); do echo "$g"; done
  done
}

run_capture() { # run_capture OUTFILE CMD... : background, tracked for cleanup, waited for
  local out=$1 pid
  shift
  "$@" >"$out" 2>>"$WORK/commands.err" &
  pid=$!
  remember "$pid"
  wait "$pid" || true
}

cpu_ticks() { # sum of utime+stime over the given PIDs
  local u s
  read -r u s <<<"$(cpu_ticks_split "$@")"
  echo $((u + s))
}

stat_ticks_split() { # "utime stime" summed over the given stat files (of processes or threads)
  local f s user=0 sys=0
  for f in "$@"; do
    s=$(cat "$f" 2>/dev/null) || continue
    s=${s##*) }
    set -- $s
    user=$((user + ${12}))
    sys=$((sys + ${13}))
  done
  echo "$user $sys"
}

cpu_ticks_split() { # "utime stime" summed over the given PIDs
  local p files=()
  for p in "$@"; do files+=("/proc/$p/stat"); done
  stat_ticks_split "${files[@]}"
}

store_thread_ticks() { # utime+stime ticks of the gateway's store threads (its writer, checkpointer
  # and key follower: src/store/writer.cpp, checkpointer.cpp, auth/key_follower.cpp name them)
  local p t u s files=()
  for p in "$@"; do
    for t in /proc/"$p"/task/*; do
      [[ $(cat "$t/comm" 2>/dev/null) =~ ^tg-(writer|checkpoint|keys) ]] && files+=("$t/stat")
    done
  done
  read -r u s <<<"$(stat_ticks_split "${files[@]}")"
  echo $((u + s))
}

cpu_stat() { # "busy steal" ticks of CPU $1 from /proc/stat. busy = user+nice+system; irq and
  # softirq time are left out: loopback packet processing lands there for whoever sends.
  local line
  line=$(grep "^cpu$1 " /proc/stat)
  set -- $line
  echo "$(($2 + $3 + $4)) $9"
}

store_ticks() { # CPU ticks of tollgate_pg's PostgreSQL: its processes, and the backends it reaped
  [[ -n $PG_DIR && -r $PG_DIR/data/postmaster.pid ]] || { echo 0; return 0; }
  local pm s
  pm=$(head -n1 "$PG_DIR/data/postmaster.pid")
  s=$(cat "/proc/$pm/stat" 2>/dev/null) || { echo 0; return 0; }
  s=${s##*) }
  set -- $s
  echo "$(($(cpu_ticks $(tree_of "$pm")) + ${14} + ${15}))"
}

reaped_ticks() { # utime+stime of this shell's waited-for children (wrk, loadgen) from cutime+cstime
  local s
  s=$(cat "/proc/$$/stat")
  s=${s##*) }
  set -- $s
  echo "$((${14} + ${15}))"
}

# Other load on the two CPUs while a phase ran: busy time minus what our processes used
# (the proxy on PROXY_CPU; the mock, the client and tollgate_pg's PostgreSQL on LOAD_CPU). For "direct" nothing of
# ours runs on PROXY_CPU, so only LOAD_CPU matters there.
phase_begin() { # phase_begin TARGET
  PH_T0=$(date +%s%N)
  PH_P0=$(cpu_stat "$PROXY_CPU")
  PH_L0=$(cpu_stat "$LOAD_CPU")
  PH_OWN0=0
  [[ $1 == direct ]] || PH_OWN0=$(cpu_ticks $T_PIDS)
  PH_LOAD0=$(($(cpu_ticks $MOCK_TREE) + $(reaped_ticks) + $(store_ticks)))
}
phase_end() { # phase_end TARGET LABEL
  local t1 p1 l1 own1=0 load1 el fp=0 fl steal
  t1=$(date +%s%N)
  p1=$(cpu_stat "$PROXY_CPU")
  l1=$(cpu_stat "$LOAD_CPU")
  [[ $1 == direct ]] || own1=$(cpu_ticks $T_PIDS)
  load1=$(($(cpu_ticks $MOCK_TREE) + $(reaped_ticks) + $(store_ticks)))
  el=$(calc "($t1 - $PH_T0) * $CLK_TCK / 1e9" 3)
  # $4 $5: busy/steal of PROXY_CPU before, $6 $7 after; $8 $9 / ${10} ${11}: the same for LOAD_CPU
  set -- "$1" "$2" "" $PH_P0 $p1 $PH_L0 $l1
  [[ $1 == direct ]] || fp=$(calc "(($6 - $4) - ($own1 - $PH_OWN0)) * 100 / $el" 0)
  fl=$(calc "((${10} - $8) - ($load1 - $PH_LOAD0)) * 100 / $el" 0)
  steal=$(calc "(($7 - $5) + (${11} - $9)) * 100 / $el" 0)
  ((fp < 0)) && fp=0
  ((fl < 0)) && fl=0
  [[ $1 == direct ]] || add "$1" foreign_p "$fp"
  add "$1" foreign_l "$fl"
  if ((fp > 5 || fl > 5)); then
    DISTURBED=1
    WARN+=("$1 $2: other processes used ${fp}% of CPU $PROXY_CPU and ${fl}% of CPU $LOAD_CPU")
  fi
  ((steal <= 5)) || WARN+=("$1 $2: ${steal}% steal time")
  return 0
}

wait_port() { # wait_port PORT PID LOGFILE: up to 10 s for a TCP accept
  local i
  for ((i = 0; i < 200; i++)); do
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2 2>/dev/null; die "process $2 exited during startup"; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  cat "$3" >&2 2>/dev/null
  die "nothing listening on 127.0.0.1:$1 after 10 s"
}

# ------------------------------------------------------------------ quiet machine, load generator

CLK_TCK=$(getconf CLK_TCK)

# Is the machine quiet? Wait up to BENCH_WAIT_IDLE seconds for both CPUs to be
# under 10% busy over one second; warn (and go on) if they never are.
idle_check() {
  local c0a c1a c0b c1b
  c0a=$(cpu_stat "$PROXY_CPU"); c1a=$(cpu_stat "$LOAD_CPU")
  sleep 1
  c0b=$(cpu_stat "$PROXY_CPU"); c1b=$(cpu_stat "$LOAD_CPU")
  B0=$(((${c0b%% *} - ${c0a%% *}) * 100 / CLK_TCK))
  B1=$(((${c1b%% *} - ${c1a%% *}) * 100 / CLK_TCK))
  ((B0 <= 10 && B1 <= 10))
}
IDLE_WARN=""
idle_deadline=$(($(date +%s) + WAIT_IDLE))
until idle_check; do
  if (($(date +%s) >= idle_deadline)); then
    IDLE_WARN="machine not idle before the run: CPU $PROXY_CPU ${B0}% busy, CPU $LOAD_CPU ${B1}% busy"
    log "warning: $IDLE_WARN"
    break
  fi
  log "waiting for an idle machine (CPU $PROXY_CPU ${B0}%, CPU $LOAD_CPU ${B1}% busy)"
  sleep 4
done

LOADGEN="$OUT/loadgen"
log "compiling bench/loadgen.cpp"
g++ -O2 -std=c++20 -Wall -Wextra -o "$LOADGEN" "$BENCH/loadgen.cpp" || die "loadgen build failed"
if ((IO_FLOOR)); then
  log "compiling bench/proxy_floor.cpp"
  g++ -O2 -std=c++20 -Wall -Wextra -o "$OUT/proxy_floor" "$BENCH/proxy_floor.cpp" || die "proxy_floor build failed"
fi
freeport() { "$LOADGEN" freeport; }

# ------------------------------------------------------------------ payloads

BODY_DIRECT="$WORK/body-direct.json"        # model gpt-4o-mini (what the upstream expects)
BODY_TOLLGATE="$WORK/body-tollgate.json"    # model bench_model (same length)
BODY_DIRECT_SSE="$WORK/body-direct-stream.json"
BODY_TOLLGATE_SSE="$WORK/body-tollgate-stream.json"
SRC_BODY="$BENCH/chat_request.json"
grep -q '"model":"gpt-4o-mini"' "$SRC_BODY" || die "chat_request.json must contain \"model\":\"gpt-4o-mini\""
grep -q '"stream":false' "$SRC_BODY" || die "chat_request.json must contain \"stream\":false"
tr -d '\n' <"$SRC_BODY" >"$BODY_DIRECT"
sed 's/"model":"gpt-4o-mini"/"model":"bench_model"/' "$BODY_DIRECT" >"$BODY_TOLLGATE"
sed 's/"stream":false/"stream":true/' "$BODY_DIRECT" >"$BODY_DIRECT_SSE"
sed 's/"stream":false/"stream":true/' "$BODY_TOLLGATE" >"$BODY_TOLLGATE_SSE"
provider_body() { # provider_body PATH json|sse: the request to the path's model, written once
  local src=$BODY_TOLLGATE file="$WORK/body-$1-$2.json"
  [[ $2 == sse ]] && src=$BODY_TOLLGATE_SSE
  [[ -f $file ]] || sed "s/\"model\":\"bench_model\"/\"model\":\"${PROVIDER_MODEL[$1]}\"/" "$src" >"$file"
  echo "$file"
}
log "request body: $(wc -c <"$BODY_DIRECT") bytes"

# Embeddings: 16 inputs of about 200 characters, float vectors asked for.
embed_body() { # embed_body MODEL
  awk -v model="$1" 'BEGIN {
    printf "{\"model\":\"%s\",\"encoding_format\":\"float\",\"input\":[", model
    for (i = 0; i < 16; i++) {
      printf "%s\"Ticket %02d: the customer reports that the Summit Trail GTX boots ordered on the 3rd arrived with a dented box and asks whether an exchange for size 44 is possible before the 14th, or else a full refund.\"", (i ? "," : ""), i
    }
    printf "]}"
  }'
}
BODY_EMBED_DIRECT="$WORK/body-embed-direct.json"
BODY_EMBED_TOLLGATE="$WORK/body-embed-tollgate.json"
embed_body text-embedding-3-small >"$BODY_EMBED_DIRECT"
embed_body tollgate::embedding_model_name::bench_embedding >"$BODY_EMBED_TOLLGATE"
# Cache hits (Tollgate only): the same requests asking the inference cache; the first one writes
# the answer, every later one is answered from the gateway's memory without an upstream call.
cached() { sed 's/^{/{"tollgate::cache_options":{"enabled":"on"},/' "$1"; }
BODY_HIT="$WORK/body-hit.json"
BODY_HIT_SSE="$WORK/body-hit-stream.json"
BODY_HIT_EMBED="$WORK/body-hit-embed.json"
cached "$BODY_TOLLGATE" >"$BODY_HIT"
cached "$BODY_TOLLGATE_SSE" >"$BODY_HIT_SSE"
cached "$BODY_EMBED_TOLLGATE" >"$BODY_HIT_EMBED"

# Uploads: a transcription request carrying 10 MiB of audio (random bytes), multipart.
UPLOAD_MB=10
UPLOAD_BOUNDARY="bench-2f9c1e7a5b3d4c6e8a0f"
UPLOAD_TYPE="multipart/form-data; boundary=$UPLOAD_BOUNDARY"
upload_body() { # upload_body MODEL OUTFILE
  {
    printf -- '--%s\r\nContent-Disposition: form-data; name="model"\r\n\r\n%s\r\n' "$UPLOAD_BOUNDARY" "$1"
    printf -- '--%s\r\nContent-Disposition: form-data; name="response_format"\r\n\r\njson\r\n' "$UPLOAD_BOUNDARY"
    printf -- '--%s\r\nContent-Disposition: form-data; name="file"; filename="call.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n' "$UPLOAD_BOUNDARY"
    cat "$WORK/audio.bin"
    printf -- '\r\n--%s--\r\n' "$UPLOAD_BOUNDARY"
  } >"$2"
}
head -c $((UPLOAD_MB * 1024 * 1024)) /dev/urandom >"$WORK/audio.bin"
BODY_UPLOAD_DIRECT="$WORK/body-upload-direct.bin"
BODY_UPLOAD_TOLLGATE="$WORK/body-upload-tollgate.bin"
upload_body whisper-1 "$BODY_UPLOAD_DIRECT"
upload_body bench_whisper "$BODY_UPLOAD_TOLLGATE"
rm -f "$WORK/audio.bin"

# ------------------------------------------------------------------ mock upstream (CPU $LOAD_CPU)

render() { # render TEMPLATE OUTFILE KEY=VALUE...
  local tpl=$1 out=$2 kv args=()
  shift 2
  for kv in "$@"; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  sed "${args[@]}" "$tpl" >"$out"
  ! grep -q '@[A-Z_]*@' "$out" || die "unreplaced placeholder in $out"
}

start_nginx() { # start_nginx NAME CPU TEMPLATE KEY=VALUE... ; sets NG_PID NG_PREFIX
  local name=$1 cpu=$2 tpl=$3
  shift 3
  NG_PREFIX="$WORK/$name"
  mkdir -p "$NG_PREFIX/tmp"
  render "$tpl" "$NG_PREFIX/nginx.conf" PREFIX="$NG_PREFIX" "$@"
  nginx -t -q -p "$NG_PREFIX" -c "$NG_PREFIX/nginx.conf" -e "$NG_PREFIX/error.log" \
    >"$NG_PREFIX/stderr.log" 2>&1 || { cat "$NG_PREFIX/stderr.log" >&2; die "nginx config test failed ($name)"; }
  taskset -c "$cpu" nginx -p "$NG_PREFIX" -c "$NG_PREFIX/nginx.conf" -e "$NG_PREFIX/error.log" \
    >>"$NG_PREFIX/stderr.log" 2>&1 &
  NG_PID=$!
  remember "$NG_PID"
}

MOCK_JSON_PORT=$(freeport)
MOCK_SSE_PORT=$(freeport)
while [[ $MOCK_SSE_PORT == "$MOCK_JSON_PORT" ]]; do MOCK_SSE_PORT=$(freeport); done
start_nginx mock "$LOAD_CPU" "$BENCH/nginx/mock.conf.in" JSON_PORT="$MOCK_JSON_PORT" SSE_PORT="$MOCK_SSE_PORT"
MOCK_PID=$NG_PID
mkdir -p "$NG_PREFIX/static/v1"
awk 'BEGIN {
  printf "{\"object\":\"list\",\"data\":["
  for (i = 0; i < 16; i++) {
    printf "%s{\"object\":\"embedding\",\"index\":%d,\"embedding\":[", (i ? "," : ""), i
    for (j = 0; j < 768; j++) printf "%s%.10f", (j ? "," : ""), sin(i * 768 + j) / 8
    printf "]}"
  }
  printf "],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":640,\"total_tokens\":640}}"
}' >"$NG_PREFIX/static/v1/embeddings"
# nginx's workers run as another user when started by root: they must reach the file.
chmod a+rx "$WORK" "$NG_PREFIX" "$NG_PREFIX/static" "$NG_PREFIX/static/v1"
chmod a+r "$NG_PREFIX/static/v1/embeddings"
node "$BENCH/provider_answers.mjs" "$NG_PREFIX/static" || die "provider_answers.mjs failed"
chmod -R a+rX "$NG_PREFIX/static"
wait_port "$MOCK_JSON_PORT" "$MOCK_PID" "$NG_PREFIX/stderr.log"
wait_port "$MOCK_SSE_PORT" "$MOCK_PID" "$NG_PREFIX/stderr.log"
MOCK_TREE=$(tree_of "$MOCK_PID" | tr '\n' ' ')
remember $MOCK_TREE
log "mock upstream: json 127.0.0.1:$MOCK_JSON_PORT, sse 127.0.0.1:$MOCK_SSE_PORT (pids $MOCK_TREE)"

# ------------------------------------------------------------------ PostgreSQL (CPU $LOAD_CPU)
# tollgate_pg's store: a private cluster on the load CPU beside the mock and the client (whose
# busy share each phase reports), started once, a new database for each start of the target.
# Its settings are the server's defaults (fsync and synchronous_commit on): a charge durable
# against a power cut, as a deployment on PostgreSQL has it.
PG_DIR=""
PG_PORT=""
as_postgres() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
start_postgres() {
  [[ -n $PG_BIN ]] || die "tollgate_pg: no PostgreSQL server installed (scripts/setup installs it)"
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-bench-pg.XXXXXX")
  chmod 755 "$PG_DIR"
  ((EUID == 0)) && chown postgres:postgres "$PG_DIR"
  PG_PORT=$(freeport)
  as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
    die "tollgate_pg: initdb failed (see $PG_DIR/initdb.log)"
  as_postgres taskset -c "$LOAD_CPU" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PG_DIR" start >/dev/null ||
    die "tollgate_pg: the server did not start (see $PG_DIR/log)"
  log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{ print $3 }') on CPU $LOAD_CPU, port $PG_PORT"
}
stop_postgres() {
  [[ -n $PG_DIR ]] || return 0
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=""
}
new_pg_database() { # a fresh `tollgate` database: a new store, as each SQLite start has
  PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/dropdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres --if-exists tollgate
  "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres tollgate
}

# ------------------------------------------------------------------ proxies under test (CPU $PROXY_CPU)

# start_target TARGET MODE(json|sse): sets T_PORT, T_PIDS (watched), T_STOP (to stop), T_BODY, T_EXPECT
start_target() {
  local target=$1 mode=$2 upstream
  if [[ $mode == json ]]; then upstream=$MOCK_JSON_PORT; else upstream=$MOCK_SSE_PORT; fi
  T_STOP=()
  case $target in
    direct)
      T_PORT=$upstream
      T_PIDS=$MOCK_TREE
      [[ $mode == json ]] && T_BODY=$BODY_DIRECT || T_BODY=$BODY_DIRECT_SSE
      ;;
    nginx | nginx_b) # nginx_b: a second, identical nginx, the interleaved rounds' control
      local port buffering=on
      port=$(freeport)
      [[ $mode == sse ]] && buffering=off
      start_nginx "proxy-$mode${target#nginx}" "$PROXY_CPU" "$BENCH/nginx/proxy.conf.in" \
        LISTEN_PORT="$port" UPSTREAM_PORT="$upstream" PROXY_BUFFERING="$buffering"
      wait_port "$port" "$NG_PID" "$NG_PREFIX/stderr.log"
      T_PORT=$port
      T_PIDS=$(tree_of "$NG_PID" | tr '\n' ' ')
      [[ $mode == json ]] && T_BODY=$BODY_DIRECT || T_BODY=$BODY_DIRECT_SSE
      ;;
    floor) # bench/proxy_floor.cpp: relays Content-Length messages only (the rounds' JSON path)
      [[ $mode == json ]] || die "the floor proxy relays whole answers only"
      local pid i
      taskset -c "$PROXY_CPU" "$OUT/proxy_floor" "$upstream" >"$WORK/floor.port" 2>&1 &
      pid=$!
      remember "$pid"
      for ((i = 0; i < 100; i++)); do
        T_PORT=$(head -n1 "$WORK/floor.port")
        [[ $T_PORT =~ ^[0-9]+$ ]] && break
        sleep 0.05
      done
      wait_port "$T_PORT" "$pid" "$WORK/floor.port"
      T_PIDS="$pid "
      T_BODY=$BODY_DIRECT
      ;;
    tollgate | tollgate_base | tollgate_auth | tollgate_auth_base | tollgate_pg | tollgate_dark | tollgate_traced | tollgate_limited)
      local dir="$WORK/$target-$mode" pid i line="" auth=open storage telemetry="" limits=""
      local bin=$TOLLGATE_BIN
      [[ $target == tollgate_base || $target == tollgate_auth_base ]] && bin=$BASE_BIN
      [[ $target != tollgate && $target != tollgate_base ]] && auth=required
      [[ $target == tollgate_dark ]] && telemetry=$'[metrics]\nenabled = false'
      [[ $target == tollgate_traced ]] &&
        telemetry=$'[traces]\nendpoint = "http://127.0.0.1:'"$MOCK_JSON_PORT"'/v1/traces"'
      # Limits far above any load: every request is counted against six, none refused.
      [[ $target == tollgate_limited ]] && limits=$'[limits.key]\nrpm = 1000000000\ntpm = 1000000000000\nconcurrent = 100000\n[limits.team]\nrpm = 1000000000\ntpm = 1000000000000\nconcurrent = 100000'

      rm -rf "$dir"
      mkdir -p "$dir"
      storage="url = \"sqlite://$dir/tollgate.db\""
      if [[ $target == tollgate_pg ]]; then
        new_pg_database
        storage="url = \"postgresql://postgres@127.0.0.1:$PG_PORT/tollgate\"
server_secret = \"env::BENCH_SERVER_SECRET\""
        export BENCH_SERVER_SECRET="bench-server-secret-0123456789abcdef0123456789"
      fi
      cat >"$dir/tollgate.toml" <<EOF
[gateway]
listen = "127.0.0.1:0"
auth = "$auth"
workers = 1

[storage]
$storage

$telemetry
$limits

[models.bench_model]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
$([[ $target == tollgate_limited ]] && printf 'limits = { rpm = 1000000000, tpm = 1000000000000 }')
[models.bench_model.providers.mock]
type = "openai"
api_base = "http://127.0.0.1:$upstream/v1"
model = "gpt-4o-mini"
api_key = "env::BENCH_UPSTREAM_KEY"

# The same request through the Anthropic adapter: translated to POST /v1/messages, and the
# Message (or its named SSE events) translated back to chat.completion (chunks).
[models.bench_claude]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.bench_claude.providers.mock]
type = "anthropic"
api_base = "http://127.0.0.1:$upstream/v1"
model = "claude-sonnet-4-5"
api_key = "env::BENCH_UPSTREAM_KEY"

# The same request through the Azure, Gemini and Bedrock adapters: the upstream answers the
# same text and usage in each wire (bench/provider_answers.mjs); Bedrock's requests are signed.
[models.bench_azure]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.bench_azure.providers.mock]
type = "azure"
api_base = "http://127.0.0.1:$upstream"
model = "bench"
api_version = "2024-10-21"
api_key = "env::BENCH_UPSTREAM_KEY"

[models.bench_gemini]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.bench_gemini.providers.mock]
type = "gemini"
api_base = "http://127.0.0.1:$upstream/v1beta"
model = "gemini-bench"
api_key = "env::BENCH_UPSTREAM_KEY"

[models.bench_bedrock]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.bench_bedrock.providers.mock]
type = "bedrock"
api_base = "http://127.0.0.1:$upstream"
region = "us-east-1"
model = "bedrock-bench"
access_key_id = "AKIDBENCHEXAMPLE"
secret_access_key = "env::BENCH_UPSTREAM_KEY"

[models.bench_embedding]
endpoint = "embedding"
input_cost_per_token = 0.00000002
routing = ["mock"]
[models.bench_embedding.providers.mock]
type = "openai"
api_base = "http://127.0.0.1:$upstream/v1"
model = "text-embedding-3-small"
api_key = "env::BENCH_UPSTREAM_KEY"

[models.bench_whisper]
endpoint = "transcription"
cost_per_audio_second = 0.0001
routing = ["mock"]
[models.bench_whisper.providers.mock]
type = "openai"
api_base = "http://127.0.0.1:$upstream/v1"
model = "whisper-1"
api_key = "env::BENCH_UPSTREAM_KEY"
EOF
      # A key as real providers issue them: sent upstream, and searched for in every answer.
      export BENCH_UPSTREAM_KEY="sk-bench-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"
      taskset -c "$PROXY_CPU" "$bin" serve --config "$dir/tollgate.toml" \
        >"$dir/stdout.log" 2>"$TOLLGATE_LOG" &
      pid=$!
      remember "$pid"
      for ((i = 0; i < 300; i++)); do
        line=$(grep -m1 -o 'tollgate listening on 127\.0\.0\.1:[0-9]*' "$dir/stdout.log" 2>/dev/null || true)
        [[ -n $line ]] && break
        kill -0 "$pid" 2>/dev/null || { cat "$dir/stdout.log" >&2; die "tollgate exited during startup (set BENCH_TOLLGATE_LOG=FILE to keep its stderr)"; }
        sleep 0.05
      done
      [[ -n $line ]] || { cat "$dir/stdout.log" >&2; die "tollgate printed no 'tollgate listening on 127.0.0.1:PORT' within 15 s (is stdout flushed?)"; }
      T_PORT=${line##*:}
      # The authenticated target uses the key its first start printed (a new store each time).
      unset BENCH_AUTH
      if [[ $auth == required ]]; then
        BENCH_AUTH="Bearer $(sed -n 's/^export TOLLGATE_API_KEY=//p' "$dir/stdout.log")"
        [[ $BENCH_AUTH == "Bearer sk-tollgate-"* ]] || die "$target printed no first key"
        export BENCH_AUTH
        # The key's team pays for every request: reserve, settle and a spend row each.
        "$TOLLGATE_BIN" admin --config "$dir/tollgate.toml" teams topup default 1000000 >/dev/null ||
          die "$target: could not top up the team"
      fi
      wait_port "$T_PORT" "$pid" "$dir/stdout.log"
      T_PIDS=$(tree_of "$pid" | tr '\n' ' ')
      [[ $mode == json ]] && T_BODY=$BODY_TOLLGATE || T_BODY=$BODY_TOLLGATE_SSE
      ;;
  esac
  local p
  if [[ $target != direct ]]; then
    remember $T_PIDS
    for p in $T_PIDS; do T_STOP+=("$p:$(proc_start_time "$p")"); done
  fi
  [[ $mode == json ]] && T_EXPECT='chat.completion' || T_EXPECT='[DONE]'
  return 0
}

stop_target() { ((${#T_STOP[@]})) && stop_pids root "${T_STOP[@]}"; T_STOP=(); return 0; }

# Sanity: one request must succeed with the expected body before measuring.
check_path() { # check_path LABEL [BODY] (default T_BODY)
  local r
  run_capture "$WORK/out.txt" timeout 20 taskset -c "$LOAD_CPU" "$LOADGEN" ttfb --port "$T_PORT" --body "${2:-$T_BODY}" \
    --count 1 --warmup 0 --expect "$T_EXPECT" --marker "" --max-seconds 10
  r=$(cat "$WORK/out.txt")
  [[ $(kv measured "$r") == 1 ]] || { log "$1: sanity request failed: $r"; return 1; }
}

check_hit() { # check_hit LABEL: W_PATH's W_BODY answered 200, then from the cache
  local i cache=""
  for i in 1 2; do
    cache=$(curl -s -o /dev/null -D - --max-time 10 -H 'Content-Type: application/json' \
      ${BENCH_AUTH:+-H "Authorization: $BENCH_AUTH"} --data-binary "@$W_BODY" \
      "http://127.0.0.1:$T_PORT$W_PATH" | tr -d '\r' | sed -n 's/^tollgate-cache: //Ip')
  done
  [[ $cache == hit ]] || { log "$1: sanity requests were not answered from the cache (${cache:-no header})"; return 1; }
}

kv() { # kv KEY "RESULT ... KEY=VALUE ..."
  sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2" | head -n1
}

# ------------------------------------------------------------------ result store and math

declare -A VALS=()   # "target|metric" -> space-separated per-run values
declare -a WARN=()
add() { VALS["$1|$2"]="${VALS["$1|$2"]:-} $3"; }
median() { # median of the words in $1 ("-" if none)
  tr ' ' '\n' <<<"$1" | grep -E '^-?[0-9.]+(e[-+]?[0-9]+)?$' | sort -g | awk '
    { v[NR] = $1 } END { if (NR == 0) { print "-"; exit } if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
med() { median "${VALS["$1|$2"]:-}"; }
maxval() { tr ' ' '\n' <<<"${VALS["$1|$2"]:-}" | grep -E '^-?[0-9.]+$' | sort -g | tail -n1 | grep . || echo "-"; }
calc() { awk "BEGIN { x = $1; printf \"%.${2:-2}f\", x }"; }

# What run_wrk sends: chat (T_BODY), a provider path (anth, azure, gemini, bedrock: the chat
# request to its model, Tollgate only), embed (16 inputs) or upload (10 MiB transcriptions).
wrk_kind() { # wrk_kind TARGET KIND: sets W_PATH W_BODY W_TYPE W_METRIC
  local direct=1
  [[ $1 == tollgate* ]] && direct=0
  W_TYPE=application/json
  case $2 in
    chat) W_PATH=/v1/chat/completions W_BODY=$T_BODY W_METRIC="" ;;
    round) W_PATH=/v1/chat/completions W_BODY=$T_BODY W_METRIC=round_ ;;
    sys) W_PATH=/v1/chat/completions W_BODY=$T_BODY W_METRIC=sys_ ;;
    anth | azure | gemini | bedrock)
      W_PATH=/v1/chat/completions W_BODY=$(provider_body "$2" json) W_METRIC=${2}_
      ;;
    embed)
      W_PATH=/v1/embeddings W_METRIC=embed_
      ((direct)) && W_BODY=$BODY_EMBED_DIRECT || W_BODY=$BODY_EMBED_TOLLGATE
      ;;
    hit) W_PATH=/v1/chat/completions W_BODY=$BODY_HIT W_METRIC=hit_ ;;
    hitsse) W_PATH=/v1/chat/completions W_BODY=$BODY_HIT_SSE W_METRIC=hitsse_ ;;
    hitembed) W_PATH=/v1/embeddings W_BODY=$BODY_HIT_EMBED W_METRIC=hitembed_ ;;
    upload)
      W_PATH=/v1/audio/transcriptions W_METRIC=upload_ W_TYPE=$UPLOAD_TYPE
      ((direct)) && W_BODY=$BODY_UPLOAD_DIRECT || W_BODY=$BODY_UPLOAD_TOLLGATE
      ;;
  esac
}

run_wrk() { # run_wrk TARGET CONNS RUN [KIND]
  local target=$1 c=$2 run=$3 out ticks0 ticks1 load0 load1 store0 store1 reqs dur errs rps cpu m tck=$CLK_TCK
  local user0 sys0 user1 sys1 threads0 threads1 perf_pid=""
  wrk_kind "$target" "${4:-chat}"
  phase_begin "$target"
  if [[ $W_METRIC == sys_ ]]; then
    # The proxy's own system calls over the run (every process of it, nothing else), and the
    # tasks it woke (the client or the mock, on the load CPU: each an interrupt when it slept).
    perf stat -x, -e raw_syscalls:sys_enter,sched:sched_wakeup -o "$WORK/syscalls.txt" \
      -p "$(tr ' ' ',' <<<"${T_PIDS% }")" &
    perf_pid=$!
    remember "$perf_pid"
    sleep 0.2
  fi
  read -r user0 sys0 <<<"$(cpu_ticks_split $T_PIDS)"
  ticks0=$((user0 + sys0))
  threads0=$(store_thread_ticks $T_PIDS)
  store0=$(store_ticks)
  read -r load0 _ <<<"$(cpu_stat "$LOAD_CPU")"
  BENCH_BODY="$W_BODY" BENCH_CONTENT_TYPE="$W_TYPE" run_capture "$WORK/out.txt" timeout $((DUR + 30)) \
    taskset -c "$LOAD_CPU" wrk -t1 -c"$c" -d"${DUR}s" --timeout 10s -s "$BENCH/wrk_post.lua" \
    "http://127.0.0.1:$T_PORT$W_PATH"
  read -r user1 sys1 <<<"$(cpu_ticks_split $T_PIDS)"
  ticks1=$((user1 + sys1))
  threads1=$(store_thread_ticks $T_PIDS)
  store1=$(store_ticks)
  read -r load1 _ <<<"$(cpu_stat "$LOAD_CPU")"
  if [[ -n $perf_pid ]]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  fi
  phase_end "$target" "run $run wrk ${4:-chat} -c$c"
  out=$(grep '^RESULT' "$WORK/out.txt" || true)
  reqs=$(kv requests "$out")
  dur=$(kv duration_us "$out")
  if [[ -z $reqs || -z $dur || $reqs -le 0 ]]; then
    WARN+=("$target run $run: wrk -c$c produced no result")
    # A round keeps one entry per path, so that round i of every path lines up.
    [[ $W_METRIC == round_ ]] && for m in rps cpu loadbusy ucpu scpu threadcpu; do add "$target" "${W_METRIC}$m$c" "-"; done
    return 0
  fi
  errs=$(($(kv connect_err "$out") + $(kv read_err "$out") + $(kv write_err "$out") + $(kv status_err "$out") + $(kv timeout_err "$out")))
  ((errs == 0)) || WARN+=("$target run $run: wrk ${4:-chat} -c$c had $errs errors of $reqs requests ($(grep -o 'connect_err.*timeout_err=[0-9]*' <<<"$out"))")
  rps=$(calc "$reqs / ($dur / 1e6)" 0)
  cpu=$(calc "($ticks1 - $ticks0) * 1e6 / $tck / $reqs" 2)
  add "$target" "${W_METRIC}rps$c" "$rps"
  add "$target" "${W_METRIC}cpu$c" "$cpu"
  add "$target" "${W_METRIC}ucpu$c" "$(calc "($user1 - $user0) * 1e6 / $tck / $reqs" 2)"
  add "$target" "${W_METRIC}scpu$c" "$(calc "($sys1 - $sys0) * 1e6 / $tck / $reqs" 2)"
  # The store's threads apart (none on nginx; on the billed path the ledger's commits): what the
  # rest of the proxy, its request threads, spent is the difference.
  add "$target" "${W_METRIC}threadcpu$c" "$(calc "($threads1 - $threads0) * 1e6 / $tck / $reqs" 2)"
  if [[ -n $perf_pid ]]; then
    # perf counted from before the first request to after the last: a few idle calls more.
    m=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$WORK/syscalls.txt" 2>/dev/null)
    [[ $m =~ ^[0-9]+$ ]] && add "$target" "${W_METRIC}syscalls$c" "$(calc "$m / $reqs" 2)"
    m=$(awk -F, '/sched:sched_wakeup/ { print $1 }' "$WORK/syscalls.txt" 2>/dev/null)
    [[ $m =~ ^[0-9]+$ ]] && add "$target" "${W_METRIC}wakeups$c" "$(calc "$m / $reqs" 2)"
  fi
  add "$target" "${W_METRIC}util$c" "$(calc "($ticks1 - $ticks0) * 1e6 / $tck / $dur * 100" 0)"
  # How busy the load CPU was (the client, the mock, and tollgate_pg's PostgreSQL): past about
  # 90 % the load side, not the proxy, may be what limits the figure.
  add "$target" "${W_METRIC}loadbusy$c" "$(calc "($load1 - $load0) * 1e6 / $tck / $dur * 100" 0)"
  # tollgate_pg: the CPU its PostgreSQL spent per request (on the load CPU).
  [[ $target == tollgate_pg ]] && add "$target" "${W_METRIC}storecpu$c" "$(calc "($store1 - $store0) * 1e6 / $tck / $reqs" 2)"
  log "  $target ${4:-chat} -c$c: $rps req/s, $cpu us CPU/req"
}

rss_kb() { # rss_kb FIELD PID...: the largest VmRSS or VmHWM (KiB) of the given processes
  local p v max=0
  for p in "${@:2}"; do
    v=$(sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$p/status" 2>/dev/null)
    [[ -n $v ]] && ((v > max)) && max=$v
  done
  echo "$max"
}

run_upload() { # run_upload TARGET RUN: 8 uploads at a time; the peak RSS they add
  local target=$1 run=$2 p before peak
  [[ $target == direct ]] && return 0
  # The peak (VmHWM) is reset first, so it is this phase's.
  for p in $T_PIDS; do echo 5 >"/proc/$p/clear_refs" 2>/dev/null || true; done
  before=$(rss_kb VmRSS $T_PIDS)
  run_wrk "$target" 8 "$run" upload
  peak=$(rss_kb VmHWM $T_PIDS)
  add "$target" upload_growth "$(calc "($peak - $before) / 1024" 1)"
  log "  $target uploads: RSS ${before} KiB before, peak ${peak} KiB"
}

rate_failures() { # rate_failures RESULT-LINE: requests of a loadgen rate run that failed or never went
  echo $(($(kv bad_status "$1") + $(kv bad_body "$1") + $(kv io_errors "$1") + $(kv unsent "$1") + $(kv inflight_at_end "$1")))
}

run_rate() { # run_rate TARGET RUN [flood]
  local target=$1 run=$2 out bad flood_pid="" m=""
  if [[ ${3:-} == flood ]]; then
    # Two connections of anonymous sign-in attempts, each with a well-formed link nobody made,
    # from a second before the measured seconds to their end.
    m=flood
    printf '{"token":"ll-tollgate-%s"}' floodfloodfloodfloodfloodflood00 >"$WORK/flood.json"
    BENCH_BODY="$WORK/flood.json" BENCH_ORIGIN="http://127.0.0.1:$T_PORT" \
      timeout $((RATE_DUR + 20)) taskset -c "$LOAD_CPU" wrk -t1 -c2 -d"$((RATE_DUR + 2))s" --timeout 10s \
      -s "$BENCH/wrk_post.lua" "http://127.0.0.1:$T_PORT/console/api/auth/link" >"$WORK/flood.txt" 2>&1 &
    flood_pid=$!
    sleep 1
  fi
  phase_begin "$target"
  run_capture "$WORK/out.txt" timeout $((RATE_DUR + 30)) taskset -c "$LOAD_CPU" "$LOADGEN" rate --port "$T_PORT" \
    --body "$T_BODY" --rate "$RATE" --conns "$RATE_CONNS" --duration "$RATE_DUR" --warmup 1 --drain 2 \
    --expect "$T_EXPECT" --watch "$(tr ' ' ',' <<<"$T_PIDS")"
  phase_end "$target" "run $run fixed rate${m:+ under a sign-in flood}"
  [[ -z $flood_pid ]] || wait "$flood_pid" || true
  out=$(cat "$WORK/out.txt")
  [[ $out == RESULT* ]] || { WARN+=("$target run $run: fixed-rate test produced no result"); return 0; }
  bad=$(rate_failures "$out")
  ((bad == 0)) || WARN+=("$target run $run: fixed-rate test had $bad failed/unsent requests (achieved $(kv achieved_rps "$out") req/s)")
  if [[ -n $m ]]; then
    add "$target" floodp99 "$(calc "$(kv p99_us "$out") / 1000" 3)"
    log "  $target @${RATE}/s under a sign-in flood: p99 $(kv p99_us "$out") us ($(grep -o 'requests=[0-9]*' "$WORK/flood.txt" || echo 'requests=?') sign-in attempts)"
    return 0
  fi
  add "$target" p50 "$(calc "$(kv p50_us "$out") / 1000" 3)"
  add "$target" p99 "$(calc "$(kv p99_us "$out") / 1000" 3)"
  add "$target" cpurate "$(kv cpu_us_per_req "$out")"
  add "$target" hwm "$(calc "$(kv hwm_kb "$out") / 1024" 1)"
  log "  $target @${RATE}/s: p50 $(kv p50_us "$out") us, p99 $(kv p99_us "$out") us, $(kv cpu_us_per_req "$out") us CPU/req, achieved $(kv achieved_rps "$out") req/s"
}

run_same_rate() { # run_same_rate TARGET RUN: CPU per request at SAME_RATE, split user/system
  local target=$1 run=$2 out bad before after n
  before=$(cpu_ticks_split $T_PIDS)
  phase_begin "$target"
  run_capture "$WORK/out.txt" timeout $((RATE_DUR + 30)) taskset -c "$LOAD_CPU" "$LOADGEN" rate --port "$T_PORT" \
    --body "$T_BODY" --rate "$SAME_RATE" --conns 64 --duration "$RATE_DUR" --warmup 1 --drain 2 \
    --expect "$T_EXPECT" --watch "$(tr ' ' ',' <<<"$T_PIDS")"
  phase_end "$target" "run $run at ${SAME_RATE}/s"
  after=$(cpu_ticks_split $T_PIDS)
  out=$(cat "$WORK/out.txt")
  [[ $out == RESULT* ]] || { WARN+=("$target run $run: the same-rate test produced no result"); return 0; }
  bad=$(rate_failures "$out")
  if ((bad != 0)); then
    WARN+=("$target run $run: could not keep ${SAME_RATE}/s ($bad failed/unsent; achieved $(kv achieved_rps "$out") req/s): no same-rate figure")
    return 0
  fi
  n=$(kv ok "$out")
  add "$target" cpusame "$(kv cpu_us_per_req "$out")"
  add "$target" usersame "$(awk -v a="${before% *}" -v b="${after% *}" -v n="$n" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t * 1e6 / n }')"
  add "$target" syssame "$(awk -v a="${before#* }" -v b="${after#* }" -v n="$n" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t * 1e6 / n }')"
  log "  $target @${SAME_RATE}/s: $(kv cpu_us_per_req "$out") us CPU/req, achieved $(kv achieved_rps "$out") req/s"
}

run_ttfb() { # run_ttfb TARGET RUN
  local target=$1 run=$2 out bad
  phase_begin "$target"
  run_capture "$WORK/out.txt" timeout 120 taskset -c "$LOAD_CPU" "$LOADGEN" ttfb --port "$T_PORT" --body "$T_BODY" \
    --count "$TTFB_N" --warmup 100 --expect "$T_EXPECT" --max-seconds 90
  phase_end "$target" "run $run TTFB"
  out=$(cat "$WORK/out.txt")
  [[ $out == RESULT* ]] || { WARN+=("$target run $run: TTFB test produced no result"); return 0; }
  bad=$(($(kv errors "$out") + $(kv bad_status "$out") + $(kv bad_body "$out") + $(kv no_marker "$out")))
  ((bad == 0)) || WARN+=("$target run $run: TTFB test had $bad failed requests")
  add "$target" ttfb50 "$(calc "$(kv ttfb_p50_us "$out") / 1000" 3)"
  add "$target" ttfb99 "$(calc "$(kv ttfb_p99_us "$out") / 1000" 3)"
  log "  $target stream TTFB: p50 $(kv ttfb_p50_us "$out") us, p99 $(kv ttfb_p99_us "$out") us"
}

# What run_stream_rate sends: openai (T_BODY) or a provider path (the streamed request to its
# model, Tollgate only). Sets S_BODY, S_LAT (prefix of the last-byte metrics), S_CPU, S_NAME.
stream_kind() { # stream_kind KIND
  case $1 in
    openai) S_BODY=$T_BODY S_LAT=ttlb S_CPU=cpustream S_NAME=streams ;;
    *)
      S_BODY=$(provider_body "$1" sse) S_LAT=${1}_ttlb S_CPU=${1}_stream_cpu
      S_NAME="${PROVIDER_LABEL[$1]} streams"
      ;;
  esac
}

run_stream_rate() { # run_stream_rate TARGET RUN [KIND]: streams at a fixed rate, timed to their last byte
  local target=$1 run=$2 out bad
  stream_kind "${3:-openai}"
  phase_begin "$target"
  run_capture "$WORK/out.txt" timeout $((STREAM_DUR + 30)) taskset -c "$LOAD_CPU" "$LOADGEN" rate \
    --port "$T_PORT" --body "$S_BODY" --rate "$STREAM_RATE" --conns "$STREAM_CONNS" \
    --duration "$STREAM_DUR" --warmup 1 --drain 2 --expect "$T_EXPECT" \
    --watch "$(tr ' ' ',' <<<"$T_PIDS")"
  phase_end "$target" "run $run $S_NAME at a fixed rate"
  out=$(cat "$WORK/out.txt")
  [[ $out == RESULT* ]] || { WARN+=("$target run $run: $S_NAME fixed-rate test produced no result"); return 0; }
  bad=$(rate_failures "$out")
  ((bad == 0)) || WARN+=("$target run $run: $S_NAME fixed-rate test had $bad failed/unsent streams (achieved $(kv achieved_rps "$out")/s)")
  add "$target" "${S_LAT}50" "$(calc "$(kv p50_us "$out") / 1000" 3)"
  add "$target" "${S_LAT}99" "$(calc "$(kv p99_us "$out") / 1000" 3)"
  add "$target" "$S_CPU" "$(kv cpu_us_per_req "$out")"
  log "  $target $S_NAME @${STREAM_RATE}/s: last byte p50 $(kv p50_us "$out") us, p99 $(kv p99_us "$out") us, $(kv cpu_us_per_req "$out") us CPU/stream"
}

run_soak() { # run_soak TARGET
  local target=$1 out s e
  phase_begin "$target"
  run_capture "$WORK/out.txt" timeout $((SOAK + 40)) taskset -c "$LOAD_CPU" "$LOADGEN" rate --port "$T_PORT" \
    --body "$T_BODY" --rate "$RATE" --conns "$RATE_CONNS" --duration "$SOAK" --warmup 2 --drain 2 --sample-every 5 \
    --expect "$T_EXPECT" --watch "$(tr ' ' ',' <<<"$T_PIDS")"
  phase_end "$target" "soak"
  out=$(cat "$WORK/out.txt")
  [[ $out == RESULT* ]] || { WARN+=("$target: soak produced no result"); return 0; }
  s=$(kv rss_start_kb "$out")
  e=$(kv rss_end_kb "$out")
  add "$target" soak_start "$(calc "$s / 1024" 1)"
  add "$target" soak_end "$(calc "$e / 1024" 1)"
  add "$target" soak_growth_kb "$((e - s))"
  add "$target" soak_hwm "$(calc "$(kv hwm_kb "$out") / 1024" 1)"
  SOAK_SAMPLES["$target"]=$(kv rss_samples_kb "$out")
  # growth over the second half of the soak, past any warm-up growth
  add "$target" soak_growth2_kb "$(tr ',' '\n' <<<"${SOAK_SAMPLES[$target]}" | awk '{ v[NR] = $1 } END { if (NR) print v[NR] - v[int((NR + 1) / 2)] }')"
  log "  $target soak ${SOAK}s @${RATE}/s: RSS ${s} -> ${e} KiB (samples every 5 s: $(kv rss_samples_kb "$out"))"
}
declare -A SOAK_SAMPLES=()

# The store's work per settled request, over the soak (the billed targets): spend rows written,
# and on PostgreSQL its transactions, rows changed, WAL bytes and CPU from its statistics; with
# perf, the gateway's system calls that reach the store (SQLite's pwrite/fcntl/fdatasync, libpq's
# send: one per round trip).
store_snapshot() { # store_snapshot TARGET: "spend_rows commits tuples wal_bytes store_ticks"
  if [[ $1 == tollgate_pg ]]; then
    sleep 1.2  # the statistics a backend reports reach the views at most a second later
    "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d tollgate -XAtq -F ' ' -c "
      SELECT (SELECT count(*) FROM spend), xact_commit, tup_inserted + tup_updated + tup_deleted,
             (SELECT wal_bytes FROM pg_stat_wal) FROM pg_stat_database WHERE datname = 'tollgate'" |
      tr '\n' ' '
    store_ticks
  else
    echo "$(sqlite3 -readonly "$WORK/$1-json/tollgate.db" 'SELECT count(*) FROM spend') - - - -"
  fi
}
STORE_SYSCALLS=syscalls:sys_enter_pwrite64,syscalls:sys_enter_fcntl,syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync,syscalls:sys_enter_sendto
run_store_soak() { # run_store_soak TARGET: the soak, with the store's work per settled request
  local t=$1 before after perf_pid="" rows e
  before=$(store_snapshot "$t")
  if command -v perf >/dev/null 2>&1 && perf stat -e "$STORE_SYSCALLS" -x, -o /dev/null true 2>/dev/null; then
    perf stat -e "$STORE_SYSCALLS" -x, -o "$WORK/soak-perf.txt" -p "$(tr ' ' ',' <<<"${T_PIDS% }")" &
    perf_pid=$!
    remember "$perf_pid"
  fi
  run_soak "$t"
  if [[ -n $perf_pid ]]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  fi
  after=$(store_snapshot "$t")
  read -r -a b <<<"$before"
  read -r -a a <<<"$after"
  rows=$((a[0] - b[0]))
  ((rows > 0)) || { WARN+=("$t: no spend rows written during the soak"); return 0; }
  add "$t" store_rows "$rows"
  if [[ $t == tollgate_pg ]]; then
    add "$t" store_commits "$(calc "(${a[1]} - ${b[1]}) / $rows" 3)"
    add "$t" store_tuples "$(calc "(${a[2]} - ${b[2]}) / $rows" 2)"
    add "$t" store_wal "$(calc "(${a[3]} - ${b[3]}) / $rows" 0)"
    add "$t" store_cpu "$(calc "(${a[4]} - ${b[4]}) * 1e6 / $CLK_TCK / $rows" 1)"
  fi
  if [[ -n $perf_pid && -s $WORK/soak-perf.txt ]]; then
    for e in pwrite64 fcntl fdatasync fsync sendto; do
      add "$t" "store_$e" "$(awk -F, -v e="sys_enter_$e" -v r="$rows" '$3 ~ e && $1 ~ /^[0-9]+$/ { printf "%.3f", $1 / r }' "$WORK/soak-perf.txt")"
    done
  fi
  log "  $t soak: $rows settled; store work per settled request: $(for k in commits tuples wal cpu pwrite64 fcntl fdatasync sendto; do printf '%s=%s ' "$k" "$(med "$t" "store_$k")"; done)"
}

# ------------------------------------------------------------------ main loop

# warm-up (not recorded): connections, upstream pool, allocator
warm_up() { # warm_up BODY: 1 s of wrk at 64 connections
  BENCH_BODY="$1" run_capture /dev/null timeout 30 taskset -c "$LOAD_CPU" wrk -t1 -c64 -d1s \
    -s "$BENCH/wrk_post.lua" "http://127.0.0.1:$T_PORT/v1/chat/completions"
}

ACTIVE=()
for t in $TARGETS; do
  if [[ $t == tollgate* && ! -x $TOLLGATE_BIN ]]; then
    WARN+=("tollgate skipped: no executable at ${TOLLGATE_BIN#"$ROOT/"} (build it or set TOLLGATE_BIN)")
    continue
  fi
  ACTIVE+=("$t")
done
((${#ACTIVE[@]})) || die "nothing to benchmark: ${WARN[*]:-no targets}"

declare -A BROKEN=()
[[ " ${ACTIVE[*]} " == *" tollgate_pg "* ]] && start_postgres
[[ -z $IDLE_WARN ]] || WARN+=("$IDLE_WARN")
T_STOP=()
START_TS=$(date +%s)
log "targets: ${ACTIVE[*]}; runs: $RUNS; proxy on CPU $PROXY_CPU, load+mock on CPU $LOAD_CPU"
measure_unit() { # measure_unit TARGET RUN: one run of every phase for one path
  local t=$1 run=$2
  start_target "$t" json
  if ! check_path "$t (json)"; then
    BROKEN[$t]=1
    WARN+=("$t: JSON path failed its sanity request; target dropped")
    stop_target
    return 0
  fi
  warm_up "$T_BODY"
  run_wrk "$t" 16 "$run"
  run_wrk "$t" 64 "$run"
  run_rate "$t" "$run"
  ((SAME_RATE > 0)) && [[ $t == nginx || $t == tollgate ]] && run_same_rate "$t" "$run"
  ((FLOOD)) && [[ $t == tollgate_auth || $t == tollgate_pg ]] && run_rate "$t" "$run" flood
  # The provider paths (Tollgate only: nginx cannot translate, and direct has nothing to):
  # the same request to a model whose provider speaks another wire.
  if [[ $t == tollgate* ]]; then
    for p in "${PROVIDER_PATHS[@]}"; do
      if check_path "$t (${PROVIDER_LABEL[$p]} json)" "$(provider_body "$p" json)"; then
        warm_up "$(provider_body "$p" json)"
        run_wrk "$t" 64 "$run" "$p"
      else
        WARN+=("$t run $run: ${PROVIDER_LABEL[$p]} JSON path failed its sanity request")
      fi
    done
  fi
  run_wrk "$t" 64 "$run" embed
  # Cache hits, whole, streamed and embeddings: the sanity requests write each answer, then see
  # it answered from the cache.
  if [[ $t == tollgate* ]]; then
    for kind in hit hitsse hitembed; do
      wrk_kind "$t" "$kind"
      if check_hit "$t ($kind)"; then
        run_wrk "$t" 64 "$run" "$kind"
      else
        WARN+=("$t run $run: cache $kind path failed its sanity request")
      fi
    done
  fi
  run_upload "$t" "$run"
  stop_target

  start_target "$t" sse
  if check_path "$t (stream)"; then
    run_ttfb "$t" "$run"
    run_stream_rate "$t" "$run"
  else
    WARN+=("$t run $run: streaming path failed its sanity request")
  fi
  if [[ $t == tollgate* ]]; then
    for p in "${PROVIDER_PATHS[@]}"; do
      if check_path "$t (${PROVIDER_LABEL[$p]} stream)" "$(provider_body "$p" sse)"; then
        run_stream_rate "$t" "$run" "$p"
      else
        WARN+=("$t run $run: ${PROVIDER_LABEL[$p]} streaming path failed its sanity request")
      fi
    done
  fi
  stop_target
}

# A run of one path disturbed by other load on our CPUs is thrown away and repeated, at
# most BENCH_RETRIES times per run, and only while the estimated total time stays within
# BENCH_BUDGET seconds; otherwise the disturbed figures are kept (and listed as warnings).
declare -A SNAP=()
n_units=$((RUNS * ${#ACTIVE[@]}))
n_soak=0
for t in "${ACTIVE[@]}"; do [[ $t == direct ]] || n_soak=$((n_soak + 1)); done
soak_est=0
((SOAK > 0)) && soak_est=$((n_soak * (SOAK + 6)))
units_done=0
for ((run = 1; run <= RUNS; run++)); do
  for t in "${ACTIVE[@]}"; do
    for ((attempt = 0; attempt <= RETRIES; attempt++)); do
      [[ -n ${BROKEN[$t]:-} ]] && break
      if ((attempt)); then log "run $run/$RUNS: $t (retry $attempt)"; else log "run $run/$RUNS: $t"; fi
      SNAP=()
      for k in "${!VALS[@]}"; do [[ $k == "$t|"* ]] && SNAP[$k]=${VALS[$k]}; done
      nwarn=${#WARN[@]}
      DISTURBED=0
      unit_t0=$(date +%s)
      measure_unit "$t" "$run"
      unit_secs=$(($(date +%s) - unit_t0))
      ((DISTURBED && attempt < RETRIES)) || break
      est=$(($(date +%s) - START_TS + unit_secs * (n_units - units_done) + soak_est + 30))
      if ((est > BUDGET)); then
        log "  disturbed by other load, but a retry would exceed BENCH_BUDGET=${BUDGET}s; keeping it"
        break
      fi
      for k in "${!VALS[@]}"; do [[ $k == "$t|"* ]] && unset "VALS[$k]"; done
      for k in "${!SNAP[@]}"; do VALS[$k]=${SNAP[$k]}; done
      WARN=("${WARN[@]:0:nwarn}")
      WARN+=("$t run $run: attempt $((attempt + 1)) disturbed by other load, repeated")
      log "  disturbed by other load; repeating"
      for ((w = 0; w < 6; w++)); do  # give a burst of other work up to ~30 s to pass
        idle_check && break
        sleep 4
      done
    done
    units_done=$((units_done + 1))
  done
done

# ------------------------------------------------------------------ interleaved rounds
# This machine's speed drifts (nginx alone measured 41k req/s, then 25k, a minute apart), so a
# ratio of two figures taken a minute apart measures the drift as much as the proxies. Here
# every path is started once, then loaded in turn for ROUND_DUR seconds at 64 connections,
# round after round, each round beginning with the next path: nginx, a second identical nginx
# (the method's control: its ratio to the first should be 1), the open path, the billed path.
ROUND_PATHS=()
has() { [[ " ${ACTIVE[*]} " == *" $1 "* && -z ${BROKEN[$1]:-} ]]; }
if ((ROUNDS > 0)) && has nginx; then
  ROUND_PATHS=(nginx nginx_b)
  ((IO_FLOOR)) && ROUND_PATHS+=(floor)
  for t in tollgate tollgate_auth tollgate_pg tollgate_dark tollgate_traced tollgate_limited; do
    has "$t" && ROUND_PATHS+=("$t")
  done
  [[ -n $BASE_BIN ]] && has tollgate && ROUND_PATHS+=(tollgate_base)
  [[ -n $BASE_BIN ]] && has tollgate_auth && ROUND_PATHS+=(tollgate_auth_base)
fi
if ((${#ROUND_PATHS[@]} > 2)); then
  declare -A RT_PORT=() RT_PIDS=() RT_BODY=() RT_AUTH=()
  ROUND_STOP=()
  for t in "${ROUND_PATHS[@]}"; do
    start_target "$t" json
    RT_PORT[$t]=$T_PORT RT_PIDS[$t]=$T_PIDS RT_BODY[$t]=$T_BODY RT_AUTH[$t]=${BENCH_AUTH:-}
    ROUND_STOP+=("${T_STOP[@]}")
    T_STOP=()
    check_path "$t (rounds)" || die "$t: the rounds' sanity request failed"
    warm_up "$T_BODY"
  done
  saved_dur=$DUR
  DUR=$ROUND_DUR
  n_paths=${#ROUND_PATHS[@]}
  log "interleaved rounds: $ROUNDS x (${ROUND_PATHS[*]}), ${ROUND_DUR}s each at 64 connections"
  for ((r = 0; r < ROUNDS; r++)); do
    for ((i = 0; i < n_paths; i++)); do
      t=${ROUND_PATHS[$(((r + i) % n_paths))]}
      T_PORT=${RT_PORT[$t]} T_PIDS=${RT_PIDS[$t]} T_BODY=${RT_BODY[$t]}
      if [[ -n ${RT_AUTH[$t]} ]]; then export BENCH_AUTH=${RT_AUTH[$t]}; else unset BENCH_AUTH; fi
      run_wrk "$t" 64 "round $((r + 1))" round
    done
  done
  # One more round, each path's system calls counted with perf (apart from the rounds, whose
  # CPU figures the counting would raise), and the host's speed: GET /health on the open path.
  for t in "${ROUND_PATHS[@]}"; do
    T_PORT=${RT_PORT[$t]} T_PIDS=${RT_PIDS[$t]} T_BODY=${RT_BODY[$t]}
    if [[ -n ${RT_AUTH[$t]} ]]; then export BENCH_AUTH=${RT_AUTH[$t]}; else unset BENCH_AUTH; fi
    run_wrk "$t" 64 "syscalls" sys
  done
  if has tollgate; then
    run_capture "$WORK/out.txt" timeout $((ROUND_DUR + 30)) taskset -c "$LOAD_CPU" \
      wrk -t1 -c64 -d"${ROUND_DUR}s" "http://127.0.0.1:${RT_PORT[tollgate]}/health"
    add tollgate health_rps "$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$WORK/out.txt")"
  fi
  if ((PERF)); then
    # A profile of each path under the rounds' load, nginx's too (not counted in any figure).
    for t in "${ROUND_PATHS[@]}"; do
      T_PORT=${RT_PORT[$t]} T_PIDS=${RT_PIDS[$t]} T_BODY=${RT_BODY[$t]}
      if [[ -n ${RT_AUTH[$t]} ]]; then export BENCH_AUTH=${RT_AUTH[$t]}; else unset BENCH_AUTH; fi
      perf record -q -g -F 999 -o "$WORK/perf-$t.data" -p "$(tr ' ' ',' <<<"${T_PIDS% }")" 2>/dev/null &
      perf_pid=$!
      remember "$perf_pid"
      BENCH_BODY="$T_BODY" run_capture /dev/null timeout $((ROUND_DUR + 30)) taskset -c "$LOAD_CPU" \
        wrk -t1 -c64 -d"${ROUND_DUR}s" -s "$BENCH/wrk_post.lua" "http://127.0.0.1:$T_PORT/v1/chat/completions"
      kill -INT "$perf_pid" 2>/dev/null || true
      wait "$perf_pid" 2>/dev/null || true
      { perf report -i "$WORK/perf-$t.data" --stdio --no-children --sort comm -F overhead,comm \
          -g none 2>/dev/null
        perf report -i "$WORK/perf-$t.data" --stdio --no-children --sort comm,dso,symbol \
          -F overhead,comm,dso,sym --percent-limit 0.7 -g none 2>/dev/null | sort -rn
      } | grep -v '^#' | grep -v '^$' | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/ +$//' \
        >"$OUT/perf-$t.txt" || true
      log "  profile of $t: ${OUT#"$ROOT/"}/perf-$t.txt"
    done
  fi
  DUR=$saved_dur
  stop_pids root "${ROUND_STOP[@]}"
fi

if ((SOAK > 0)); then
  for t in "${ACTIVE[@]}"; do
    [[ $t == direct || -n ${BROKEN[$t]:-} ]] && continue
    log "soak: $t, ${SOAK}s at ${RATE} req/s"
    start_target "$t" json
    if [[ $t == tollgate_auth || $t == tollgate_pg ]]; then run_store_soak "$t"; else run_soak "$t"; fi
    stop_target
    if [[ $t == tollgate_auth || $t == tollgate_pg ]]; then
      # At its exit the gateway says what its ledger's commits held: the group commit at this rate.
      line=$(grep -m1 '^tollgate: ledger: ' "$WORK/$t-json/stdout.log" || true)
      log "  $t soak: ${line:-no ledger line}"
      add "$t" ledger_ops "$(sed -n 's/.*(\([0-9.]*\) per commit.*/\1/p' <<<"$line")"
      add "$t" ledger_max "$(sed -n 's/.*at most \([0-9]*\)).*/\1/p' <<<"$line")"
    fi
  done
fi

# ------------------------------------------------------------------ the store's floor

FLOOR_TXT=""
if ((FLOOR > 0)) && has tollgate_auth; then
  log "the store's floor: bench/commit_floor.cpp on CPU $PROXY_CPU, $FLOOR requests a line"
  g++ -O2 -std=c++20 -Wall -Wextra -o "$OUT/commit_floor" "$BENCH/commit_floor.cpp" -lsqlite3 ||
    die "commit_floor build failed"
  mkdir -p "$WORK/floor"
  FLOOR_TXT=$(taskset -c "$PROXY_CPU" "$OUT/commit_floor" "$WORK/floor" "$FLOOR") ||
    WARN+=("commit_floor failed")
fi

# ------------------------------------------------------------------ report

ELAPSED=$(($(date +%s) - START_TS))
cell() { if has "$1"; then med "$1" "$2"; else echo "-"; fi; }
divide() { # divide NUM DEN: NUM/DEN to two decimals; "-" if either is "-" or DEN is 0
  [[ $1 == - || $2 == - ]] && { echo "-"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'
}
ratio() { divide "$(cell tollgate "$1")" "$(cell nginx "$1")"; }          # tollgate/nginx
keyratio() { divide "$(cell tollgate_auth "$1")" "$(cell tollgate "$1")"; } # tollgate_auth/tollgate
pathratio() { # pathratio TARGET PATH_METRIC OPENAI_METRIC: a provider path / the OpenAI path of one target
  divide "$(cell "$1" "$2")" "$(cell "$1" "$3")"
}
delta() { # tollgate - nginx, ms
  local n g
  n=$(cell nginx "$1"); g=$(cell tollgate "$1")
  [[ $n == - || $g == - ]] && { echo "-"; return; }
  awk -v n="$n" -v g="$g" 'BEGIN { printf "%+.3f ms", g - n }'
}

REPORT="$OUT/results.md"
{
  echo "Tollgate bench: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, nginx $(nginx -v 2>&1 | sed 's|.*/||'), runs=$RUNS (medians), wrk ${DUR}s per point, fixed rate ${RATE}/s over ${RATE_CONNS} conns for ${RATE_DUR}s, TTFB over ${TTFB_N} sequential requests, streams at ${STREAM_RATE}/s over ${STREAM_CONNS} conns for ${STREAM_DUR}s, soak ${SOAK}s, request $(wc -c <"$BODY_DIRECT") bytes"
  echo
  printf '| %-32s | %9s | %9s | %9s | %-14s | %9s | %-9s | %9s | %-9s |\n' "metric" "direct" "nginx" "tollgate" "tollgate/nginx" "with key" "key/open" "key, PG" "PG/SQLite"
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "----------------------------------" "----------:" "----------:" "----------:" "----------------" "----------:" "-----------" "----------:" "-----------"
  fmt() { # fmt PRINTF-FORMAT VALUE ("-" stays "-")
    [[ $2 == - ]] && { echo "-"; return; }
    awk -v v="$2" "BEGIN { printf \"$1\", v }"
  }
  row() { # row LABEL METRIC KIND(ratio|delta|none) FORMAT
    local cmp
    case $3 in delta) cmp=$(delta "$2") ;; ratio) cmp=$(ratio "$2") ;; *) cmp="" ;; esac
    printf '| %-32s | %9s | %9s | %9s | %-14s | %9s | %-9s | %9s | %-9s |\n' "$1" "$(fmt "$4" "$(cell direct "$2")")" \
      "$(fmt "$4" "$(cell nginx "$2")")" "$(fmt "$4" "$(cell tollgate "$2")")" "$cmp" \
      "$(fmt "$4" "$(cell tollgate_auth "$2")")" "$(keyratio "$2")" \
      "$(fmt "$4" "$(cell tollgate_pg "$2")")" "$(divide "$(cell tollgate_pg "$2")" "$(cell tollgate_auth "$2")")"
  }
  row "req/s @16 conns" rps16 ratio %.0f
  row "req/s @64 conns" rps64 ratio %.0f
  row "CPU busy @64 conns (%)" util64 ratio %.0f
  row "CPU us/req @64 conns" cpu64 ratio %.1f
  row "CPU us/req @${RATE} req/s" cpurate ratio %.1f
  ((SAME_RATE > 0)) && row "CPU us/req @${SAME_RATE} req/s" cpusame ratio %.1f
  ((SAME_RATE > 0)) && row "  user us/req @${SAME_RATE} req/s" usersame ratio %.2f
  ((SAME_RATE > 0)) && row "  sys us/req @${SAME_RATE} req/s" syssame ratio %.2f
  row "latency p50 @${RATE} req/s (ms)" p50 delta %.3f
  row "latency p99 @${RATE} req/s (ms)" p99 delta %.3f
  ((FLOOD)) && row "p99 @${RATE}/s, sign-in flood (ms)" floodp99 none %.3f
  row "stream TTFB p50 (ms)" ttfb50 delta %.3f
  row "stream TTFB p99 (ms)" ttfb99 delta %.3f
  row "CPU us/stream @${STREAM_RATE} streams/s" cpustream ratio %.1f
  row "stream last byte p50 @${STREAM_RATE}/s (ms)" ttlb50 delta %.3f
  row "stream last byte p99 @${STREAM_RATE}/s (ms)" ttlb99 delta %.3f
  row "peak RSS VmHWM (MiB)" hwm ratio %.1f
  row "embeddings req/s @64 conns" embed_rps64 ratio %.0f
  row "embeddings CPU us/req @64 conns" embed_cpu64 ratio %.1f
  row "cache hit req/s @64 conns" hit_rps64 none %.0f
  row "cache hit CPU us/req @64" hit_cpu64 none %.1f
  row "streamed hit req/s @64 conns" hitsse_rps64 none %.0f
  row "streamed hit CPU us/req @64" hitsse_cpu64 none %.1f
  row "embeddings hit req/s @64 conns" hitembed_rps64 none %.0f
  row "uploads/s (${UPLOAD_MB} MiB, 8 at a time)" upload_rps8 ratio %.2f
  row "upload CPU us/upload" upload_cpu8 ratio %.0f
  row "upload peak RSS growth (MiB)" upload_growth none %.1f
  otherload() { # max other load "proxy CPU/load CPU"
    has "$1" || { echo "-"; return; }
    echo "$(maxval "$1" foreign_p)/$(maxval "$1" foreign_l)"
  }
  printf '| %-32s | %9s | %9s | %9s | %-14s | %9s | %-9s | %9s | %-9s |\n' "max other load CPU $PROXY_CPU/$LOAD_CPU (%)" \
    "$(otherload direct)" "$(otherload nginx)" "$(otherload tollgate)" "" "$(otherload tollgate_auth)" "" \
    "$(otherload tollgate_pg)" ""
  if ((SOAK > 0)); then
    row "soak RSS start (MiB)" soak_start ratio %.1f
    row "soak RSS end (MiB)" soak_end ratio %.1f
    row "soak RSS growth (KiB)" soak_growth_kb none %.0f
    row "soak RSS growth, 2nd half (KiB)" soak_growth2_kb none %.0f
    row "ledger ops/commit (soak)" ledger_ops none %.1f
    row "ledger largest commit (soak)" ledger_max none %.0f
  fi
  echo
  echo "direct = client -> mock upstream; its CPU/RSS figures are the mock nginx worker's (it shares CPU $LOAD_CPU with the client)."
  echo "nginx/tollgate CPU figures sum every process of the proxy; RSS figures are the process that used the most CPU (the one serving requests)."
  echo
  if { has tollgate || has tollgate_auth; } && ((${#PROVIDER_PATHS[@]})); then
    echo "Provider paths: the same requests to a model whose provider speaks another wire (anth: Anthropic's Messages API; azure: OpenAI's at a deployment; gemini: generateContent; bedrock: Converse, signed, its stream AWS's binary event stream), each answered the same text and usage; PATH/openai = this path / the OpenAI-compatible path of the same target, same run."
    echo
    for p in "${PROVIDER_PATHS[@]}"; do
      printf '| %-42s | %9s | %-11s | %9s | %-11s |\n' "metric (${PROVIDER_LABEL[$p]} path)" "tollgate" "$p/openai" "with key" "$p/openai"
      printf '|%s|%s|%s|%s|%s|\n' "--------------------------------------------" "----------:" "-------------" "----------:" "-------------"
      arow() { # arow LABEL PATH_METRIC OPENAI_METRIC FORMAT
        printf '| %-42s | %9s | %-11s | %9s | %-11s |\n' "$1" "$(fmt "$4" "$(cell tollgate "$2")")" \
          "$(pathratio tollgate "$2" "$3")" "$(fmt "$4" "$(cell tollgate_auth "$2")")" "$(pathratio tollgate_auth "$2" "$3")"
      }
      arow "req/s @64 conns" "${p}_rps64" rps64 %.0f
      arow "CPU busy @64 conns (%)" "${p}_util64" util64 %.0f
      arow "CPU us/req @64 conns" "${p}_cpu64" cpu64 %.1f
      arow "CPU us/stream @${STREAM_RATE} streams/s" "${p}_stream_cpu" cpustream %.1f
      arow "stream last byte p50 @${STREAM_RATE}/s (ms)" "${p}_ttlb50" ttlb50 %.3f
      arow "stream last byte p99 @${STREAM_RATE}/s (ms)" "${p}_ttlb99" ttlb99 %.3f
      echo
    done
  fi
  if ((SOAK > 0)) && { has tollgate_auth || has tollgate_pg; }; then
    echo "The store's work per settled request, over the soak at ${RATE} req/s (system calls counted with perf;"
    echo "on PostgreSQL, libpq's send calls are its round trips, and the rest comes from its statistics views):"
    echo
    printf '| %-44s | %12s | %12s |\n' "per settled request" "SQLite" "PostgreSQL"
    printf '|%s|%s|%s|\n' "----------------------------------------------" "-------------:" "-------------:"
    srow() { printf '| %-44s | %12s | %12s |\n' "$1" "$(cell tollgate_auth "$2")" "$(cell tollgate_pg "$2")"; }
    srow "settled requests in the soak" store_rows
    srow "ledger operations per commit" ledger_ops
    srow "store transactions (PostgreSQL)" store_commits
    srow "rows inserted/updated/deleted (PostgreSQL)" store_tuples
    srow "WAL bytes (PostgreSQL)" store_wal
    srow "store CPU us (PostgreSQL, its processes)" store_cpu
    srow "round trips (libpq send calls)" store_sendto
    srow "pwrite calls (SQLite: two per WAL page)" store_pwrite64
    srow "fcntl calls (SQLite's locks)" store_fcntl
    srow "fdatasync calls" store_fdatasync
    echo
  fi
  if ((${#ROUND_PATHS[@]} > 2)); then
    # Rounds in which the load CPU passed BENCH_LOAD_MAX % for any path are left out: there the
    # client, the mock or PostgreSQL, not the proxy, may have set the pace. A failed path's "-"
    # leaves its round out too.
    KEPT_ROUNDS=$(for t in "${ROUND_PATHS[@]}"; do echo "${VALS["$t|round_loadbusy64"]:-}"; done | awk -v max="$LOAD_MAX" -v n="$ROUNDS" '
      { m = split($0, v, " "); for (i = 1; i <= n; i++) if (i > m || v[i] == "-" || v[i] + 0 > max) out[i] = 1 }
      END { for (i = 1; i <= n; i++) if (!out[i]) printf "%d ", i }')
    n_kept=$(wc -w <<<"$KEPT_ROUNDS")
    series() { # series PATH METRIC: the kept rounds' values
      awk -v a="${VALS["$1|$2"]:-}" -v k="$KEPT_ROUNDS" 'BEGIN { split(a, v, " "); n = split(k, r, " ")
        for (i = 1; i <= n; i++) printf "%s ", v[r[i]] }'
    }
    stats() { # stats LIST: "median min max" of the numbers in LIST
      awk -v a="$1" 'BEGIN { m = split(a, r, " "); if (m == 0) { print "- - -"; exit }
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (r[j] + 0 < r[i] + 0) { t = r[i]; r[i] = r[j]; r[j] = t }
        printf "%s %s %s", (m % 2) ? r[(m + 1) / 2] : (r[m / 2] + r[m / 2 + 1]) / 2, r[1], r[m] }'
    }
    per_round() { # per_round NUM_LIST DEN_LIST: the per-round ratios
      awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
        for (i = 1; i <= n; i++) if (y[i] > 0) printf "%.4f ", x[i] / y[i] }'
    }
    request_series() { # request_series PATH: each kept round's CPU per request less its store threads'
      awk -v a="$(series "$1" round_cpu64)" -v b="$(series "$1" round_threadcpu64)" 'BEGIN {
        n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) printf "%.2f ", x[i] - y[i] }'
    }
    best_rps=$(stats "$(series nginx round_rps64)" | awk '{ print $3 }')
    best_cpu=$(stats "$(series nginx round_cpu64)" | awk '{ print $2 }')
    ((n_kept > 0)) || WARN+=("interleaved rounds: every round had the load CPU above ${LOAD_MAX}% busy; none is reported")
    ((n_kept == ROUNDS)) || WARN+=("interleaved rounds: $((ROUNDS - n_kept)) of $ROUNDS left out (load CPU above ${LOAD_MAX}% busy, or a path failed); kept: $KEPT_ROUNDS")
    echo "Interleaved rounds: ${n_kept} of ${ROUNDS} rounds kept (load CPU at most ${LOAD_MAX}% busy), ${ROUND_DUR}s per path at 64 connections, the paths in"
    echo "turn; nginx at its best round: ${best_rps} req/s, ${best_cpu} us CPU/req. \"vs best\" is the"
    echo "path's median over the rounds against that; \"per round\" is the median (min-max) of the"
    echo "ratios to nginx in the same round. nginx_b is a second nginx: the method's control."
    echo
    echo "| path          | req/s (median) | vs best | per round          | CPU us/req (median) | vs best | per round          | load CPU busy % (max) |"
    echo "|---------------|---------------:|--------:|--------------------|--------------------:|--------:|--------------------|----------------------:|"
    declare -A RB_RPS=() RB_CPU=()
    for t in "${ROUND_PATHS[@]}"; do
      read -r rmed _ _ <<<"$(stats "$(series "$t" round_rps64)")"
      read -r cmed _ _ <<<"$(stats "$(series "$t" round_cpu64)")"
      read -r pr_med pr_min pr_max <<<"$(stats "$(per_round "$(series "$t" round_rps64)" "$(series nginx round_rps64)")")"
      read -r pc_med pc_min pc_max <<<"$(stats "$(per_round "$(series "$t" round_cpu64)" "$(series nginx round_cpu64)")")"
      RB_RPS[$t]=$(divide "$rmed" "$best_rps")
      RB_CPU[$t]=$(divide "$cmed" "$best_cpu")
      printf '| %-13s | %14s | %7s | %-18s | %19s | %7s | %-18s | %21s |\n' "$t" "$rmed" "${RB_RPS[$t]}" \
        "$(printf '%.2f (%.2f-%.2f)' "$pr_med" "$pr_min" "$pr_max")" "$cmed" "${RB_CPU[$t]}" \
        "$(printf '%.2f (%.2f-%.2f)' "$pc_med" "$pc_min" "$pc_max")" "$(maxval "$t" round_loadbusy64)"
    done
    echo
    echo "Where each path's CPU goes: user and system time per request (median of the kept rounds), and"
    echo "system calls and wake-ups of other tasks per request, counted in one more round of each path"
    echo "with \`perf stat -e raw_syscalls:sys_enter,sched:sched_wakeup -p <the proxy's processes>\`"
    echo "(apart from the rounds: counting raises the CPU it counts). A wake-up of a task whose CPU"
    echo "sleeps is an interprocessor interrupt, priced by the host. Host speed: nginx ${best_cpu} us"
    echo "CPU/req at its best round; GET /health on the open path: $(med tollgate health_rps) req/s at"
    echo "64 connections."
    echo
    echo "| path          | user us/req | sys us/req | system calls/req | wake-ups/req | store threads us/req |"
    echo "|---------------|------------:|-----------:|-----------------:|-------------:|---------------------:|"
    for t in "${ROUND_PATHS[@]}"; do
      read -r umed _ _ <<<"$(stats "$(series "$t" round_ucpu64)")"
      read -r smed _ _ <<<"$(stats "$(series "$t" round_scpu64)")"
      read -r tmed _ _ <<<"$(stats "$(series "$t" round_threadcpu64)")"
      printf '| %-13s | %11s | %10s | %16s | %12s | %20s |\n' "$t" "$umed" "$smed" \
        "$(med "$t" sys_syscalls64)" "$(med "$t" sys_wakeups64)" "$tmed"
    done
    echo
    echo "Store threads: the gateway's writer, checkpointer and key follower (CPU per request from"
    echo "/proc/<pid>/task/*/stat over each round); the rest of its CPU is its request threads'."
    echo
    if has tollgate_pg; then
      read -r smed smin smax <<<"$(stats "$(series tollgate_pg round_storecpu64)")"
      echo "tollgate_pg: PostgreSQL's own CPU per request (on the load CPU, not in the table's): ${smed} us (${smin}-${smax})."
      echo
    fi
    echo "Targets against nginx's best round (the median of per-round ratios beside):"
    round_verdict() { awk -v v="$1" "BEGIN { print (v != \"-\" && $2) ? \"PASS\" : \"FAIL\" }"; }
    printf '  %-52s %s\n' "control: nginx_b / nginx per round ~ 1" \
      "$(stats "$(per_round "$(series nginx_b round_rps64)" "$(series nginx round_rps64)")" | awk '{ printf "%.2f (%.2f-%.2f)", $1, $2, $3 }')"
    if [[ -n ${RB_RPS[tollgate]:-} ]]; then
      printf '  %-52s %s (%sx; per round %s)\n' "open: req/s @64 conns >= 0.65x nginx" \
        "$(round_verdict "${RB_RPS[tollgate]}" 'v >= 0.65')" "${RB_RPS[tollgate]}" \
        "$(stats "$(per_round "$(series tollgate round_rps64)" "$(series nginx round_rps64)")" | awk '{ printf "%.2f", $1 }')"
      printf '  %-52s %s (%sx; per round %s)\n' "open: CPU us/req @64 conns <= 1.5x nginx" \
        "$(round_verdict "${RB_CPU[tollgate]}" 'v <= 1.5')" "${RB_CPU[tollgate]}" \
        "$(stats "$(per_round "$(series tollgate round_cpu64)" "$(series nginx round_cpu64)")" | awk '{ printf "%.2f", $1 }')"
    fi
    if [[ -n ${RB_CPU[floor]:-} ]]; then
      # The I/O stack's own CPU (bench/proxy_floor.cpp): what no work in the gateway can remove.
      printf '  %-52s %s\n' "floor (the I/O stack alone): CPU us/req vs nginx" \
        "$(stats "$(per_round "$(series floor round_cpu64)" "$(series nginx round_cpu64)")" | awk '{ printf "%.2fx per round, median (%.2f-%.2f)", $1, $2, $3 }')"
      [[ -n ${RB_CPU[tollgate]:-} ]] && printf '  %-52s %s\n' "open: CPU us/req vs the floor's" \
        "$(stats "$(per_round "$(series tollgate round_cpu64)" "$(series floor round_cpu64)")" | awk '{ printf "%.2fx per round, median (%.2f-%.2f)", $1, $2, $3 }')"
    fi
    for t in tollgate_auth tollgate_pg; do
      [[ -n ${RB_RPS[$t]:-} ]] || continue
      l=billed
      [[ $t == tollgate_pg ]] && l="billed, PostgreSQL"
      printf '  %-52s %s (%sx; per round %s)\n' "$l: req/s @64 conns >= 0.55x nginx" \
        "$(round_verdict "${RB_RPS[$t]}" 'v >= 0.55')" "${RB_RPS[$t]}" \
        "$(stats "$(per_round "$(series "$t" round_rps64)" "$(series nginx round_rps64)")" | awk '{ printf "%.2f", $1 }')"
      if [[ -n ${RB_CPU[tollgate]:-} ]]; then
        read -r kc _ _ <<<"$(per_round "$(series "$t" round_cpu64)" "$(series tollgate round_cpu64)" | { read -r l2; stats "$l2"; })"
        printf '  %-52s %s (%sx per round, median)\n' "$l: CPU us/req @64 conns <= 1.25x open" \
          "$(round_verdict "$kc" 'v <= 1.25')" "$(printf '%.2f' "$kc")"
        # The same ratio without the store's threads on either side: what the billed path's request
        # threads do beyond the open path's (the key, the hold, the charge), the commits apart.
        read -r kc kmin kmax <<<"$(stats "$(per_round "$(request_series "$t")" "$(request_series tollgate)")")"
        printf '  %-52s %.2fx per round, median (%.2f-%.2f)\n' "$l: request threads' CPU vs open's" "$kc" "$kmin" "$kmax"
      fi
    done
    # feature_verdict LABEL WITH WITHOUT BAR: WITH's CPU per request against WITHOUT's in the same
    # rounds, within BAR or within the control's spread when that is larger.
    feature_verdict() {
      local r r_min r_max cn_min cn_max allowed
      read -r r r_min r_max <<<"$(stats "$(per_round "$(series "$2" round_cpu64)" "$(series "$3" round_cpu64)")")"
      read -r _ cn_min cn_max <<<"$(stats "$(per_round "$(series nginx_b round_cpu64)" "$(series nginx round_cpu64)")")"
      allowed=$(awk -v a="$cn_min" -v b="$cn_max" -v bar="$4" 'BEGIN { s = b - 1; if (1 - a > s) s = 1 - a; print (s > bar ? s : bar) }')
      printf '  %-52s %s (%.3fx per round, median; %.3f-%.3f; nginx_b/nginx CPU %.3f-%.3f)\n' \
        "$1: $2 CPU us/req <= (1 + $(printf '%.3f' "$allowed"))x $3" \
        "$(round_verdict "$r" "v <= 1 + $allowed")" "$r" "$r_min" "$r_max" "$cn_min" "$cn_max"
    }
    # What metrics and traces cost: within 3 %; what counting rate limits costs the billed path:
    # within 5 %.
    if [[ -n ${RB_CPU[tollgate_dark]:-} && -n ${RB_CPU[tollgate_traced]:-} ]]; then
      feature_verdict telemetry tollgate_traced tollgate_dark 0.03
    fi
    if [[ -n ${RB_CPU[tollgate_auth]:-} && -n ${RB_CPU[tollgate_limited]:-} ]]; then
      feature_verdict limits tollgate_limited tollgate_auth 0.05
    fi
    # The open and billed paths against BENCH_BASE_BIN's, round by round: what a change did, in
    # the rounds.
    for pair in "tollgate tollgate_base open" "tollgate_auth tollgate_auth_base billed"; do
      read -r path base label <<<"$pair"
      [[ -n ${RB_CPU[$base]:-} ]] || continue
      for m in cpu ucpu rps; do
        read -r r r_min r_max <<<"$(stats "$(per_round "$(series "$path" "round_${m}64")" "$(series "$base" "round_${m}64")")")"
        printf '  %-52s %.3fx per round, median (%.3f-%.3f): %+.1f %%\n' \
          "$label vs BENCH_BASE_BIN's $label, $(case $m in cpu) echo "CPU us/req" ;; ucpu) echo "user us/req" ;; rps) echo "req/s" ;; esac)" \
          "$r" "$r_min" "$r_max" "$(awk -v r="$r" 'BEGIN { print (r - 1) * 100 }')"
      done
    done
    echo
  fi
  echo "Targets (tollgate vs nginx):"
  target_line() { printf '  %-52s %s\n' "$1" "$2"; }
  verdict() { # verdict AWK-EXPR-over-n,g METRIC
    local n g
    n=$(cell nginx "$2"); g=$(cell tollgate "$2")
    [[ $n == - || $g == - ]] && { echo "n/a"; return; }
    awk -v n="$n" -v g="$g" "BEGIN { if ($1) print \"PASS\"; else print \"FAIL\" }"
  }
  target_line "req/s @64 conns >= 0.55x nginx" "$(verdict 'g >= 0.55 * n' rps64) ($(ratio rps64)x)"
  target_line "CPU us/req <= 1.8x nginx (@${RATE} req/s)" "$(verdict 'g <= 1.8 * n' cpurate) ($(ratio cpurate)x)"
  target_line "CPU us/req <= 1.8x nginx (@64 conns)" "$(verdict 'g <= 1.8 * n' cpu64) ($(ratio cpu64)x)"
  ((SAME_RATE > 0)) && target_line "CPU us/req <= 1.5x nginx at the same rate (@${SAME_RATE})" "$(verdict 'g <= 1.5 * n' cpusame) ($(ratio cpusame)x)"
  target_line "p99 @${RATE} req/s within 0.3 ms of nginx" "$(verdict 'g - n <= 0.3' p99) ($(delta p99))"
  target_line "stream TTFB p50 within 0.2 ms of nginx" "$(verdict 'g - n <= 0.2' ttfb50) ($(delta ttfb50))"
  target_line "stream TTFB p99 within 0.2 ms of nginx" "$(verdict 'g - n <= 0.2' ttfb99) ($(delta ttfb99))"
  target_line "CPU us/stream <= 2x nginx (@${STREAM_RATE}/s)" "$(verdict 'g <= 2 * n' cpustream) ($(ratio cpustream)x)"
  target_line "stream last byte p99 within 1 ms of nginx" "$(verdict 'g - n <= 1' ttlb99) ($(delta ttlb99))"
  target_line "embeddings req/s @64 conns >= 0.5x nginx" "$(verdict 'g >= 0.5 * n' embed_rps64) ($(ratio embed_rps64)x)"
  hit_target() { # hit_target LABEL METRIC NGINX_METRIC: a hit's req/s against nginx proxying it
    local n g
    n=$(cell nginx "$3") g=$(cell tollgate "$2")
    [[ $n == - || $g == - ]] && { target_line "$1 >= 1x nginx proxying it @64 conns" "n/a"; return; }
    target_line "$1 >= 1x nginx proxying it @64 conns" \
      "$(awk -v n="$n" -v g="$g" 'BEGIN { print (g >= n) ? "PASS" : "FAIL" }') ($(divide "$g" "$n")x)"
  }
  hit_target "cache hit (whole)" hit_rps64 rps64
  hit_target "cache hit (streamed)" hitsse_rps64 rps64
  hit_target "cache hit (embeddings)" hitembed_rps64 embed_rps64
  target_line "upload throughput >= 0.5x nginx (8 at a time)" "$(verdict 'g >= 0.5 * n' upload_rps8) ($(ratio upload_rps8)x)"
  if has tollgate; then
    g=$(cell tollgate upload_growth)
    v=$(awk -v g="$g" -v f="$UPLOAD_MB" 'BEGIN { print (g != "-" && g < f) ? "PASS" : "FAIL" }')
    target_line "upload peak RSS growth < one file (${UPLOAD_MB} MiB) in all" "$v (${g} MiB for 8 uploads at a time)"
  fi
  billed_targets() { # billed_targets TARGET LABEL: issue 23's billed targets, for one store engine
    local t=$1 l=$2 n k o g s v
    has "$t" || return 0
    vs() { # vs AWK-TEST-over-k,o,n K O N: PASS/FAIL, n/a if a figure is missing
      [[ $2 == - || $3 == - || $4 == - ]] && { echo n/a; return; }
      awk -v k="$2" -v o="$3" -v n="$4" "BEGIN { print ($1) ? \"PASS\" : \"FAIL\" }"
    }
    n=$(cell nginx rps64); k=$(cell "$t" rps64)
    target_line "$l: req/s @64 conns >= 0.55x nginx" "$(vs 'k >= 0.55 * n' "$k" 1 "$n") ($(divide "$k" "$n")x)"
    o=$(cell tollgate cpu64); k=$(cell "$t" cpu64)
    target_line "$l: CPU us/req @64 conns <= 1.2x open" "$(vs 'k <= 1.2 * o' "$k" "$o" 1) ($(divide "$k" "$o")x)"
    n=$(cell nginx p99); k=$(cell "$t" p99)
    target_line "$l: p99 @${RATE} req/s within 0.5 ms of nginx" "$(vs 'k - n <= 0.5' "$k" 1 "$n") ($(awk -v n="$n" -v k="$k" 'BEGIN { if (k != "-" && n != "-") printf "%+.3f ms", k - n; else print "-" }'))"
    o=$(cell tollgate cpustream); k=$(cell "$t" cpustream)
    target_line "$l: CPU us/stream <= 1.2x open" "$(vs 'k <= 1.2 * o' "$k" "$o" 1) ($(divide "$k" "$o")x)"
    n=$(cell nginx ttlb99); k=$(cell "$t" ttlb99)
    target_line "$l: stream last byte p99 within 1 ms of nginx" "$(vs 'k - n <= 1' "$k" 1 "$n") ($(awk -v n="$n" -v k="$k" 'BEGIN { if (k != "-" && n != "-") printf "%+.3f ms", k - n; else print "-" }'))"
    if ((SOAK > 0)) && [[ $(cell "$t" soak_growth2_kb) != - ]]; then
      # Judged on the soak's second half: the store's page cache (SQLite's is bounded at a few
      # MiB) fills in the first while the spend log grows; what still grows after is a leak.
      g=$(cell "$t" soak_growth2_kb)
      s=$(cell "$t" soak_start)
      v=$(awk -v g="$g" -v s="$s" 'BEGIN { lim = s * 1024 * 0.02; if (lim < 1024) lim = 1024; print (g <= lim) ? "PASS" : "FAIL" }')
      target_line "$l: RSS flat over the soak's 2nd half" "$v (${g} KiB; samples ${SOAK_SAMPLES[$t]:-} KiB)"
    fi
  }
  billed_targets tollgate_auth "with a key"
  billed_targets tollgate_pg "with a key, PostgreSQL"
  pathverdict() { # pathverdict TARGET PATH_METRIC OPENAI_METRIC: a provider path <= 1.2x OpenAI path
    local a o
    a=$(cell "$1" "$2"); o=$(cell "$1" "$3")
    [[ $a == - || $o == - ]] && { echo "n/a"; return; }
    awk -v a="$a" -v o="$o" -v r="$(pathratio "$1" "$2" "$3")" 'BEGIN { printf "%s (%sx)", (a <= 1.2 * o) ? "PASS" : "FAIL", r }'
  }
  for t in tollgate tollgate_auth; do
    has "$t" || continue
    for p in "${PROVIDER_PATHS[@]}"; do
      plabel=${PROVIDER_LABEL[$p]}
      [[ $t == tollgate_auth ]] && plabel="with a key: $plabel"
      target_line "$plabel path CPU us/req @64 <= 1.2x OpenAI path" "$(pathverdict "$t" "${p}_cpu64" cpu64)"
      target_line "$plabel path CPU us/stream <= 1.2x OpenAI path" "$(pathverdict "$t" "${p}_stream_cpu" cpustream)"
    done
  done
  if ((SOAK > 0)) && has tollgate && [[ $(med tollgate soak_growth_kb) != - ]]; then
    g=$(med tollgate soak_growth_kb)
    s=$(med tollgate soak_start)
    flat=$(awk -v g="$g" -v s="$s" 'BEGIN { lim = s * 1024 * 0.02; if (lim < 1024) lim = 1024; print (g <= lim) ? "PASS" : "FAIL" }')
    target_line "RSS flat over ${SOAK}s soak (growth <= max(1 MiB, 2%))" "$flat (${g} KiB; samples ${SOAK_SAMPLES[tollgate]:-} KiB)"
  else
    target_line "RSS flat over soak" "n/a"
  fi
  if ((${#WARN[@]})); then
    echo
    echo "Warnings:"
    for w in "${WARN[@]}"; do echo "  - $w"; done
  fi
  if [[ -n $FLOOR_TXT ]]; then
    echo
    echo "The store's floor (bench/commit_floor.cpp on the proxy's CPU): SQLite alone running the"
    echo "billed path's transaction, CPU us per request at each batch size (requests a commit):"
    echo
    echo '```'
    echo "$FLOOR_TXT"
    echo '```'
  fi
  echo
  echo "Elapsed: ${ELAPSED}s"
} >"$REPORT"

echo
cat "$REPORT"
echo
log "report written to ${REPORT#"$ROOT/"}"
