import { describe, expect, it } from "vitest";
import { nearestName } from "../../src/foundation/nearest-name.js";

describe("nearestName", () => {
  const keys = ["maxTurns", "maxToolCalls", "models", "tools", "toolsDenied", "temperature"];

  it("finds the known name a typo was meant to be", () => {
    expect(nearestName("maxTurn", keys)).toBe("maxTurns");
    expect(nearestName("maxturns", keys)).toBe("maxTurns");
    expect(nearestName("max_turns", keys)).toBe("maxTurns");
    expect(nearestName("modles", keys)).toBe("models");
    expect(nearestName("temprature", keys)).toBe("temperature");
    expect(nearestName("stor", ["store", "config", "json"])).toBe("store");
  });

  it("prefers the closest of several candidates", () => {
    expect(nearestName("tool", keys)).toBe("tools");
    expect(nearestName("toolsDenyed", keys)).toBe("toolsDenied");
  });

  it("suggests nothing for an unrelated name", () => {
    expect(nearestName("deploy", ["run", "resume", "runs", "verify", "replay", "demo"])).toBeUndefined();
    expect(nearestName("x", ["json", "store"])).toBeUndefined();
    expect(nearestName("budget", keys)).toBeUndefined();
  });
});
