import type { SecretRedactor } from "../foundation/secret-redactor.js";
import { ModelCallError } from "../model/model-call-error.js";
import type { ModelClient, ModelDelta, ModelResponse } from "../model/model-client.js";

/**
 * A model client whose answers reach the session with every registered secret redacted: the text, the
 * reasoning, each tool call's argument text, the streamed deltas (a secret split across deltas is held back and
 * redacted whole) and a failure's message and body. Redacting where the answer enters, rather than where each
 * copy of it leaves, keeps every copy alike: the conversation, the checkpoints, the stored results, the report
 * and the printed output hold the same redacted text the transcript does, and the request hashes are computed
 * over it, so a replay (which sees only the redacted record) rebuilds exactly the requests the run made.
 */
export function redactingModelClient(client: ModelClient, redactor: SecretRedactor): ModelClient {
  return {
    provider: client.provider,
    model: client.model,
    async generate(request) {
      const onDelta = request.onDelta;
      const streams = onDelta === undefined ? null : deltaRedactor(redactor, onDelta);
      try {
        const response = await client.generate(
          streams === null ? request : { ...request, onDelta: streams.push },
        );
        streams?.flush();
        return redactResponse(response, redactor);
      } catch (error) {
        streams?.flush();
        throw ModelCallError.isModelCallError(error) ? redactModelCallError(error, redactor) : error;
      }
    },
  };
}

function deltaRedactor(redactor: SecretRedactor, onDelta: (delta: ModelDelta) => void) {
  const text = redactor.createStreamRedactor();
  const reasoning = redactor.createStreamRedactor();
  const forward = (type: "text" | "reasoning", shown: string) => {
    if (shown !== "") onDelta({ type, text: shown });
  };
  return {
    push(delta: ModelDelta): void {
      if (delta.type === "tool_call") onDelta(delta);
      else forward(delta.type, (delta.type === "text" ? text : reasoning).push(delta.text));
    },
    flush(): void {
      forward("reasoning", reasoning.flush());
      forward("text", text.flush());
    },
  };
}

function redactResponse(response: ModelResponse, redactor: SecretRedactor): ModelResponse {
  if (redactor.secretCount === 0) return response;
  return {
    ...response,
    text: redactor.redactString(response.text),
    reasoning: redactor.redactString(response.reasoning),
    toolCalls: response.toolCalls.map((call) => ({
      ...call,
      argumentsText: redactor.redactString(call.argumentsText),
    })),
    ...(response.reasoningBlocks !== undefined
      ? {
          reasoningBlocks: response.reasoningBlocks.map((block) => ({
            ...block,
            text: redactor.redactString(block.text),
          })),
        }
      : {}),
    rawRequest: redactor.redactValue(response.rawRequest),
    rawResponse: redactor.redactValue(response.rawResponse),
    ...(response.warnings !== undefined
      ? { warnings: response.warnings.map((warning) => redactor.redactString(warning)) }
      : {}),
  };
}

function redactModelCallError(error: ModelCallError, redactor: SecretRedactor): ModelCallError {
  if (redactor.secretCount === 0) return error;
  // The original is not kept as the cause: its message and body are what must not be printed or stored.
  return new ModelCallError(error.errorClass, redactor.redactString(error.message), {
    code: error.code,
    statusCode: error.statusCode,
    retryAfterMs: error.retryAfterMs,
    rawResponse: redactor.redactValue(error.rawResponse),
    partialResponse: error.partialResponse === null ? null : redactResponse(error.partialResponse, redactor),
    // Every fact the error carries (a network failure's url and cause, say), redacted as its message is.
    details: redactor.redactValue(error.details) as Readonly<Record<string, unknown>>,
  });
}
