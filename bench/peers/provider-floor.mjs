// The floor under Charter's HTTP figure, for the peers' harness (found through BENCH_EXTRA_ADAPTERS like charter.mjs).
//
// The bare loop's session, but each model call goes through the AI SDK provider package the issue requires
// (`@ai-sdk/openai-compatible`'s chat model, `doGenerate`, the harness's counting `fetch`), with the history kept
// as the provider's prompt. No Charter code runs in the default variant: what it adds to `bare` is the price of
// the provider package alone, which any implementation of the issue pays.
//
// Variant `hashed` also content-addresses each call's raw request body and raw response body with Charter's own
// canonical JSON + BLAKE3 (foundation/content-hash.js), as the transcript's raw payload store must (issue 4:
// "the raw model requests and responses (content-addressed)"). Nothing is written anywhere.
//
//   BENCH_EXTRA_ADAPTERS=/work/main/bench/peers node run.mjs --framework provider-floor --mode http
//   BENCH_EXTRA_ADAPTERS=/work/main/bench/peers node run.mjs --framework provider-floor:hashed --mode http
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";

const DIST = process.env.CHARTER_DIST
  ? pathToFileURL(`${resolve(process.env.CHARTER_DIST)}/`).href
  : new URL("../../dist/", import.meta.url).href;
const { contentHash } = await import(new URL("foundation/content-hash.js", DIST).href);

const HARNESS = process.env.BENCH_PEERS_DIR ?? process.argv[1].slice(0, process.argv[1].lastIndexOf("/"));
const { openSession, finishSession, userPrompt, echoTool, SYSTEM_PROMPT, TOOL_NAME, TOOL_DESCRIPTION } =
  await import(pathToFileURL(`${HARNESS}/lib/script.mjs`).href);

export const meta = {
  packages: [],
  description:
    "floor: bare loop with the model called through @ai-sdk/openai-compatible doGenerate (no Charter); " +
    "variant hashed: + canonical JSON + BLAKE3 of every raw request and response body",
};

const tools = [
  {
    type: "function",
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
  },
];

export default async function create({ transport = "inproc", variant, baseURL, fetch } = {}) {
  if (transport !== "http") throw new Error("provider-floor measures the HTTP mode only");
  if (variant !== undefined && variant !== "hashed")
    throw new Error(`provider-floor: unknown variant ${variant}`);
  const hashed = variant === "hashed";
  const model = createOpenAICompatible({ name: "fake", baseURL, apiKey: "sk-bench", fetch }).chatModel(
    "gpt-4o-mini",
  );
  let hashes = 0;

  async function runSession({ turns, delayMs = 0 }) {
    const session = openSession(turns, delayMs);
    const prompt = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: [{ type: "text", text: userPrompt(session) }] },
    ];
    let final;
    for (let step = 0; step < turns + 5; step++) {
      const result = await model.doGenerate({ prompt, tools });
      if (hashed) {
        // Both bodies as the transcript would address them; the hashes are kept so the work is not dead code.
        if (contentHash(JSON.parse(result.request.body)) && contentHash(result.response.body)) hashes += 2;
      }
      const calls = result.content.filter((part) => part.type === "tool-call");
      if (calls.length === 0) {
        final = result.content.find((part) => part.type === "text")?.text ?? "";
        break;
      }
      prompt.push({
        role: "assistant",
        content: calls.map((call) => ({
          type: "tool-call",
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: JSON.parse(call.input),
        })),
      });
      for (const call of calls) {
        const output = await echoTool(session.id, JSON.parse(call.input).text);
        prompt.push({
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              output: { type: "text", value: String(output) },
            },
          ],
        });
      }
    }
    return finishSession(session, final);
  }
  return { runSession, hashes: () => hashes };
}
