/** True when `target` occurs as a string anywhere in `value`: did the provider itself send this id? */
export function containsString(value: unknown, target: string, depth = 0): boolean {
  if (typeof value === "string") return value === target;
  if (typeof value !== "object" || value === null || depth > 32) return false;
  if (Array.isArray(value)) return value.some((item) => containsString(item, target, depth + 1));
  for (const key in value) {
    if (containsString((value as Record<string, unknown>)[key], target, depth + 1)) return true;
  }
  return false;
}

/**
 * Tool call ids that do not change between runs. A provider package invents a random id when the provider
 * sent none (Gemini and Ollama often send none); such an id would make every replay of the conversation
 * differ. An id the provider sent (found in its raw payload) is kept; an invented one is replaced by
 * `<response id>_call_<index>`, or by `call_<provider>_<n>` counted per client when the response has no id.
 */
export class CallIdAssigner {
  private generated = 0;
  private readonly prefix: string;

  constructor(provider: string) {
    // Some providers accept only [A-Za-z0-9_-] in tool call ids.
    this.prefix = `call_${provider.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  }

  assign(sdkId: string, sentByProvider: boolean, responseId: string | null, index: number): string {
    if (sentByProvider && sdkId !== "") return sdkId;
    if (responseId !== null && responseId !== "") return `${responseId}_call_${index}`;
    this.generated += 1;
    return `${this.prefix}_${this.generated}`;
  }
}
