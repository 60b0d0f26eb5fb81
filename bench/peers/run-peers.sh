#!/usr/bin/env bash
# Runs Charter beside the peers in the shared harness (/work/shared/bench-peers) and writes the results
# here, in bench/peers/results/ (nothing new is left in the harness's own results/).
#
#   bash bench/peers/run-peers.sh            # quick side-by-side run + T-scan (T=5, T=50), ~5 min here
#
# Knobs: HARNESS [/work/shared/bench-peers], FRAMEWORKS [harness default list + charter, charter:memory,
# charter:sqlite],
# ROUNDS [1], REPS [2], MIN_SECONDS [0.5], CONC [1000], TSCAN_FRAMEWORKS [same as FRAMEWORKS],
# SNAPSHOT [1]: compile src/ into bench/peers/.charter-dist first and measure that (CHARTER_DIST),
# so that a rebuild of dist/ by someone else during the run cannot mix versions; SNAPSHOT=keep measures the
# existing snapshot as it is (to repeat a run on the same build); SNAPSHOT=0 uses dist/.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HARNESS=${HARNESS:-/work/shared/bench-peers}
export BENCH_EXTRA_ADAPTERS="$here"
export FRAMEWORKS=${FRAMEWORKS:-"bare ai-sdk openai-agents langgraph langgraph:memory langgraph:sqlite mastra charter charter:memory charter:sqlite"}
TSCAN_FRAMEWORKS=${TSCAN_FRAMEWORKS:-$FRAMEWORKS}
export ROUNDS=${ROUNDS:-1} REPS=${REPS:-2} MIN_SECONDS=${MIN_SECONDS:-0.5} CONC=${CONC:-1000}
case "${SNAPSHOT:-1}" in
  1) bash "$here/snapshot-dist.sh" || exit 1
     export CHARTER_DIST="$here/.charter-dist"; info="$here/.charter-dist/BUILD-INFO.json" ;;
  keep) [ -f "$here/.charter-dist/BUILD-INFO.json" ] || { echo "no snapshot in $here/.charter-dist" >&2; exit 1; }
     export CHARTER_DIST="$here/.charter-dist"; info="$here/.charter-dist/BUILD-INFO.json" ;;
  *) info="" ;;
esac
[ -d "$HARNESS/node_modules" ] || { echo "run 'npm ci' in $HARNESS first (see README.md)" >&2; exit 1; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/results"
fail=0
echo "node $(node --version); harness $HARNESS; frameworks: $FRAMEWORKS" >&2
# The machine's load before each stage (a shared VM: other work skews every figure), kept with the results.
load="$here/results/load-$stamp.txt"
note_load() { echo "$(date -u +%H:%M:%SZ) before $1: $(uptime | sed 's/.*load average/load average/')" | tee -a "$load" >&2; }
note_load "side-by-side run"
OUT="$here/results/run-$stamp.jsonl" bash "$HARNESS/all.sh" || fail=1
for T in 5 50; do
  note_load "T-scan T=$T"
  OUT="$here/results/tscan-$stamp-T$T.jsonl" FRAMEWORKS="$TSCAN_FRAMEWORKS" MODES=inproc TURNS=$T ROUNDS=1 REPS=3 MIN_SECONDS=1 \
    bash "$HARNESS/all.sh" || fail=1
done
note_load "end"
[ -n "$info" ] && cp "$info" "$here/results/charter-build-$stamp.json"
echo "results: $here/results/*-$stamp*" >&2
exit $fail
