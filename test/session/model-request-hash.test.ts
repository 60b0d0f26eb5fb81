import { describe, expect, it } from "vitest";
import { systemMessage, toolMessage, userMessage } from "../../src/contract/agent-message.js";
import { canonicalJson } from "../../src/foundation/canonical-json.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { messagesHash, modelRequestHash } from "../../src/session/model-request-hash.js";

const conversation = [
  systemMessage("You are a test agent."),
  userMessage("Do the task."),
  toolMessage("call_1", "lookup", "value of k"),
  toolMessage("call_2", "lookup", "value of j"),
];

describe("the model request hash (replay's key)", () => {
  it("chains the messages one by one: h_i = BLAKE3(h_(i-1) + canonical JSON of message i)", () => {
    let expected = "";
    for (const message of conversation) expected = blake3Hex(expected + canonicalJson(message));
    expect(messagesHash(conversation, null)).toEqual({ length: 4, hash: expected });
  });

  it("continues from a prefix's hash to the same value as hashing everything", () => {
    const prefix = messagesHash(conversation.slice(0, 2), null);
    expect(messagesHash(conversation, prefix)).toEqual(messagesHash(conversation, null));
  });

  it("ignores a known hash longer than the messages, and hashes notices on top of the conversation's", () => {
    const whole = messagesHash(conversation, null);
    expect(messagesHash(conversation.slice(0, 3), whole)).toEqual(
      messagesHash(conversation.slice(0, 3), null),
    );
    const request = {
      provider: "scripted",
      model: "m0",
      parameters: {} as never,
      toolChoice: "auto",
      tools: [],
      messages: [...conversation, userMessage("This is your final turn.")],
    };
    expect(modelRequestHash(request, whole)).toBe(
      modelRequestHash(request, messagesHash(request.messages, null)),
    );
    expect(modelRequestHash(request, whole)).not.toBe(
      modelRequestHash({ ...request, messages: conversation }, whole),
    );
  });
});
