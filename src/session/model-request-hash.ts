import type { AgentMessage } from "../contract/agent-message.js";
import type { RequestParameters } from "../contract/execution-contract.js";
import { canonicalJson } from "../foundation/canonical-json.js";
import { blake3OfParts, contentHash } from "../foundation/content-hash.js";
import type { ModelToolSpec } from "../model/model-client.js";

/** A model request as the session builds it (the `infer` effect), before any provider shapes it. */
export interface ModelRequest {
  readonly provider: string;
  readonly model: string;
  readonly parameters: RequestParameters;
  readonly toolChoice: string;
  readonly tools: readonly ModelToolSpec[];
  readonly messages: readonly AgentMessage[];
}

// The conversation only grows between turns and keeps its message objects, so each message's running hash
// (of the messages up to it) is remembered with the running hash before it: a turn hashes only the messages
// it added, and the per-turn cost stays flat however long the run (see docs/benchmarks.md).
const runningHashes = new WeakMap<AgentMessage, { readonly before: string; readonly hash: string }>();
const toolsHashes = new WeakMap<readonly ModelToolSpec[], string>();

function messagesHash(messages: readonly AgentMessage[]): string {
  let hash = "";
  for (const message of messages) {
    const remembered = runningHashes.get(message);
    if (remembered !== undefined && remembered.before === hash) {
      hash = remembered.hash;
      continue;
    }
    const before = hash;
    hash = blake3OfParts([before, canonicalJson(message)]);
    runningHashes.set(message, { before, hash });
  }
  return hash;
}

function toolsHash(tools: readonly ModelToolSpec[]): string {
  let hash = toolsHashes.get(tools);
  if (hash === undefined) {
    hash = contentHash(tools);
    toolsHashes.set(tools, hash);
  }
  return hash;
}

/**
 * The canonical hash of a model request: what a recorded INFER entry keeps as `request_hash` and what replay
 * looks the recorded response up by. The raw provider request (`raw_request_hash`) cannot serve: only the
 * provider's own code can rebuild it, and replay runs none. Defined as `contentHash({ kind:
 * "charter.model-request", v: 1, provider, model, parameters, tool_choice, tools: contentHash(tools), messages })`
 * where `messages` chains the conversation: `h_0 = ""`, `h_i = blake3OfParts([h_{i-1}, canonicalJson(m_i)])`.
 */
export function modelRequestHash(request: ModelRequest): string {
  return contentHash({
    kind: "charter.model-request",
    messages: messagesHash(request.messages),
    model: request.model,
    parameters: request.parameters,
    provider: request.provider,
    tool_choice: request.toolChoice,
    tools: toolsHash(request.tools),
    v: 1,
  });
}
