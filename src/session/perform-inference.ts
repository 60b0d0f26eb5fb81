import { contractDefaults } from "../contract/contract-defaults.js";
import { CharterError } from "../foundation/charter-error.js";
import { ModelCallError } from "../model/model-call-error.js";
import type { ModelDelta, ModelResponse } from "../model/model-client.js";
import { ADAPTER_VERSION, adaptProtocol } from "../model/protocol-adapter.js";
import type { SessionDependencies } from "./session-dependencies.js";
import type { SessionEffect } from "./session-effect.js";
import type { AttemptRecord } from "./session-event.js";

type InferEffect = Extract<SessionEffect, { type: "infer" }>;

/**
 * Performs one model attempt: waits if every target is rate-limited, calls the target's client, stores the
 * raw request and response by hash, and passes the response through the protocol adapter. Never throws:
 * every failure comes back as a classified AttemptRecord.
 */
export async function performInference(
  effect: InferEffect,
  dependencies: SessionDependencies,
  signal: AbortSignal,
  attachmentData?: (payloadHash: string) => string | undefined,
): Promise<AttemptRecord> {
  const { contract, environment, transcript } = dependencies;
  const client = dependencies.models[effect.targetIndex];
  const target = contract.model_targets[effect.targetIndex];
  const txnId = environment.newId("txn");
  const provider = target?.provider ?? client?.provider ?? "unknown";
  const model = target?.model ?? client?.model ?? "unknown";
  if (effect.waitMilliseconds > 0) await environment.sleep(effect.waitMilliseconds, signal);
  const started = environment.monotonicNow();
  let response: ModelResponse;
  try {
    if (client === undefined)
      throw new ModelCallError("bad_request", `no model client for target ${effect.targetIndex}`);
    if (signal.aborted) throw new ModelCallError("aborted", "the run was stopped before the model call");
    const onEvent = dependencies.onEvent;
    response = await client.generate({
      messages: effect.messages,
      tools: effect.tools,
      toolChoice: effect.toolChoice,
      // Each target has its own resolved parameters (per-model overrides; null ones are not sent).
      parameters: target?.request_parameters ?? contract.request_parameters,
      abortSignal: signal,
      ...(attachmentData === undefined ? {} : { attachmentData }),
      // The attempt's bounds (a version-2 contract records none: the defaults of today apply).
      timeoutMs: target?.model_timeout_ms ?? contractDefaults.modelTimeout,
      maxResponseBytes: target?.max_response_bytes ?? contractDefaults.modelResponseMaxBytes,
      ...(contract.stream
        ? {
            stream: true,
            onDelta: (delta: ModelDelta) => {
              if (onEvent === undefined || delta.type === "tool_call") return;
              // The token gate holds text back until a tool call has executed (reasoning is not an answer).
              if (delta.type === "text" && effect.textHeld) return;
              onEvent({
                type: delta.type === "text" ? "text_delta" : "reasoning_delta",
                runId: dependencies.runId,
                turn: effect.turn,
                text: delta.text,
              });
            },
          }
        : {}),
    });
  } catch (error) {
    const failure = signal.aborted
      ? new ModelCallError("aborted", "the model call was stopped by an interrupt or timeout", {
          cause: error,
        })
      : ModelCallError.isModelCallError(error)
        ? error
        : new ModelCallError("invalid_response", error instanceof Error ? error.message : String(error), {
            cause: error,
          });
    return {
      targetIndex: effect.targetIndex,
      provider,
      model,
      latencyMs: environment.monotonicNow() - started,
      usage: null,
      requestHash: effect.requestHash,
      rawRequestHash: null,
      // A stream cut mid-way is a failed attempt, but what arrived before the cut is kept in the transcript.
      rawResponseHash:
        failure.rawResponse === null && failure.partialResponse === null
          ? null
          : transcript.storeRaw({
              partial_response:
                failure.partialResponse === null
                  ? null
                  : {
                      reasoning: failure.partialResponse.reasoning,
                      text: failure.partialResponse.text,
                      toolCalls: failure.partialResponse.toolCalls,
                    },
              provider_response: failure.rawResponse ?? failure.partialResponse?.rawResponse ?? null,
            }),
      adapterResult: null,
      failure: {
        errorClass: failure.errorClass,
        code: failure.code,
        message: failure.message,
        statusCode: failure.statusCode,
        retryAfterMs: failure.retryAfterMs,
        ...networkFacts(failure.details),
      },
      txnId,
    };
  }
  const latencyMs = environment.monotonicNow() - started;
  const rawRequestHash =
    response.rawRequest === null ? null : transcript.storeRawRequest(response.rawRequest);
  let rawResponseHash: string;
  try {
    rawResponseHash = storeResponse(transcript, response);
  } catch (error) {
    // A hostile body nested too deep to hash or redact: a failed attempt, recorded without it.
    if (!CharterError.isInstance(error) || error.code !== "VALUE_TOO_DEEP") throw error;
    return {
      targetIndex: effect.targetIndex,
      provider,
      model,
      latencyMs,
      usage: response.usage,
      requestHash: effect.requestHash,
      rawRequestHash,
      rawResponseHash: null,
      adapterResult: null,
      failure: {
        errorClass: "invalid_response",
        code: "MODEL_INVALID_RESPONSE",
        message: `the response of ${provider}/${model} is nested too deep to record: ${error.message}`,
        statusCode: null,
        retryAfterMs: null,
      },
      txnId,
    };
  }
  const adapterResult = adaptProtocol(response, {
    strict: contract.strict_mode,
    sourceModel: `${provider}/${model}`,
    adapterVersion: contract.adapter_version || ADAPTER_VERSION,
    rawHash: rawResponseHash ?? "",
  });
  return {
    targetIndex: effect.targetIndex,
    provider,
    model,
    latencyMs,
    usage: response.usage,
    requestHash: effect.requestHash,
    rawRequestHash,
    rawResponseHash,
    adapterResult,
    failure: null,
    txnId,
  };
}

/** The URL and system error a network failure names, when the client found them (absent keys otherwise). */
function networkFacts(details: Readonly<Record<string, unknown>>): { url?: string; networkCause?: string } {
  return {
    ...(typeof details.url === "string" ? { url: details.url } : {}),
    ...(typeof details.networkCause === "string" ? { networkCause: details.networkCause } : {}),
  };
}

/**
 * One payload per attempt holds both the provider's own response body and the normalised ModelResponse the
 * protocol adapter read, so that a replay can feed the adapter exactly what it saw, with no provider code.
 */
function storeResponse(transcript: SessionDependencies["transcript"], response: ModelResponse): string {
  return transcript.storeRaw({
    model_response: {
      finishReason: response.finishReason,
      reasoning: response.reasoning,
      responseId: response.responseId,
      text: response.text,
      // Keys in sorted order, for the canonical JSON fast path.
      toolCalls: response.toolCalls.map((call) => ({
        argumentsText: call.argumentsText,
        id: call.id,
        name: call.name,
      })),
      usage: response.usage,
      // Parameters the provider could not take are reported, not dropped silently.
      ...(response.warnings !== undefined && response.warnings.length > 0
        ? { warnings: response.warnings }
        : {}),
    },
    provider_response: response.rawResponse,
  });
}
