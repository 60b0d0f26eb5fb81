#!/usr/bin/env bash
# The floor under the over-HTTP target (issue 2: at most 1.3 x the bare loop), measured in the peers' harness:
# rounds of bare, provider-floor (the bare loop calling the model through @ai-sdk/openai-compatible doGenerate,
# which the issue requires), provider-floor:hashed (+ the content hashes of each raw request and response that
# issues 2 and 4 require) and charter, interleaved so that a change of machine load hits all four alike.
# Prints each round and the median over rounds of each adapter's ratio to the bare loop of the same round.
#
#   bash bench/peers/run-http-floor.sh            # ROUNDS=5 REPS=3 MIN_SECONDS=2: about 5 minutes
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HARNESS=${HARNESS:-/work/shared/bench-peers}
ROUNDS=${ROUNDS:-5} REPS=${REPS:-3} MIN_SECONDS=${MIN_SECONDS:-2}
FRAMEWORKS=${FRAMEWORKS:-"bare provider-floor provider-floor:hashed charter"}
[ -d "$HARNESS/node_modules" ] || { echo "run 'npm ci' in $HARNESS first (see its README.md)" >&2; exit 1; }
export BENCH_EXTRA_ADAPTERS="$here"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/results"
out="$here/results/http-floor-$stamp.jsonl"
echo "node $(node --version); $(uptime | sed 's/.*load average/load average/') before" >&2
for round in $(seq 1 "$ROUNDS"); do
  for framework in $FRAMEWORKS; do
    (cd "$HARNESS" && node run.mjs --framework "$framework" --mode http --reps "$REPS" --min-seconds "$MIN_SECONDS" \
      --tag "round $round" --out "$out" >/dev/null)
  done
done
echo "$(uptime | sed 's/.*load average/load average/') after; results: $out" >&2
node --input-type=module - "$out" <<'EOF'
import { readFileSync } from "node:fs";
const rows = readFileSync(process.argv[2], "utf8").trim().split("\n").map((line) => JSON.parse(line));
const name = (row) => row.framework;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rounds = new Map();
for (const row of rows) {
  if (!rounds.has(row.tag)) rounds.set(row.tag, new Map());
  rounds.get(row.tag).set(name(row), row.perTurnUs);
}
const names = [...new Set(rows.map(name))];
for (const [tag, values] of rounds) {
  console.log(`${tag}: ${names.map((n) => `${n} ${values.get(n)?.toFixed(0)}`).join(", ")} us/turn`);
}
for (const n of names) {
  const ratios = [...rounds.values()].map((values) => values.get(n) / values.get("bare"));
  const perTurn = [...rounds.values()].map((values) => values.get(n));
  console.log(`${n.padEnd(24)} median ${median(perTurn).toFixed(0).padStart(5)} us/turn, ${median(ratios).toFixed(2)} x bare (rounds: ${ratios.map((r) => r.toFixed(2)).join(" ")})`);
}
EOF
