import type { StoredToolOutput } from "./tool-output-store.js";

/**
 * What the model sees instead of an oversized output (seed 000 §3): JSON naming the handle, why the output
 * was stored, its size, and how to read it.
 */
export function toolOutputHandleMessage(stored: StoredToolOutput, maxBytes: number): string {
  return JSON.stringify({
    handle: stored.handle,
    reason: `tool output exceeded toolResponseMaxBytes (${stored.bytes} bytes > ${maxBytes})`,
    bytes: stored.bytes,
    lines: stored.lines,
    tokens: stored.tokens,
    hint: "call tool_output with this handle to read lines or grep",
  });
}
