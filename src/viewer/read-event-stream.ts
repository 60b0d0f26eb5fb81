import { ApiError, getRaw } from "./api-client.js";

/** One server-sent event: its id (the event's sequence in the run), its type and its JSON data. */
export interface StreamedEvent {
  readonly id: string | null;
  readonly event: string;
  readonly data: unknown;
}

/**
 * Reads a run's event stream with `fetch` (an `EventSource` cannot send the `Authorization` header), event by
 * event, until the stream ends or `signal` aborts. A connection lost before the run's last event is opened
 * again with `Last-Event-ID`, so no event is missed or repeated; the server answers 204 once there is nothing
 * left to send.
 */
export async function readEventStream(
  path: string,
  onEvent: (event: StreamedEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  let lastEventId: string | null = null;
  let failures = 0;
  while (!signal.aborted) {
    let response: Response;
    try {
      response = await getRaw(path, lastEventId === null ? {} : { "last-event-id": lastEventId }, signal);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      if (failures > 5) throw error;
      await pause(1000 * failures, signal);
      continue;
    }
    if (response.status === 204) return;
    if (!response.ok || response.body === null) {
      throw new ApiError(
        response.status,
        "EVENT_STREAM_FAILED",
        `the event stream answered ${response.status}`,
      );
    }
    failures = 0;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let ended = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replaceAll("\r\n", "\n");
        let boundary = buffer.indexOf("\n\n");
        while (boundary !== -1) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const parsed = parseBlock(block);
          if (parsed !== null) {
            if (parsed.id !== null) lastEventId = parsed.id;
            onEvent(parsed);
            if (parsed.event === "COMPLETED" || parsed.event === "FAILED") ended = true;
          }
          boundary = buffer.indexOf("\n\n");
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      // A dropped connection: opened again below, after the last event received.
      void error;
    }
    if (ended) return;
  }
}

function parseBlock(block: string): StreamedEvent | null {
  let id: string | null = null;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":") || line === "") continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  const text = data.join("\n");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Kept as text.
  }
  return { id, event, data: parsed };
}

function pause(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
