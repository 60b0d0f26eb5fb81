import { describe, expect, it } from "vitest";
import { parseSetOverrides } from "../../src/config/parse-set-overrides.js";
import { CharterError } from "../../src/foundation/charter-error.js";

function failure(assignments: string[]): CharterError {
  try {
    parseSetOverrides(assignments);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected parseSetOverrides to throw");
}

describe("parseSetOverrides", () => {
  it("reads JSON literals when they parse and strings otherwise", () => {
    expect(parseSetOverrides(["maxTurns=5", "temperature=null", "toolPolicy=required"])).toEqual({
      maxTurns: 5,
      temperature: null,
      toolPolicy: "required",
    });
  });

  it("parses durations, lists, objects and booleans to their typed values", () => {
    expect(
      parseSetOverrides([
        "toolTimeout=5s",
        "stepTimeout=1500",
        "totalTimeout=null",
        'stopSequences=["END","STOP"]',
        "models=openai/gpt-4o",
        'models=["local/a","openai/b"]',
        "strict=true",
        'output={"format":"json","schema":{"type":"object"}}',
        'cycleForbid=[["a","b"]]',
        "topP=0.5",
      ]),
    ).toEqual({
      toolTimeout: 5000,
      stepTimeout: 1500,
      totalTimeout: null,
      stopSequences: ["END", "STOP"],
      models: ["local/a", "openai/b"],
      strict: true,
      output: { format: "json", schema: { type: "object" } },
      cycleForbid: [["a", "b"]],
      topP: 0.5,
    });
  });

  it("keeps the text as a string when the JSON reading does not fit the key", () => {
    expect(parseSetOverrides(["description=42", "modelProfile=true", "stopSequences=END"])).toEqual({
      description: "42",
      modelProfile: "true",
      stopSequences: ["END"],
    });
  });

  it("splits at the first equals sign only", () => {
    expect(parseSetOverrides(["description=a=b"])).toEqual({ description: "a=b" });
  });

  it("refuses an unknown key, naming it", () => {
    const error = failure(["maxTurns=3", "maxTurn=4"]);
    expect(error.code).toBe("ARGUMENT_INVALID");
    expect(error.details).toEqual({ argument: "maxTurn=4", key: "maxTurn", suggestion: "maxTurns" });
    expect(error.message).toContain("did you mean maxTurns?");
    // Inherited object properties are not keys either.
    expect(failure(["toString=1"]).details).toMatchObject({ key: "toString" });
  });

  it("refuses an assignment without a key or an equals sign", () => {
    expect(failure(["maxTurns"]).details).toEqual({ argument: "maxTurns" });
    expect(failure(["=5"]).details).toEqual({ argument: "=5" });
  });

  it("refuses a bad value, naming the key and the problem", () => {
    for (const assignment of [
      "maxTurns=0",
      "maxTurns=many",
      "toolPolicy=sometimes",
      "toolTimeout=soon",
      "topP=2",
    ]) {
      const error = failure([assignment]);
      expect(error.code).toBe("ARGUMENT_INVALID");
      expect(error.details).toMatchObject({ argument: assignment, key: assignment.split("=")[0] });
      expect((error.details.issues as unknown[]).length).toBeGreaterThan(0);
    }
  });
});
