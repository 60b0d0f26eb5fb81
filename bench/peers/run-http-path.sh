#!/usr/bin/env bash
# The HTTP-path targets of the performance issue, measured in the peers' harness in one interleaved run:
#   1. Charter's cost above the AI SDK provider package alone (provider-floor, over HTTP) at most 2 x Charter's own
#      in-process cost per turn (charter inproc - bare inproc);
#   2. Charter's cost above the bare loop flat in conversation length: at T = 100 within 1.2 x of T = 5 (over HTTP);
#   3. Charter below the AI SDK's generateText per turn: in process by at least 1.5 x, and over HTTP.
# With BASELINE=<commit> the same Charter rows are measured again on that commit's build (compiled into
# bench/peers/.charter-dist-baseline), interleaved with the current build, so a change is a ratio in one run.
#
#   bash bench/peers/run-http-path.sh                      # ROUNDS=3 REPS=3 MIN_SECONDS=1: ~5 minutes
#   BASELINE=ecf97a5~1 bash bench/peers/run-http-path.sh   # + the build before the raw requests were stored by parts
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
HARNESS=${HARNESS:-/work/shared/bench-peers}
ROUNDS=${ROUNDS:-3} REPS=${REPS:-3} MIN_SECONDS=${MIN_SECONDS:-1}
[ -d "$HARNESS/node_modules" ] || { echo "run 'npm ci' in $HARNESS first (see its README.md)" >&2; exit 1; }
export BENCH_EXTRA_ADAPTERS="$here"
[ "${SNAPSHOT:-1}" = keep ] || bash "$here/snapshot-dist.sh" >&2
current="$here/.charter-dist"
baseline=""
if [ -n "${BASELINE:-}" ]; then
  baseline="$here/.charter-dist-baseline"
  source_tree=$(mktemp -d)
  git -C "$root" archive "$BASELINE" src package.json tsconfig.json tsconfig.build.json | tar -x -C "$source_tree"
  ln -s "$root/node_modules" "$source_tree/node_modules"
  rm -rf "$baseline"
  (cd "$source_tree" && "$root/node_modules/.bin/tsc" -p tsconfig.build.json --outDir "$baseline" --noEmitOnError \
    --declaration false --sourceMap false)
  echo "{\"gitHead\": \"$(git -C "$root" rev-parse "$BASELINE")\"}" > "$baseline/BUILD-INFO.json"
  rm -rf "$source_tree"
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/results"
out="$here/results/http-path-$stamp.jsonl"
echo "node $(node --version); $(uptime | sed 's/.*load average/load average/') before" >&2

# label framework mode turns build
rows="bare bare inproc 20 -
bare-http-5 bare http 5 -
bare-http-20 bare http 20 -
bare-http-100 bare http 100 -
floor-http-20 provider-floor http 20 -
ai-sdk ai-sdk inproc 20 -
ai-sdk-http-20 ai-sdk http 20 -
charter charter inproc 20 current
charter-http-5 charter http 5 current
charter-http-20 charter http 20 current
charter-http-100 charter http 100 current"
if [ -n "$baseline" ]; then
  rows="$rows
baseline baseline-charter inproc 20 baseline
baseline-http-5 baseline-charter http 5 baseline
baseline-http-20 baseline-charter http 20 baseline
baseline-http-100 baseline-charter http 100 baseline"
fi
for round in $(seq 1 "$ROUNDS"); do
  while read -r label framework mode turns build; do
    dist="$current"; [ "$build" = baseline ] && dist="$baseline"
    [ "$framework" = baseline-charter ] && framework=charter
    (cd "$HARNESS" && CHARTER_DIST="$dist" node run.mjs --framework "$framework" --mode "$mode" --turns "$turns" \
      --reps "$REPS" --min-seconds "$MIN_SECONDS" --tag "round $round|$label" --out "$out" >/dev/null)
  done <<< "$rows"
  echo "round $round done; $(uptime | sed 's/.*load average/load average/')" >&2
done
node "$here/summarize-http-path.mjs" "$out" | tee "${out%.jsonl}.txt"
