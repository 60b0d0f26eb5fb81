import type { AgentMessage } from "../../contract/agent-message.js";
import type { ConversationHistoryMessage } from "../../runner/prepare-agent.js";
import type { FinalReport } from "../../session/final-report.js";
import type { RunStore } from "../../store/run-store.js";

/**
 * The conversation a new run of `conversationId` continues, in the store's tenant: the messages of the latest run
 * of that conversation that completed before this one was requested, as its PRECHECK entry recorded them (its own
 * prompt and the conversation it continued, redacted as stored), then its report as the assistant's answer. A
 * conversation is thus the chain of its completed runs; a run that failed, is still running or waits for an
 * approval adds nothing (its exchange has no answer to continue from). Empty for a new conversation.
 */
export async function conversationHistory(
  store: RunStore,
  conversationId: string,
  runId: string,
): Promise<ConversationHistoryMessage[]> {
  const requests = await store.listConversationRequests(conversationId);
  const position = requests.findIndex((request) => request.runId === runId);
  const earlier = position === -1 ? requests : requests.slice(0, position);
  const latest = earlier.filter((request) => request.state === "COMPLETED").at(-1);
  if (latest === undefined) return [];
  const run = await store.getRun(latest.runId);
  if (run === null || run.status !== "completed") return [];
  let opening: readonly AgentMessage[] = [];
  for await (const entry of store.readEntries(latest.runId)) {
    if (entry.state === "PRECHECK")
      opening = (entry.action as { readonly conversation?: readonly AgentMessage[] }).conversation ?? [];
    break;
  }
  const messages = opening
    .filter((message) => message.role === "user" || message.role === "assistant")
    .map((message) => ({ role: message.role as "user" | "assistant", content: message.content }));
  const report = run.finalReport as FinalReport | null;
  const answer =
    report?.content ?? (report?.content_json !== undefined ? JSON.stringify(report.content_json) : "");
  return [...messages, { role: "assistant", content: answer }];
}
