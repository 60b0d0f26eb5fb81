import type { AgentMessage } from "../contract/agent-message.js";
import type { RequestParameters } from "../contract/execution-contract.js";
import { canonicalJson } from "../foundation/canonical-json.js";
import { blake3OfConcatenation, contentHash } from "../foundation/content-hash.js";
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

// Tool specs and request parameters are the same objects turn after turn (the session context's and the
// contract's): hashed once each.
const toolsHashes = new WeakMap<readonly ModelToolSpec[], string>();
const parametersHashes = new WeakMap<RequestParameters, string>();

/** The running hash of messages[0, length): `h_0 = ""`, `h_i = blake3Hex(h_{i-1} + canonicalJson(message_i))`. */
export interface MessagesHash {
  readonly length: number;
  readonly hash: string;
}

/**
 * The running hash of all of `messages`, continued from `known` when it is the hash of a prefix of them. The
 * session keeps the conversation's (which only grows) in its state, so a turn hashes only the messages it added
 * and the per-turn cost stays flat however long the run (see docs/benchmarks.md).
 */
export function messagesHash(messages: readonly AgentMessage[], known: MessagesHash | null): MessagesHash {
  let index = 0;
  let hash = "";
  if (known !== null && known.length <= messages.length) {
    index = known.length;
    hash = known.hash;
  }
  // `hash` is "" or 64 hex digits, so the concatenation is unambiguous.
  for (; index < messages.length; index++) hash = blake3OfConcatenation(hash, canonicalJson(messages[index]));
  return { length: messages.length, hash };
}

function rememberedHash<Key extends object>(hashes: WeakMap<Key, string>, value: Key): string {
  let hash = hashes.get(value);
  if (hash === undefined) {
    hash = contentHash(value);
    hashes.set(value, hash);
  }
  return hash;
}

/**
 * The canonical hash of a model request: what a recorded INFER entry keeps as `request_hash` and what replay looks
 * the recorded response up by. The raw provider request (`raw_request_hash`) cannot serve: only the provider's own
 * code can rebuild it, and replay runs none. Defined as the content hash (BLAKE3 of RFC 8785 JSON) of
 * `["charter.model-request", 1, provider, model, contentHash(parameters), tool_choice, contentHash(tools), m]`, where
 * `m` chains the messages: `h_0 = ""`, `h_i = blake3Hex(h_{i-1} + canonicalJson(message_i))`, `m = h_n`.
 */
export function modelRequestHash(request: ModelRequest, messages: MessagesHash): string {
  // An array of strings and numbers: its canonical JSON is JSON.stringify's, the cheapest path to a hash.
  return contentHash([
    "charter.model-request",
    1,
    request.provider,
    request.model,
    rememberedHash(parametersHashes, request.parameters),
    request.toolChoice,
    rememberedHash(toolsHashes, request.tools),
    messages.length === request.messages.length
      ? messages.hash
      : messagesHash(request.messages, messages).hash,
  ]);
}
