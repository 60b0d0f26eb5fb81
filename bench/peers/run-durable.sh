#!/usr/bin/env bash
# Durable runs side by side: Charter with its SQLite run store (charter:sqlite, a checkpoint at every COMMIT)
# beside LangGraph with its SqliteSaver (langgraph:sqlite), with bare and charter (no store) for reference,
# in the shared harness (/work/shared/bench-peers); results in bench/peers/results/durable-<utc>*.
#
#   bash bench/peers/run-durable.sh            # ~6 min here
#
# On Node 24 the harness's pinned better-sqlite3 12.11.1 aborts in GC (see README.md), so this run preloads
# better-sqlite3-13.mjs (NODE_OPTIONS=--import), which makes LangGraph's SqliteSaver use better-sqlite3 13.x
# (Charter's copy, the same SQLite engine). The JSON lines still name better-sqlite3 12.11.1 (the harness reads
# node_modules); they carry the tag `bsqlite13-round<N>` instead. BSQLITE13=0 runs without the hook.
#
# Knobs: HARNESS [/work/shared/bench-peers], FRAMEWORKS ["bare charter charter:sqlite langgraph:sqlite"],
# MODES ["inproc http conc"], ROUNDS [2], REPS [3], MIN_SECONDS [1], CONC [1000], TSCAN [1] (T=5 and T=50, inproc),
# SNAPSHOT [1]: compile src/ into bench/peers/.charter-dist first; keep: measure the existing snapshot as it is
# (e.g. the one run-peers.sh just measured); 0: measure dist/.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HARNESS=${HARNESS:-/work/shared/bench-peers}
export BENCH_EXTRA_ADAPTERS="$here"
FRAMEWORKS=${FRAMEWORKS:-"bare charter charter:sqlite langgraph:sqlite"}
MODES=${MODES:-"inproc http conc"}
ROUNDS=${ROUNDS:-2} REPS=${REPS:-3} MIN_SECONDS=${MIN_SECONDS:-1} CONC=${CONC:-1000}
case "${SNAPSHOT:-1}" in
  1) bash "$here/snapshot-dist.sh" || exit 1; export CHARTER_DIST="$here/.charter-dist" ;;
  keep) [ -f "$here/.charter-dist/BUILD-INFO.json" ] || { echo "no snapshot in $here/.charter-dist" >&2; exit 1; }
        export CHARTER_DIST="$here/.charter-dist" ;;
  *) unset CHARTER_DIST ;;
esac
if [ "${BSQLITE13:-1}" = 1 ]; then
  export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import $here/better-sqlite3-13.mjs"
  tagPrefix=bsqlite13-
else
  tagPrefix=
fi
[ -d "$HARNESS/node_modules" ] || { echo "run 'npm ci' in $HARNESS first (see README.md)" >&2; exit 1; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="$here/results/durable-$stamp"
mkdir -p "$here/results"
load="$out-load.txt"
note_load() { echo "$(date -u +%H:%M:%SZ) before $1: $(uptime | sed 's/.*load average/load average/')" | tee -a "$load" >&2; }
run_one() { # framework mode turns reps min-seconds round outfile
  local extra
  if [ "$2" = conc ]; then extra=(--sessions "$CONC" --delay 20 --reps 1); else extra=(--reps "$4" --min-seconds "$5"); fi
  echo "### $(date -u +%H:%M:%S) mode=$2 T=$3 round=$6 framework=$1" >&2
  (cd "$HARNESS" && node run.mjs --framework "$1" --mode "$2" --turns "$3" "${extra[@]}" --tag "${tagPrefix}round$6" --out "$7")
}
fail=0
echo "node $(node --version); harness $HARNESS; frameworks: $FRAMEWORKS; NODE_OPTIONS=${NODE_OPTIONS:-}" >&2
for mode in $MODES; do
  note_load "$mode"
  for round in $(seq 1 "$ROUNDS"); do
    for fw in $FRAMEWORKS; do run_one "$fw" "$mode" 20 "$REPS" "$MIN_SECONDS" "$round" "$out.jsonl" || fail=1; done
  done
done
(cd "$HARNESS" && node summarize.mjs "$out.jsonl") | tee "$out.md"
if [ "${TSCAN:-1}" = 1 ]; then
  for T in 5 50; do
    note_load "T-scan T=$T"
    for fw in $FRAMEWORKS; do run_one "$fw" inproc "$T" 3 1 1 "$out-T$T.jsonl" || fail=1; done
    (cd "$HARNESS" && node summarize.mjs "$out-T$T.jsonl") | tee "$out-T$T.md"
  done
fi
note_load "end"
[ -n "${CHARTER_DIST:-}" ] && cp "$CHARTER_DIST/BUILD-INFO.json" "$out-charter-build.json"
echo "results: $out*" >&2
exit $fail
