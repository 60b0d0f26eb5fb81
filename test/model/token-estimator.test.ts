import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { type AgentMessage, toolMessage, userMessage } from "../../src/contract/agent-message.js";
import {
  createTokenEstimator,
  messageOverheadTokens,
  toolOverheadTokens,
} from "../../src/model/token-estimator.js";

describe("createTokenEstimator", () => {
  it("counts text in the o200k_base encoding", () => {
    const estimator = createTokenEstimator();
    const text = "Charter keeps agents inside their contract.";
    expect(estimator.countText(text)).toBe(countTokens(text));
    expect(estimator.countText("")).toBe(0);
  });

  it("counts short texts it has seen before the same (their counts are remembered, in bounded memory)", () => {
    const estimator = createTokenEstimator();
    // More distinct short texts than are remembered at once, each asked twice.
    for (let index = 0; index < 3000; index++) {
      const text = `tool_${index} ${"ab".repeat(index % 12)}`;
      expect(estimator.countText(text)).toBe(countTokens(text));
      expect(estimator.countText(text)).toBe(countTokens(text));
    }
  });

  it("counts special-token spellings as ordinary text instead of throwing", () => {
    const estimator = createTokenEstimator();
    expect(estimator.countText("before <|endoftext|> after")).toBeGreaterThan(3);
  });

  it("counts a message as content plus tool call names and argument JSON plus overhead", () => {
    const estimator = createTokenEstimator();
    const message: AgentMessage = {
      role: "assistant",
      content: "Let me read it.",
      reasoning: "the user wants the file",
      tool_calls: [
        {
          id: "c1",
          name: "read_file",
          arguments: { path: "/tmp/a" },
          source_model: "m",
          raw_payload: { arguments_text: '{"path": "/tmp/a"}' },
        },
        { id: "c2", name: "list", arguments: { depth: 2 }, source_model: "m", raw_payload: null },
      ],
    };
    const expected =
      messageOverheadTokens +
      countTokens("Let me read it.") +
      countTokens("the user wants the file") +
      countTokens("read_file") +
      countTokens('{"path": "/tmp/a"}') +
      countTokens("list") +
      countTokens('{"depth":2}');
    expect(estimator.countMessage(message)).toBe(expected);
    expect(estimator.countMessage(toolMessage("c1", "read_file", "data"))).toBe(
      messageOverheadTokens + countTokens("data"),
    );
  });

  it("remembers each message, so counting a growing conversation only tokenises new messages", () => {
    const estimator = createTokenEstimator();
    const first = userMessage("first message");
    const second = userMessage("second message");
    const conversation = [first, second];
    const total = estimator.countMessages(conversation);
    // A frozen message cannot be recounted differently; a mutable one proves the cache is used.
    const mutable = { role: "user", content: "short", tool_calls: [] } as {
      role: "user";
      content: string;
      tool_calls: [];
    };
    const before = estimator.countMessage(mutable);
    mutable.content = "a much longer content that would have more tokens than before";
    expect(estimator.countMessage(mutable)).toBe(before);
    expect(estimator.countMessages([...conversation, mutable])).toBe(total + before);
    expect(createTokenEstimator().countMessage(mutable)).toBeGreaterThan(before);
  });

  it("counts tool definitions once per tool list", () => {
    const estimator = createTokenEstimator();
    const tools = [
      {
        name: "read_file",
        description: "Reads a file",
        inputSchema: { type: "object", properties: { path: { type: "string" } } },
      },
    ];
    const expected =
      toolOverheadTokens +
      countTokens("read_file") +
      countTokens("Reads a file") +
      countTokens(JSON.stringify(tools[0]?.inputSchema));
    expect(estimator.countTools(tools)).toBe(expected);
    expect(estimator.countTools([])).toBe(0);
  });
});
