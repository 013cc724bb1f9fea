#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) of the cold-start and
# invalid-input measurements, each beside its baseline in the same run:
#   - coldhost: bytes allocated from process start through hooks.New and the
#     first call (runtime counters, not callgrind);
#   - perevent vs echo: a per_event stdio backend built on package server,
#     exec to exit on the stdio intercept fixture, vs a minimal encoding/json
#     echo backend on the same bytes;
#   - servehttp: ServeHTTP instructions per request (difference of runs with
#     200 and 100 requests, with the collector off so that where its cycles
#     fall does not move the difference) for the valid fixture request and two
#     small invalid ones (a bad "time", a missing "source");
#   - the two hot-path round trips, per call (difference of runs with 300
#     and 100 calls after a warm-up call, collector off, median of three
#     differences), each beside its floor:
#     stdiohost sdk (h.ToolBefore over a persistent stdio child running
#     perevent, i.e. server.ServeStdio with default settings) vs stdiohost
#     floor (the same request bytes written to floorchild, which decodes each
#     line into a map with encoding/json and encodes the answer), host and
#     child counted together; httphost sdk (h.ToolBefore and server.Handler
#     over loopback in one process) vs httphost raw (a raw http.Client
#     posting the same bytes to a handler writing the same answer bytes).
#   - scale: instructions per call of 64 concurrent callers pipelined on
#     one persistent stdio child beside one caller (stdiohost sdk ... 64),
#     and BenchmarkScaleStdioInterleaved (64 callers vs 1) and
#     BenchmarkScaleHTTPInterleaved (64 callers, the SDK-owned client vs a
#     raw net/http client with a pool of 64) from one go test run:
#     calls/s, CPU per call and cores busy of each side, and "x", the ratio
#     of their calls/s, as medians over PERF_ROUNDS (default 7) alternating
#     rounds.
# Usage: internal/perf/callgrind.sh [all|cold|invalid|hot|scale]   (from
# the repository root; default all). Needs go, valgrind and python3.
set -euo pipefail
what=${1:-all}
case $what in all | cold | invalid | hot | scale) ;; *) echo "usage: $0 [all|cold|invalid|hot|scale]" >&2; exit 2 ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 go build -o "$out/" ./internal/perf/...
export GODEBUG=asyncpreemptoff=1 # callgrind does not survive Go's preemption signals
# --fair-sched=yes: with valgrind's default thread lock, the Go scheduler's
# spinning threads ran for 1–40 billion instructions on some runs of the
# per_event backend (47M on the others).
instr() { valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }

# instr_tree counts a process and the processes it starts (one log per
# process) and prints "total host child": callgrind aborts on an assertion
# in its signal tracking when a host whose child exits is traced
# (SIGCHLD), so the process trees are counted with cachegrind, whose "I
# refs" are the same executed instructions (callgrind's "Collected";
# httphost gives the same per-call figures within run-to-run noise with
# either tool).
instr_tree() {
  local logs=$out/logs
  rm -rf "$logs" && mkdir "$logs"
  valgrind --tool=cachegrind --cache-sim=no --fair-sched=yes --trace-children=yes --cachegrind-out-file=/dev/null \
    --log-file="$logs/%p.log" "$@" >"$logs/out" 2>&1 || { echo "instr_tree: $* failed:" >&2; cat "$logs/out" >&2; exit 1; }
  local host=0 child=0 f n
  for f in "$logs"/*.log; do
    n=$(sed -n 's/.*I *refs: *//p' "$f" | tr -d ,)
    [ -n "$n" ] || { echo "instr_tree: a process of $* did not finish under valgrind:" >&2; tail -5 "$f" >&2; exit 1; }
    if grep -q "Command: $1 " "$f"; then host=$((host + n)); else child=$((child + n)); fi
  done
  echo "$((host + child)) $host $child"
}
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { awk "BEGIN{printf \"%.2f\", $1/$2}"; }

if [ "$what" = all ] || [ "$what" = cold ]; then
"$out/coldhost"

head -1 testdata/fixtures/draft/stdio/intercept-request.valid.jsonl >"$out/req.jsonl"
# Exec-to-exit counts move with where the collector and the scheduler's
# spinning fall on a loaded machine: the median of three runs each.
pe=$(median3 "$(instr "$out/perevent" <"$out/req.jsonl")" "$(instr "$out/perevent" <"$out/req.jsonl")" "$(instr "$out/perevent" <"$out/req.jsonl")")
ec=$(median3 "$(instr "$out/echo" <"$out/req.jsonl")" "$(instr "$out/echo" <"$out/req.jsonl")" "$(instr "$out/echo" <"$out/req.jsonl")")
echo "per_event backend exec->exit: $pe instructions; encoding/json echo: $ec; ratio $(awk "BEGIN{printf \"%.1f\", $pe/$ec}")x"
fi

if [ "$what" = all ] || [ "$what" = invalid ]; then

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
d = json.load(open('testdata/fixtures/draft/http/intercept-request.valid.json'))
def w(name, mut=None):
    c = json.loads(json.dumps(d))
    if mut: mut(c['params']['event'])
    open(f'{out}/{name}.json', 'w').write(json.dumps(c, separators=(',', ':')))
w('valid')
w('badtime', lambda e: e.__setitem__('time', 'yesterday'))
w('missing', lambda e: e.pop('source'))
PY
declare -A per
for f in valid badtime missing; do
  a=$(GOGC=off instr "$out/servehttp" 100 <"$out/$f.json")
  b=$(GOGC=off instr "$out/servehttp" 200 <"$out/$f.json")
  per[$f]=$(( (b - a) / 100 ))
  echo "ServeHTTP $f: ${per[$f]} instructions per request"
done
for f in badtime missing; do
  echo "ServeHTTP $f / valid: $(awk "BEGIN{printf \"%.2f\", ${per[$f]}/${per[valid]}}")x"
done
fi

if [ "$what" = all ] || [ "$what" = hot ]; then
# Per-call instructions of a round trip: the median of three differences
# between runs of 300 and 100 calls (after one warm-up call each), with the
# collector off so that where its cycles fall does not move the
# difference. Prints "total host child" per call.
per_call() {
  local i a b d=() hs=() cs=()
  for i in 1 2 3; do
    read -r -a a <<<"$(GOGC=off instr_tree "$@" 100)"
    read -r -a b <<<"$(GOGC=off instr_tree "$@" 300)"
    [ "${#a[@]}" -eq 3 ] && [ "${#b[@]}" -eq 3 ] || exit 1
    d+=($(((b[0] - a[0]) / 200))) hs+=($(((b[1] - a[1]) / 200))) cs+=($(((b[2] - a[2]) / 200)))
  done
  [ -z "${PERF_VERBOSE:-}" ] || echo "$* per call: ${d[*]}" >&2
  echo "$(median3 "${d[@]}") $(median3 "${hs[@]}") $(median3 "${cs[@]}")"
}
read -r -a ss <<<"$(per_call "$out/stdiohost" sdk "$out/perevent")"
[ "${#ss[@]}" -eq 3 ] || exit 1
read -r -a sf <<<"$(per_call "$out/stdiohost" floor "$out/floorchild")"
[ "${#sf[@]}" -eq 3 ] || exit 1
echo "stdio round trip (host + child, per call): SDK ${ss[0]} instructions (host ${ss[1]}, child ${ss[2]}); floor ${sf[0]} (host ${sf[1]}, child ${sf[2]}); ratio $(ratio "${ss[0]}" "${sf[0]}")x"
echo "stdio host allocations per call: SDK $("$out/stdiohost" sdk "$out/perevent" 1000); floor $("$out/stdiohost" floor "$out/floorchild" 1000)"
read -r -a hs <<<"$(per_call "$out/httphost" sdk)"
[ "${#hs[@]}" -eq 3 ] || exit 1
read -r -a hr <<<"$(per_call "$out/httphost" raw)"
[ "${#hr[@]}" -eq 3 ] || exit 1
echo "HTTP round trip (one process, per call): SDK ${hs[0]} instructions; raw net/http ${hr[0]}; ratio $(ratio "${hs[0]}" "${hr[0]}")x"
echo "HTTP allocations per call (host + backend): SDK $("$out/httphost" sdk 1000); raw $("$out/httphost" raw 1000)"
fi

if [ "$what" = all ] || [ "$what" = scale ]; then
# Scale on one persistent stdio backend: instructions per call (host +
# child) of 64 concurrent callers beside one, then calls/s of the testing.B
# benchmarks (package perf) in alternating rounds: times on a shared
# machine move with its load, and "cores" shows how much of the machine the
# benchmark got.
per_call_c() {
  local i a b d=()
  for i in 1 2 3; do
    read -r -a a <<<"$(GOGC=off instr_tree "$out/stdiohost" sdk "$out/perevent" 200 "$1")"
    read -r -a b <<<"$(GOGC=off instr_tree "$out/stdiohost" sdk "$out/perevent" 600 "$1")"
    [ "${#a[@]}" -eq 3 ] && [ "${#b[@]}" -eq 3 ] || exit 1
    d+=($(((b[0] - a[0]) / 400)))
  done
  [ -z "${PERF_VERBOSE:-}" ] || echo "stdio $1 callers per call: ${d[*]}" >&2
  median3 "${d[@]}"
}
c1=$(per_call_c 1)
c64=$(per_call_c 64)
[ -n "$c1" ] && [ -n "$c64" ] || exit 1
echo "stdio pipelined (host + child, per call): 64 callers $c64 instructions; 1 caller $c1; ratio $(ratio "$c64" "$c1")x"
go test -run '^$' -bench 'Interleaved' -benchtime "${PERF_ROUNDS:-7}x" ./internal/perf/ >"$out/bench.txt"
awk '/^BenchmarkScale/ {
    name = $1; sub(/-[0-9]+$/, "", name); line = ""
    for (i = 3; i < NF; i++) if ($(i + 1) ~ /^(calls\/s|cpu-us\/call|cores)-|^x$/) line = line sprintf(" %s %s;", $(i + 1), $i)
    print name " (medians of " $2 " interleaved rounds):" line
  }' "$out/bench.txt"
fi
