import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from "@ai-sdk/provider";
import { classifyModelError, type ModelErrorContext } from "../classify-model-error.js";
import { ModelCallError } from "../model-call-error.js";

/**
 * Classifies what an AI SDK call threw or reported inside a stream: first the SDK's own error classes
 * (recognised by their markers, never by message), then the transport-neutral facts through
 * `classifyModelError`, which consults the provider's own reading of its error format first.
 */
export function classifyAiSdkError(error: unknown, context: ModelErrorContext): ModelCallError {
  if (!context.abortedByCaller && !context.timedOut) {
    const where = context.target === undefined ? "model call" : `model call to ${context.target}`;
    // A stream line the SDK could not validate may be the provider reporting an error in its own format.
    if (TypeValidationError.isInstance(error) && context.readProviderFailure !== undefined) {
      const verdict = context.readProviderFailure({
        statusCode: null,
        body: error.value,
        headers: undefined,
        now: context.now,
      });
      if (verdict) {
        return new ModelCallError(verdict.errorClass, `${where} ${verdict.reason}`, {
          retryAfterMs: verdict.retryAfterMs ?? null,
          rawResponse: error.value ?? null,
          cause: error,
        });
      }
    }
    if (
      InvalidResponseDataError.isInstance(error) ||
      JSONParseError.isInstance(error) ||
      TypeValidationError.isInstance(error) ||
      EmptyResponseBodyError.isInstance(error)
    ) {
      return new ModelCallError("invalid_response", `${where} returned a response Charter cannot use`, {
        cause: error,
      });
    }
    if (
      InvalidPromptError.isInstance(error) ||
      InvalidArgumentError.isInstance(error) ||
      UnsupportedFunctionalityError.isInstance(error)
    ) {
      return new ModelCallError("bad_request", `${where} could not be built from the request`, {
        cause: error,
      });
    }
  }
  const noHttpAnswer = APICallError.isInstance(error) && error.statusCode === undefined;
  return classifyModelError(error, { ...context, noHttpAnswer });
}
