import { describe, expect, it } from "vitest";
import { canonicalJson, maxJsonDepth } from "../../src/foundation/canonical-json.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { maxArgumentDepth } from "../../src/model/protocol-adapter.js";
import { call, runScripted } from "./session-harness.js";

const nested = (depth: number) => `{"key":"k","extra":${"[".repeat(depth)}1${"]".repeat(depth)}}`;

function deepValue(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = { inner: value };
  return value;
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return null;
}

describe("tool arguments nested 5,000 levels deep", () => {
  it("are refused as invalid input (TOOL_ARGUMENTS_TOO_DEEP), the model is told, and no entry is lost", async () => {
    const run = await runScripted({
      script: [
        { kind: "tool_calls", calls: [call("lookup", nested(5_000))] },
        { kind: "tool_calls", calls: [call("lookup", { key: "flat" })] },
        { kind: "text", text: "done" },
      ],
    });
    expect(run.result.error).toBeNull();
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.executions).toEqual(["lookup:flat"]);
    const firstInfer = run.writer.entries.find((entry) => entry.state === "INFER")!;
    expect(firstInfer.result).toMatchObject({
      status: "rejected",
      failure_code: "TOOL_ARGUMENTS_TOO_DEEP",
      rejected_calls: [{ failure_code: "TOOL_ARGUMENTS_TOO_DEEP" }],
    });
    expect(run.requests[1]!.lastMessage).toContain(`more than ${maxArgumentDepth} levels deep`);
    // Every state of every turn is in the chain, and it verifies.
    expect(run.writer.entries.map((entry) => entry.state)).toContain("TERMINATE");
    expect(run.writer.entries.filter((entry) => entry.state === "INFER")).toHaveLength(3);
    expect(run.verification.ok).toBe(true);
  });

  it("accepts arguments nested up to the limit", async () => {
    const run = await runScripted({
      script: [
        // write_file's schema allows extra members: the nested one reaches the tool.
        {
          kind: "tool_calls",
          calls: [call("write_file", nested(maxArgumentDepth - 1).replace('"key"', '"path"'))],
        },
        { kind: "text", text: "done" },
      ],
    });
    expect(run.executions).toEqual(["write_file:k"]);
    expect(run.verification.ok).toBe(true);
  });
});

describe("canonical JSON and redaction bound their depth", () => {
  it("refuse a value nested past maxJsonDepth with VALUE_TOO_DEEP, not a stack overflow", () => {
    const deep = deepValue(5_000);
    const redactor = new SecretRedactor();
    redactor.addSecret("s3cret-value", "TEST_SECRET");
    for (const action of [
      () => canonicalJson(deep),
      () => canonicalJson({ z: deep, a: 1 }),
      () => redactor.redactValue(deep),
      () => redactor.containsSecret(deep),
    ]) {
      const error = thrown(action);
      expect(CharterError.isInstance(error) && error.code).toBe("VALUE_TOO_DEEP");
    }
  });

  it("serialise values up to the limit as before", () => {
    const deep = deepValue(maxJsonDepth - 1);
    expect(canonicalJson(deep)).toBe(JSON.stringify(deep));
    expect(new SecretRedactor().redactValue(deep)).toBe(deep);
  });
});
