import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import type { RunStore } from "../store/run-store.js";

/**
 * The bytes of the images and audio in a resumed run's conversation, from its stored raw payloads, so that a
 * provider that accepts them still gets them after the resume. Reads nothing when there are none.
 */
export async function readAttachmentData(
  store: RunStore,
  runId: string,
  checkpoint: SessionCheckpoint,
): Promise<ReadonlyMap<string, string>> {
  const wanted = new Set<string>();
  for (const message of checkpoint.state.conversation) {
    for (const attachment of message.attachments ?? []) wanted.add(attachment.payload_hash);
  }
  const found = new Map<string, string>();
  if (wanted.size === 0) return found;
  for await (const page of store.readRunRawPayloads(runId)) {
    for (const payload of page) {
      if (!wanted.has(payload.hash)) continue;
      const data = (JSON.parse(payload.json) as { data?: unknown }).data;
      if (typeof data === "string") found.set(payload.hash, data);
    }
  }
  return found;
}
