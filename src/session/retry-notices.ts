import { type AgentMessage, userMessage } from "../contract/agent-message.js";
import type { RejectedToolCall } from "../contract/protocol-adapter-result.js";

/**
 * Retry guidance shown to the model for one attempt only (seed 000 §4: not added to the conversation).
 * Kept in one place so that wording changes never touch the state machine.
 */
export const retryNotices = {
  empty(): AgentMessage {
    return userMessage(
      "(runtime notice) Your last response was empty. Answer with a tool call, or call final_report with your answer.",
    );
  },
  reasoningOnly(): AgentMessage {
    return userMessage(
      "(runtime notice) Your last response contained only reasoning. Act on it now: call a tool, or call final_report.",
    );
  },
  rejectedCalls(calls: readonly RejectedToolCall[]): AgentMessage {
    const lines = calls.map((call) => `- call ${call.id} to '${call.name}': ${call.detail}`);
    return userMessage(
      `(runtime notice) These tool calls were rejected and not executed:\n${lines.join("\n")}\nSend valid JSON object arguments.`,
    );
  },
  toolRequired(): AgentMessage {
    return userMessage(
      "(runtime notice) This task requires acting through tools: call one of the available tools instead of answering in prose.",
    );
  },
  reportInvalid(errors: readonly string[]): AgentMessage {
    return userMessage(
      `(runtime notice) Your answer is not a valid final report:\n${errors.map((error) => `- ${error}`).join("\n")}\nCall final_report again with a corrected report.`,
    );
  },
  finalTurn(turn: number, maxTurns: number): AgentMessage {
    return userMessage(
      `(runtime notice) This is your final turn (${turn} of ${maxTurns}). Call final_report now with your best answer.`,
    );
  },
  forcedFinal(reason: string): AgentMessage {
    return userMessage(
      `(runtime notice) ${reason} Only final_report is available now: call it with your best answer.`,
    );
  },
};
