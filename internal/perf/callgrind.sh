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
#     small invalid ones (a bad "time", a missing "source").
# Usage: internal/perf/callgrind.sh   (from the repository root)
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 go build -o "$out/" ./internal/perf/...
export GODEBUG=asyncpreemptoff=1 # callgrind does not survive Go's preemption signals
# --fair-sched=yes: with valgrind's default thread lock, the Go scheduler's
# spinning threads ran for 1–40 billion instructions on some runs of the
# per_event backend (47M on the others).
instr() { valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }

"$out/coldhost"

head -1 testdata/fixtures/draft/stdio/intercept-request.valid.jsonl >"$out/req.jsonl"
# Exec-to-exit counts move with where the collector and the scheduler's
# spinning fall on a loaded machine: the median of three runs each.
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
pe=$(median3 "$(instr "$out/perevent" <"$out/req.jsonl")" "$(instr "$out/perevent" <"$out/req.jsonl")" "$(instr "$out/perevent" <"$out/req.jsonl")")
ec=$(median3 "$(instr "$out/echo" <"$out/req.jsonl")" "$(instr "$out/echo" <"$out/req.jsonl")" "$(instr "$out/echo" <"$out/req.jsonl")")
echo "per_event backend exec->exit: $pe instructions; encoding/json echo: $ec; ratio $(awk "BEGIN{printf \"%.1f\", $pe/$ec}")x"

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
