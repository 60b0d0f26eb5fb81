import fc from "fast-check";
import { jsonrepair } from "jsonrepair";
import { describe, expect, it } from "vitest";
import { locateJsonSyntaxError } from "../../src/model/locate-json-syntax-error.js";
import type { ModelResponse, RawToolCall } from "../../src/model/model-client.js";
import {
  ADAPTER_VERSION,
  adaptProtocol,
  type ProtocolAdapterOptions,
} from "../../src/model/protocol-adapter.js";

function response(overrides: Partial<ModelResponse>): ModelResponse {
  return {
    text: "",
    reasoning: "",
    toolCalls: [],
    usage: null,
    finishReason: "stop",
    responseId: "r1",
    rawRequest: null,
    rawResponse: null,
    ...overrides,
  };
}

const strict: ProtocolAdapterOptions = {
  strict: true,
  sourceModel: "local/test-model",
  adapterVersion: ADAPTER_VERSION,
  rawHash: "a".repeat(64),
};
const lenient: ProtocolAdapterOptions = { ...strict, strict: false };

function call(id: string, name: string, argumentsText: string): RawToolCall {
  return { id, name, argumentsText };
}

describe("adaptProtocol", () => {
  it("accepts well-formed calls natively with source model and raw payload", () => {
    const result = adaptProtocol(
      response({
        text: "Looking.",
        reasoning: "plan",
        toolCalls: [call("c1", "search", '{"query":"cats","limit":3}')],
      }),
      strict,
    );
    expect(result.status).toBe("native");
    expect(result.failure_code).toBeNull();
    expect(result.raw_hash).toBe("a".repeat(64));
    expect(result.adapter_version).toBe(ADAPTER_VERSION);
    expect(result.rejected_calls).toEqual([]);
    expect(result.recovered_call_ids).toEqual([]);
    expect(result.canonical_message).toEqual({
      role: "assistant",
      content: "Looking.",
      reasoning: "plan",
      tool_calls: [
        {
          id: "c1",
          name: "search",
          arguments: { query: "cats", limit: 3 },
          source_model: "local/test-model",
          raw_payload: { arguments_text: '{"query":"cats","limit":3}' },
        },
      ],
    });
  });

  it("accepts plain text without calls", () => {
    const result = adaptProtocol(response({ text: "The answer is 4." }), strict);
    expect(result.status).toBe("native");
    expect(result.canonical_message).toEqual({
      role: "assistant",
      content: "The answer is 4.",
      tool_calls: [],
    });
  });

  it('treats "" arguments as the empty object, in both modes', () => {
    for (const options of [strict, lenient]) {
      const result = adaptProtocol(response({ toolCalls: [call("c1", "list_files", "")] }), options);
      expect(result.status).toBe("native");
      expect(result.canonical_message?.tool_calls[0]?.arguments).toEqual({});
      expect(result.canonical_message?.tool_calls[0]?.raw_payload).toEqual({ arguments_text: "" });
    }
  });

  it("strict mode rejects malformed arguments with a detail naming call, tool and position", () => {
    const text = '{"path": "/tmp/x", "content": "hi" ';
    const result = adaptProtocol(response({ toolCalls: [call("call_7", "write_file", text)] }), strict);
    expect(result.status).toBe("rejected");
    expect(result.failure_code).toBe("MALFORMED_TOOL_ARGUMENTS");
    expect(result.canonical_message).toBeNull();
    expect(result.rejected_calls).toHaveLength(1);
    const rejection = result.rejected_calls[0]!;
    expect(rejection).toMatchObject({
      id: "call_7",
      name: "write_file",
      raw_arguments: text,
      failure_code: "MALFORMED_TOOL_ARGUMENTS",
    });
    expect(rejection.detail).toContain("call_7");
    expect(rejection.detail).toContain("write_file");
    expect(rejection.detail).toContain(`position ${locateJsonSyntaxError(text).position}`);
  });

  it("strict mode never coerces malformed arguments to {} or prose, even when repair would succeed", () => {
    const result = adaptProtocol(response({ toolCalls: [call("c1", "search", "{query: 'cats'}")] }), strict);
    expect(result.status).toBe("rejected");
    expect(result.recovered_call_ids).toEqual([]);
  });

  it("non-strict mode repairs with jsonrepair and reports the call as recovered", () => {
    const result = adaptProtocol(
      response({ toolCalls: [call("c1", "search", "{query: 'cats', limit: 3,}")] }),
      lenient,
    );
    expect(result.status).toBe("recovered");
    expect(result.recovered_call_ids).toEqual(["c1"]);
    expect(result.canonical_message?.tool_calls[0]?.arguments).toEqual({ query: "cats", limit: 3 });
    expect(result.canonical_message?.tool_calls[0]?.raw_payload).toEqual({
      arguments_text: "{query: 'cats', limit: 3,}",
    });
  });

  it("non-strict mode rejects what repair cannot turn into an object", () => {
    const result = adaptProtocol(response({ toolCalls: [call("c1", "search", "[1, 2")] }), lenient);
    expect(result.status).toBe("rejected");
    expect(result.rejected_calls[0]?.failure_code).toBe("MALFORMED_TOOL_ARGUMENTS");
  });

  it("keeps valid sibling calls and lists the dropped ones", () => {
    const result = adaptProtocol(
      response({
        toolCalls: [
          call("c1", "read_file", '{"path":"/a"}'),
          call("c2", "write_file", '{"path": '),
          call("c3", "read_file", '{"path":"/b"}'),
        ],
      }),
      strict,
    );
    expect(result.status).toBe("native");
    expect(result.failure_code).toBeNull();
    expect(result.canonical_message?.tool_calls.map((invocation) => invocation.id)).toEqual(["c1", "c3"]);
    expect(result.rejected_calls.map((rejection) => rejection.id)).toEqual(["c2"]);
  });

  it("is recovered when one sibling is repaired and another is native", () => {
    const result = adaptProtocol(
      response({ toolCalls: [call("c1", "a", '{"x":1}'), call("c2", "b", "{x: 2")] }),
      lenient,
    );
    expect(result.status).toBe("recovered");
    expect(result.recovered_call_ids).toEqual(["c2"]);
    expect(result.canonical_message?.tool_calls.map((invocation) => invocation.arguments)).toEqual([
      { x: 1 },
      { x: 2 },
    ]);
  });

  it("keeps the text when every call is rejected but text was sent", () => {
    const result = adaptProtocol(
      response({ text: "Here is my answer.", toolCalls: [call("c1", "a", "{oops")] }),
      strict,
    );
    expect(result.status).toBe("native");
    expect(result.canonical_message).toMatchObject({ content: "Here is my answer.", tool_calls: [] });
    expect(result.rejected_calls.map((rejection) => rejection.id)).toEqual(["c1"]);
  });

  it("rejects an empty response", () => {
    for (const text of ["", "  \n\t"]) {
      const result = adaptProtocol(response({ text }), lenient);
      expect(result.status).toBe("rejected");
      expect(result.failure_code).toBe("EMPTY_RESPONSE");
      expect(result.canonical_message).toBeNull();
    }
  });

  it("rejects a reasoning-only response", () => {
    const result = adaptProtocol(response({ reasoning: "I should call a tool" }), lenient);
    expect(result.status).toBe("rejected");
    expect(result.failure_code).toBe("REASONING_ONLY");
  });

  it.each([["[1,2]"], ["42"], ["null"], ['"a string"'], ["true"]])(
    "rejects %s as TOOL_ARGUMENTS_NOT_OBJECT in both modes",
    (text) => {
      for (const options of [strict, lenient]) {
        const result = adaptProtocol(response({ toolCalls: [call("c1", "a", text)] }), options);
        expect(result.status).toBe("rejected");
        expect(result.failure_code).toBe("TOOL_ARGUMENTS_NOT_OBJECT");
        expect(result.rejected_calls[0]?.failure_code).toBe("TOOL_ARGUMENTS_NOT_OBJECT");
      }
    },
  );

  it("rejects a call without a tool name", () => {
    const result = adaptProtocol(
      response({ toolCalls: [call("c1", " ", "{}"), call("c2", "ok", "{}")] }),
      strict,
    );
    expect(result.status).toBe("native");
    expect(result.rejected_calls).toMatchObject([{ id: "c1", failure_code: "MISSING_TOOL_NAME" }]);
  });

  it("gives empty and repeated call ids distinct positional ids", () => {
    const result = adaptProtocol(
      response({ toolCalls: [call("", "a", "{}"), call("dup", "b", "{}"), call("dup", "c", "{}")] }),
      strict,
    );
    expect(result.canonical_message?.tool_calls.map((invocation) => invocation.id)).toEqual([
      "call_0",
      "dup",
      "dup_2",
    ]);
  });

  it("freezes what it returns", () => {
    const result = adaptProtocol(response({ toolCalls: [call("c1", "a", '{"x":1}')] }), strict);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.canonical_message)).toBe(true);
    expect(Object.isFrozen(result.canonical_message?.tool_calls[0])).toBe(true);
    expect(Object.isFrozen(result.canonical_message?.tool_calls[0]?.arguments)).toBe(true);
  });
});

const argumentsTextArbitrary = fc.oneof(
  fc.constant(""),
  fc.json(),
  fc.dictionary(fc.string(), fc.jsonValue()).map((value) => JSON.stringify(value)),
  fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }).chain((value) => {
    const text = JSON.stringify(value);
    return fc.nat({ max: text.length - 1 }).map((cut) => text.slice(0, cut));
  }),
  fc.string(),
  fc.constantFrom("{a: 1}", "{'a': 'b',}", '{"a": [1, 2,]}', "{", "}", "nul", '{"a":1}}'),
);

const responseArbitrary = fc.record({
  text: fc.oneof(fc.constant(""), fc.constant("  "), fc.string()),
  reasoning: fc.oneof(fc.constant(""), fc.string()),
  toolCalls: fc.array(
    fc.record({
      id: fc.oneof(fc.constant(""), fc.constantFrom("c1", "c2"), fc.string()),
      name: fc.oneof(fc.constant(""), fc.constantFrom("read_file", "search"), fc.string()),
      argumentsText: argumentsTextArbitrary,
    }),
    { maxLength: 4 },
  ),
});

function expectedArguments(text: string, strictMode: boolean): unknown {
  if (text === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    if (strictMode) throw new Error("strict mode accepted text that does not parse");
    return JSON.parse(jsonrepair(text));
  }
}

describe("adaptProtocol properties", () => {
  it("never throws, and every canonical call's arguments come from parsing (or repairing) its own text", () => {
    fc.assert(
      fc.property(responseArbitrary, fc.boolean(), (fields, strictMode) => {
        const options = strictMode ? strict : lenient;
        const input = response(fields);
        const result = adaptProtocol(input, options);

        const accepted = result.canonical_message?.tool_calls ?? [];
        expect(accepted.length + result.rejected_calls.length).toBe(
          result.status === "rejected" && result.rejected_calls.length === 0 ? 0 : fields.toolCalls.length,
        );
        let acceptedIndex = 0;
        let rejectedIndex = 0;
        for (const raw of fields.toolCalls) {
          const invocation = accepted[acceptedIndex];
          if (
            invocation !== undefined &&
            invocation.name === raw.name &&
            invocation.raw_payload?.arguments_text === raw.argumentsText
          ) {
            acceptedIndex++;
            const value = invocation.arguments;
            expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
            expect(value).toEqual(expectedArguments(raw.argumentsText, strictMode));
            if (result.recovered_call_ids.includes(invocation.id)) expect(strictMode).toBe(false);
          } else {
            expect(result.rejected_calls[rejectedIndex]?.raw_arguments).toBe(raw.argumentsText);
            rejectedIndex++;
          }
        }
        if (strictMode) expect(result.status).not.toBe("recovered");
        if (result.status === "rejected") expect(result.canonical_message).toBeNull();
        else expect(result.canonical_message?.content).toBe(fields.text);
        expect(adaptProtocol(input, options)).toEqual(result);
      }),
      { numRuns: 2000, seed: 20260101 },
    );
  });
});
