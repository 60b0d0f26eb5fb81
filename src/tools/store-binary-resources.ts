import type { ToolBinaryResource } from "./tool-definition.js";
import type { ToolOutputStore } from "./tool-output-store.js";

const base64LineLength = 76;

/** Media types whose bytes are text: stored decoded, so that `tool_output` reads and greps them as text. */
function isTextual(mediaType: string | null): boolean {
  if (mediaType === null) return false;
  const type = mediaType.split(";")[0]!.trim().toLowerCase();
  return (
    type.startsWith("text/") ||
    type.endsWith("+json") ||
    type.endsWith("+xml") ||
    ["application/json", "application/xml", "application/javascript", "application/yaml"].includes(type)
  );
}

function wrapped(base64: string): string {
  const lines: string[] = [];
  for (let index = 0; index < base64.length; index += base64LineLength) {
    lines.push(base64.slice(index, index + base64LineLength));
  }
  return lines.join("\n");
}

/**
 * Stores each binary resource a tool returned behind a `tool_output` handle and returns one line of JSON per
 * resource for the model: its URI, media type, size and handle. A resource of a textual media type whose bytes
 * are valid UTF-8 is stored as that text; any other is stored as base64 in lines of 76 characters. Without a
 * store, or when storing fails, the line says the resource was not stored: it is described, never silently lost.
 */
export async function storeBinaryResources(
  resources: readonly ToolBinaryResource[],
  store: ToolOutputStore | null,
  origin: { readonly toolName: string; readonly callId: string },
): Promise<string[]> {
  const lines: string[] = [];
  for (const resource of resources) {
    const bytes = Buffer.from(resource.data, "base64");
    let text: string | null = null;
    if (isTextual(resource.mediaType)) {
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        text = null;
      }
    }
    const description = {
      type: "resource",
      uri: resource.uri,
      mimeType: resource.mediaType,
      bytes: bytes.length,
    };
    let handle: string | null = null;
    if (store !== null) {
      try {
        handle = (await store.store(text ?? wrapped(bytes.toString("base64")), origin)).handle;
      } catch {
        handle = null;
      }
    }
    lines.push(
      JSON.stringify(
        handle === null
          ? { ...description, stored: false }
          : {
              ...description,
              handle,
              encoding: text === null ? "base64" : "utf-8",
              hint: "call tool_output with this handle to read it",
            },
      ),
    );
  }
  return lines;
}
