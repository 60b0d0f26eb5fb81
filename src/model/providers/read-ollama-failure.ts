import type { ProviderFailureFacts, ProviderFailureVerdict } from "../provider-failure.js";

/**
 * Ollama's errors are `{ "error": "<text>" }` with a meaningful HTTP status, which the generic rules read.
 * What is left is an error line inside a 200 stream (the model runner failed mid-answer): a server failure.
 */
export function readOllamaFailure(facts: ProviderFailureFacts): ProviderFailureVerdict | null {
  if (facts.statusCode !== null && facts.statusCode >= 300) return null;
  const body = facts.body;
  const reportsError =
    typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string";
  return reportsError
    ? { errorClass: "server", reason: "failed: Ollama reported an error mid-answer" }
    : null;
}
