// Token estimation on text without spaces against prose of the same size, over the built estimator
// (`npm run build` first): `node bench/token-estimation.mjs [kilobytes]`.
//
// Byte-pair merging is superlinear in a pre-token's length, and text without spaces is one long pre-token: before
// long runs were estimated from samples, 100 KB of it took 13 s and 1 MB never finished. The test suite asserts the
// bound by counting the work given to the tokenizer (test/model/token-estimator.test.ts); this script measures the
// time, median of several rounds, with a fresh estimator per round (nothing remembered between rounds).

const { createTokenEstimator } = await import(
  new URL("../dist/model/token-estimator.js", import.meta.url).href
);

const kilobytes = Number(process.argv[2] ?? 300);
const length = kilobytes * 1000;
const rounds = 7;

// Deterministic pseudo-random letters (no spaces, nothing the tokenizer's cache could reuse), a repeated character,
// base64-like text, and prose.
function letters(size) {
  let seed = 7;
  let text = "";
  for (let index = 0; index < size; index++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    text += String.fromCharCode(97 + (seed % 26));
  }
  return text;
}
const inputs = {
  prose: "The catalogue lists every keyboard in stock, with its price and the warehouse it ships from. "
    .repeat(Math.ceil(length / 94))
    .slice(0, length),
  "letters, no spaces": letters(length),
  "one repeated character": "a".repeat(length),
  "base64-like": Buffer.from(letters(Math.ceil((length * 3) / 4)))
    .toString("base64")
    .slice(0, length),
};

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

// Loads the encoding's tables once, outside the measured rounds.
createTokenEstimator().countText("warm up");
const results = {};
for (const [name, text] of Object.entries(inputs)) {
  const times = [];
  let tokens = 0;
  for (let round = 0; round < rounds; round++) {
    const estimator = createTokenEstimator();
    const started = performance.now();
    tokens = estimator.countText(text);
    times.push(performance.now() - started);
  }
  results[name] = { ms: median(times), tokens };
}
const prose = results.prose.ms;
console.log(`token estimation, ${kilobytes} KB each, median of ${rounds} rounds`);
for (const [name, { ms, tokens }] of Object.entries(results)) {
  console.log(
    `${name.padEnd(24)} ${ms.toFixed(1).padStart(8)} ms  ${String(tokens).padStart(8)} tokens  ${(ms / prose).toFixed(2)} x prose`,
  );
}
