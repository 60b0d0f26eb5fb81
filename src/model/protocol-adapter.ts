import { jsonrepair } from "jsonrepair";
import type { AgentMessage, ToolInvocation } from "../contract/agent-message.js";
import type {
  ProtocolAdapterResult,
  ProtocolAdapterStatus,
  ProtocolFailureCode,
  RejectedToolCall,
} from "../contract/protocol-adapter-result.js";
import { locateJsonSyntaxError } from "./locate-json-syntax-error.js";
import type { ModelResponse, RawToolCall } from "./model-client.js";

/** Bumped whenever the adapter's decisions change for some input, so that replays can tell. */
export const ADAPTER_VERSION = "charter-adapter/2";

/** Version 1 had no depth limit: a replay of a run recorded under it decides as it did. */
const adapterVersionWithoutDepthLimit = "charter-adapter/1";

/** The adapter versions this adapter decides as: a recorded run under one of them resumes and replays as it ran. */
export const supportedAdapterVersions: readonly string[] = Object.freeze([
  adapterVersionWithoutDepthLimit,
  ADAPTER_VERSION,
]);

/**
 * The deepest nesting of tool arguments accepted. Real tool schemas nest a handful of levels; deeper input is
 * refused before it is parsed, so that nothing downstream (validation, hashing, redaction, the transcript)
 * ever walks a structure deep enough to exhaust the stack.
 */
export const maxArgumentDepth = 64;

export interface ProtocolAdapterOptions {
  /** `strict_mode` of the contract: no repair, malformed calls are rejected. */
  readonly strict: boolean;
  /** `provider/model` of the target that answered. */
  readonly sourceModel: string;
  readonly adapterVersion: string;
  /** Hash of the raw provider response, computed by the caller. */
  readonly rawHash: string;
}

type CallDecision =
  | { readonly accepted: true; readonly invocation: ToolInvocation; readonly recovered: boolean }
  | { readonly accepted: false; readonly rejection: RejectedToolCall };

const noRecoveredIds: readonly string[] = Object.freeze([]);
const noRejections: readonly RejectedToolCall[] = Object.freeze([]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function excerptAround(text: string, position: number): string {
  const start = Math.max(0, position - 20);
  return JSON.stringify(text.slice(start, position + 20));
}

function reject(
  call: RawToolCall,
  id: string,
  failureCode: ProtocolFailureCode,
  detail: string,
): CallDecision {
  return {
    accepted: false,
    rejection: Object.freeze({
      id,
      name: call.name,
      raw_arguments: call.argumentsText,
      failure_code: failureCode,
      detail,
    }),
  };
}

function accept(
  call: RawToolCall,
  id: string,
  argumentsObject: Record<string, unknown>,
  sourceModel: string,
  recovered: boolean,
): CallDecision {
  // Keys in sorted order: canonical JSON of sorted objects is JSON.stringify's output (the fast path).
  const invocation: ToolInvocation = Object.freeze({
    // Shallow on purpose: freezing arbitrarily deep model output would recurse without bound.
    arguments: Object.freeze(argumentsObject),
    id,
    name: call.name,
    raw_payload: Object.freeze(
      call.providerMetadata === undefined
        ? { arguments_text: call.argumentsText }
        : { arguments_text: call.argumentsText, provider_metadata: call.providerMetadata },
    ),
    source_model: sourceModel,
  });
  return { accepted: true, invocation, recovered };
}

function tryRepair(text: string): Record<string, unknown> | null {
  try {
    const repaired: unknown = JSON.parse(jsonrepair(text));
    return isPlainObject(repaired) ? repaired : null;
  } catch {
    return null;
  }
}

function decideCall(call: RawToolCall, id: string, options: ProtocolAdapterOptions): CallDecision {
  const subject = `Tool call ${JSON.stringify(id)} to ${JSON.stringify(call.name)}`;
  if (call.name.trim() === "") {
    return reject(call, id, "MISSING_TOOL_NAME", `Tool call ${JSON.stringify(id)} has no tool name.`);
  }
  const text = call.argumentsText;
  // OpenAI and several compatible servers send "" as the arguments of a tool that takes none. That is
  // the provider's spelling of "no arguments", not a malformed payload, so it is the empty object; any
  // other text must be JSON.
  if (text === "") return accept(call, id, {}, options.sourceModel, false);
  if (options.adapterVersion !== adapterVersionWithoutDepthLimit) {
    const depth = jsonTextDepth(text, maxArgumentDepth);
    if (depth > maxArgumentDepth) {
      return reject(
        call,
        id,
        "TOOL_ARGUMENTS_TOO_DEEP",
        `${subject}: arguments are nested more than ${maxArgumentDepth} levels deep; send flatter arguments.`,
      );
    }
  }
  let parsed: unknown;
  let parseError: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    parseError = error;
  }
  if (parseError === null) {
    if (isPlainObject(parsed)) return accept(call, id, parsed, options.sourceModel, false);
    return reject(
      call,
      id,
      "TOOL_ARGUMENTS_NOT_OBJECT",
      `${subject}: arguments must be a JSON object, but they are ${describeType(parsed)}.`,
    );
  }
  if (!options.strict) {
    const repaired = tryRepair(text);
    if (repaired !== null) return accept(call, id, repaired, options.sourceModel, true);
  }
  const location = locateJsonSyntaxError(text);
  const reason = parseError instanceof Error ? parseError.message : String(parseError);
  return reject(
    call,
    id,
    "MALFORMED_TOOL_ARGUMENTS",
    `${subject}: arguments are not valid JSON: error at position ${location.position} ` +
      `(line ${location.line}, column ${location.column}) near ${excerptAround(text, location.position)}` +
      ` (${reason})${options.strict ? "" : "; automatic repair failed too"}.`,
  );
}

/**
 * How deeply the brackets of a JSON text nest (strings skipped), counted in one pass without parsing, stopping
 * as soon as it passes `limit`. Malformed text is measured the same way: its brackets are what a parser or a
 * repair would recurse on.
 */
function jsonTextDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      // A backslash escapes the next character; a quote ends the string.
      if (code === 92) index++;
      else if (code === 34) inString = false;
      continue;
    }
    if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === 125 || code === 93) depth--;
  }
  return deepest;
}

/**
 * Canonical ids: the provider's own, except that an empty id gets a positional one and a repeated id a
 * positional suffix, because the conversation sent back must answer every call by a distinct id.
 */
function canonicalIds(calls: readonly RawToolCall[]): string[] {
  const ids: string[] = [];
  const seen = calls.length > 1 ? new Set<string>() : null;
  calls.forEach((call, index) => {
    let id = call.id === "" ? `call_${index}` : call.id;
    if (seen !== null) {
      if (seen.has(id)) id = `${id}_${index}`;
      seen.add(id);
    }
    ids.push(id);
  });
  return ids;
}

function result(
  status: ProtocolAdapterStatus,
  canonicalMessage: AgentMessage | null,
  failureCode: ProtocolFailureCode | null,
  rejections: readonly RejectedToolCall[],
  recoveredIds: readonly string[],
  options: ProtocolAdapterOptions,
): ProtocolAdapterResult {
  return Object.freeze({
    status,
    canonical_message: canonicalMessage,
    failure_code: failureCode,
    raw_hash: options.rawHash,
    adapter_version: options.adapterVersion,
    rejected_calls: rejections,
    recovered_call_ids: recoveredIds,
  });
}

/**
 * The strict protocol boundary (seed 002 §4.2, Phase 2a): turns one provider response into a canonical
 * assistant message or an explicit rejection, deterministically by input. Malformed tool calls are never
 * coerced to `{}` or to prose: in strict mode they are rejected with a precise reason; otherwise a
 * `jsonrepair` repair that yields an object is accepted and reported as `recovered`. Valid sibling calls
 * always survive a rejected one. Never throws.
 */
export function adaptProtocol(
  response: ModelResponse,
  options: ProtocolAdapterOptions,
): ProtocolAdapterResult {
  const hasText = response.text.trim() !== "";
  const hasReasoning = response.reasoning.trim() !== "";
  const rawCalls = response.toolCalls;

  if (rawCalls.length === 0 && !hasText) {
    const failureCode: ProtocolFailureCode = hasReasoning ? "REASONING_ONLY" : "EMPTY_RESPONSE";
    return result("rejected", null, failureCode, noRejections, noRecoveredIds, options);
  }

  const accepted: ToolInvocation[] = [];
  let rejections: RejectedToolCall[] | null = null;
  let recoveredIds: string[] | null = null;
  if (rawCalls.length > 0) {
    const ids = canonicalIds(rawCalls);
    rawCalls.forEach((call, index) => {
      const decision = decideCall(call, ids[index]!, options);
      if (decision.accepted) {
        accepted.push(decision.invocation);
        if (decision.recovered) {
          recoveredIds ??= [];
          recoveredIds.push(decision.invocation.id);
        }
      } else {
        rejections ??= [];
        rejections.push(decision.rejection);
      }
    });
  }
  const frozenRejections = rejections === null ? noRejections : Object.freeze(rejections);
  const frozenRecoveredIds = recoveredIds === null ? noRecoveredIds : Object.freeze(recoveredIds);

  if (accepted.length === 0 && !hasText) {
    const firstCode = frozenRejections[0]?.failure_code ?? "MALFORMED_TOOL_ARGUMENTS";
    return result("rejected", null, firstCode, frozenRejections, frozenRecoveredIds, options);
  }

  // Keys in sorted order, for the canonical JSON fast path. Provider metadata (signatures, encrypted
  // reasoning) travels with the message so the next request can hand it back to the provider.
  const message: AgentMessage = Object.freeze({
    content: response.text,
    ...(response.textProviderMetadata === undefined
      ? {}
      : { provider_metadata: response.textProviderMetadata }),
    ...(response.reasoning === "" ? {} : { reasoning: response.reasoning }),
    ...(response.reasoningBlocks === undefined
      ? {}
      : {
          reasoning_blocks: Object.freeze(
            response.reasoningBlocks.map((block) =>
              Object.freeze(
                block.providerMetadata === undefined
                  ? { text: block.text }
                  : { provider_metadata: block.providerMetadata, text: block.text },
              ),
            ),
          ),
        }),
    role: "assistant",
    tool_calls: Object.freeze(accepted),
  });
  const status: ProtocolAdapterStatus = frozenRecoveredIds.length > 0 ? "recovered" : "native";
  return result(status, message, null, frozenRejections, frozenRecoveredIds, options);
}
