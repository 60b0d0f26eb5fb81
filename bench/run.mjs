// `npm run bench`: Charter's per-turn orchestration overhead against a bare loop, in one process.
// Scenario (the peers' harness scenario): T turns; on turns 1..T-1 the model calls `echo`, on turn T it
// answers "done". The model is in process and answers at once, so what remains is the runtime's own work:
// contract checks, the state machine, protocol adaptation, tool validation and pipeline, token counting,
// and the transcript's redaction + canonical JSON + BLAKE3 hash chain over every state transition.
import { prepareAgent } from "../dist/runner/prepare-agent.js";
import { createStrictScriptedModel } from "../dist/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../dist/tools/define-function-tool.js";
import { createInMemoryTranscriptWriter } from "../dist/transcript/in-memory-transcript-writer.js";
import { verifyEntries } from "../dist/transcript/verify-transcript.js";

const minimumSeconds = Number(process.env.BENCH_SECONDS ?? 2);
const repetitions = Number(process.env.BENCH_REPS ?? 5);

function scriptedStep(turn, turns) {
  return turn < turns
    ? {
        kind: "tool_calls",
        calls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `hello ${turn}` } }],
        usage: { prompt_tokens: 120 + 28 * turn, completion_tokens: 17 },
      }
    : { kind: "text", text: "done", usage: { prompt_tokens: 120 + 28 * turn, completion_tokens: 2 } };
}

const echo = defineFunctionTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
  async execute(input) {
    return String(input.text);
  },
});

// The model works out the turn from the history it is sent (tool results so far + 1), as the peers' harness does,
// so one prepared agent serves every session.
const model = createStrictScriptedModel({
  provider: "bench",
  model: "scripted",
  recordRequests: false,
  respond: (request) => {
    const turns = Number(/turns (\d+)/.exec(request.messages[1].content)[1]);
    let turn = 1;
    for (const message of request.messages) if (message.role === "tool") turn++;
    return scriptedStep(turn, turns);
  },
});
const agent = prepareAgent({
  agent: {
    id: "bench",
    systemPrompt: "You are a benchmark agent.",
    settings: { maxTurns: 60, toolPolicy: "optional" },
  },
  targets: [{ provider: "bench", model: "scripted", contextWindow: 1_000_000 }],
  models: [model],
  tools: [echo],
});

let verified = false;
async function charterSession(turns) {
  // Every entry is redacted, canonicalised and hashed into the chain; the first session also keeps its entries
  // and must verify. Later sessions do not retain entries (persisting them is the run store's job).
  const writer = verified ? undefined : createInMemoryTranscriptWriter();
  const { result } = await agent.run({
    prompt: `session turns ${turns}: start`,
    ...(writer ? { transcriptWriter: writer } : {}),
  });
  if (writer) {
    const report = verifyEntries(writer.header, writer.contract, writer.entries, writer.raw);
    if (!report.ok || report.head_hash !== result.transcript.headHash)
      throw new Error("bench transcript does not verify");
    verified = true;
  }
  if (!result.success || result.turns !== turns || result.finalReport?.content !== "done") {
    throw new Error(`bench session failed: ${result.outcome} after ${result.turns} turns`);
  }
}

async function bareSession(turns) {
  // The baseline: a plain while loop calling the same model function and the same tool.
  const messages = [
    { role: "system", content: "You are a benchmark agent." },
    { role: "user", content: `session turns ${turns}: start` },
  ];
  let calls = 0;
  for (;;) {
    const step = scriptedStep(++calls, turns);
    if (step.kind === "text") {
      messages.push({ role: "assistant", content: step.text });
      break;
    }
    const toolCall = step.calls[0];
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [
        { id: toolCall.id, function: { name: toolCall.name, arguments: JSON.stringify(toolCall.arguments) } },
      ],
    });
    const output = await echo.execute(JSON.parse(JSON.stringify(toolCall.arguments)), {});
    messages.push({ role: "tool", tool_call_id: toolCall.id, content: output.text });
  }
  if (calls !== turns) throw new Error("bare session miscounted");
}

async function measure(session, turns) {
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) await session(turns);
  const perTurn = [];
  for (let repetition = 0; repetition < repetitions; repetition++) {
    globalThis.gc?.();
    let sessions = 0;
    const start = performance.now();
    while (performance.now() - start < minimumSeconds * 1000) {
      await session(turns);
      sessions++;
    }
    perTurn.push(((performance.now() - start) * 1000) / (sessions * turns));
  }
  perTurn.sort((a, b) => a - b);
  return perTurn[Math.floor(perTurn.length / 2)];
}

const rows = [];
for (const turns of [20, 5, 50]) {
  const bare = await measure(bareSession, turns);
  const charter = await measure(charterSession, turns);
  rows.push({ turns, bare, charter });
  console.log(
    `T=${String(turns).padStart(2)}  charter ${charter.toFixed(1).padStart(7)} us/turn   bare loop ${bare.toFixed(2).padStart(6)} us/turn   ratio ${(charter / bare).toFixed(0)}x`,
  );
}
const [t20, t5, t50] = rows;
console.log(`per-turn growth: T=50 / T=5 = ${(t50.charter / t5.charter).toFixed(2)} (target <= 1.2)`);
console.log(`in-process per-turn overhead at T=20: ${t20.charter.toFixed(1)} us (target <= 60 us)`);
console.log(JSON.stringify({ benchmark: "per-turn-overhead", node: process.version, rows }));
