-- wrk script for bench/run.sh: POST the body whose path is in the environment
-- variable BENCH_BODY (a JSON body unless BENCH_CONTENT_TYPE says otherwise), and
-- print one machine-readable line.
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE") or "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTH") or "Bearer sk-bench-0000000000000000"
wrk.headers["User-Agent"] = "tollgate-bench/1"
if os.getenv("BENCH_ORIGIN") then
  wrk.headers["Origin"] = os.getenv("BENCH_ORIGIN")
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d connect_err=%d read_err=%d write_err=%d status_err=%d timeout_err=%d lat_p50_us=%d lat_p99_us=%d\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
