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

  it("remembers tool descriptions and schemas across estimators (a server's runs build a new list each)", () => {
    const counted: string[] = [];
    const countPiece = (piece: string) => {
      counted.push(piece);
      return countTokens(piece, { disallowedSpecial: new Set() });
    };
    const shared = new Map<string, number>();
    const description = "Reads one item of the catalogue by its key and answers its fields as JSON";
    const schema = { type: "object", properties: { key: { type: "string", description: "the item's key" } } };
    const toolList = () => [{ name: "rest__read", description, inputSchema: structuredClone(schema) }];
    const first = createTokenEstimator({ countPiece, toolTextCounts: shared }).countTools(toolList());
    expect(counted).toEqual(["rest__read", description, JSON.stringify(schema)]);
    counted.length = 0;
    const second = createTokenEstimator({ countPiece, toolTextCounts: shared }).countTools(toolList());
    expect(second).toBe(first);
    // The long texts are not tokenised again; the name is short (remembered per estimator only).
    expect(counted).toEqual(["rest__read"]);
    counted.length = 0;
    createTokenEstimator({ countPiece }).countTools(toolList());
    expect(counted).toEqual(["rest__read", description, JSON.stringify(schema)]);
  });
});

describe("createTokenEstimator on text without spaces (bounded work)", () => {
  /**
   * The work the tokenizer is given, as its cost grows: byte-pair merging is quadratic in the length of a
   * pre-token, and a run of one character class (letters, punctuation, whitespace) is one pre-token. The work of
   * a piece is the sum of the squares of its runs' lengths: a deterministic measure, not a timing.
   */
  function pieceWork(piece: string): number {
    let work = 0;
    for (const run of piece.match(/[\p{L}\p{M}]+|[^\s\p{L}\p{N}]+|\s+|\p{N}{1,3}/gu) ?? [])
      work += run.length ** 2;
    return work;
  }

  function measured(options: { boundLongRuns?: boolean } = {}) {
    let work = 0;
    let characters = 0;
    const estimator = createTokenEstimator({
      ...options,
      countPiece: (piece) => {
        work += pieceWork(piece);
        characters += piece.length;
        return countTokens(piece);
      },
    });
    return {
      estimator,
      read: () => ({ work, characters }),
    };
  }

  // Deterministic pseudo-random letters: no spaces, no repetition for the tokenizer's cache to exploit.
  function letters(length: number): string {
    let seed = 7;
    let text = "";
    for (let index = 0; index < length; index++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      text += String.fromCharCode(97 + (seed % 26));
    }
    return text;
  }
  const prose = (length: number) =>
    "The catalogue lists every keyboard in stock, with its price and the warehouse it ships from. "
      .repeat(Math.ceil(length / 94))
      .slice(0, length);

  it("costs at most 3x the work of prose of the same size, for 300 KB without spaces", () => {
    const noSpaces = measured();
    noSpaces.estimator.countText(letters(300_000));
    const withSpaces = measured();
    withSpaces.estimator.countText(prose(300_000));
    expect(noSpaces.read().work).toBeLessThanOrEqual(3 * withSpaces.read().work);
  });

  it("was superlinear before: the same text counted whole (a version-2 contract's rule) is given far more work", () => {
    // Only the work is measured here: tokenising 300 KB of letters whole takes minutes.
    let work = 0;
    const whole = createTokenEstimator({
      boundLongRuns: false,
      countPiece: (piece) => {
        work += pieceWork(piece);
        return 0;
      },
    });
    whole.countText(letters(300_000));
    const withSpaces = measured();
    withSpaces.estimator.countText(prose(300_000));
    expect(work).toBeGreaterThan(1000 * withSpaces.read().work);
  });

  it("estimates a long run close to its exact count, and counts text without long runs exactly as before", () => {
    const estimator = createTokenEstimator();
    for (const text of [letters(20_000), "=".repeat(5_000), `${"\n".repeat(3_000)}x`, letters(500)]) {
      const exact = countTokens(text);
      const estimate = estimator.countText(text);
      expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.25);
    }
    const ordinary = `${prose(10_000)} {"path":"/tmp/a","depth":2} 1234567890 ${"ab ".repeat(100)}`;
    expect(estimator.countText(ordinary)).toBe(countTokens(ordinary));
  });

  it("counts a huge run in bounded work, whatever its length", () => {
    const small = measured();
    small.estimator.countText("a".repeat(100_000));
    const large = measured();
    large.estimator.countText("a".repeat(5_000_000));
    // The same handful of sampled pieces for 100 KB as for 5 MB.
    expect(small.read().characters).toBeLessThanOrEqual(16 * 64);
    expect(large.read().characters).toBeLessThanOrEqual(16 * 64);
  });
});
