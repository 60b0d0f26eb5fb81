#!/usr/bin/env bash
# Compile Charter's src/ into bench/peers/.charter-dist (a private copy of dist/), so that a long
# benchmark run uses one consistent build even while other people rebuild /work/main/dist.
# --noEmitOnError: a half-edited src/ fails here instead of giving a broken snapshot; retry a bit later.
# Use it with CHARTER_DIST=/work/main/bench/peers/.charter-dist (see README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here/.charter-dist"
tmp="$here/.charter-dist.tmp"
rm -rf "$tmp"
(cd "$root" && node_modules/.bin/tsc -p tsconfig.build.json --outDir "$tmp" --noEmitOnError --declaration false --sourceMap false)
rm -rf "$out"
mv "$tmp" "$out"
{
  echo "{"
  echo "  \"builtAt\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"gitHead\": \"$(git -C "$root" rev-parse HEAD)\","
  echo "  \"srcHash\": \"$(cd "$root" && find src -name '*.ts' ! -name '*.test.ts' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)\","
  echo "  \"dirtySrcFiles\": $(git -C "$root" status --porcelain -- src | wc -l)"
  echo "}"
} > "$out/BUILD-INFO.json"
cat "$out/BUILD-INFO.json"
