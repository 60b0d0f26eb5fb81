import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { anyObject, functionTool, ok } from "./tool-call-fixture.js";

function mcpTool(server: string, tool: string): RegisteredTool {
  return {
    manifest: {
      name: `${server}__${tool}`,
      description: `${tool} from ${server}`,
      input_schema: anyObject,
      source: { kind: "mcp", server, tool },
      annotations: null,
    },
    execute: async () => ok(tool),
  };
}

describe("ToolRegistry", () => {
  it("lists the manifest and model specs sorted by name, whatever the registration order", () => {
    const forward = new ToolRegistry([
      mcpTool("fs", "write"),
      mcpTool("fs", "read"),
      functionTool("alpha", anyObject, async () => ok("a")),
    ]);
    const backward = new ToolRegistry([
      functionTool("alpha", anyObject, async () => ok("a")),
      mcpTool("fs", "read"),
      mcpTool("fs", "write"),
    ]);
    expect(forward.names()).toEqual(["alpha", "fs__read", "fs__write"]);
    expect(forward.manifest()).toEqual(backward.manifest());
    expect(forward.modelToolSpecs()).toEqual([
      { name: "alpha", description: "test tool alpha", inputSchema: anyObject },
      { name: "fs__read", description: "read from fs", inputSchema: anyObject },
      { name: "fs__write", description: "write from fs", inputSchema: anyObject },
    ]);
    expect(Object.isFrozen(forward.manifest())).toBe(true);
  });

  it("restricts model specs to the given names", () => {
    const registry = new ToolRegistry([mcpTool("fs", "write"), mcpTool("fs", "read"), mcpTool("fs", "list")]);
    expect(registry.modelToolSpecs(["fs__write", "fs__list", "missing"]).map((spec) => spec.name)).toEqual([
      "fs__list",
      "fs__write",
    ]);
  });

  it("refuses a duplicate name with CONFIGURATION_INVALID naming both sources", () => {
    const registry = new ToolRegistry([mcpTool("a", "x__y")]);
    let error: unknown = null;
    try {
      registry.register(mcpTool("a__x", "y"));
    } catch (thrown) {
      error = thrown;
    }
    expect(CharterError.isInstance(error)).toBe(true);
    const charterError = error as CharterError;
    expect(charterError.code).toBe("CONFIGURATION_INVALID");
    expect(charterError.details).toEqual({
      tool: "a__x__y",
      sources: ["mcp server 'a' (tool 'x__y')", "mcp server 'a__x' (tool 'y')"],
    });
    expect(registry.size).toBe(1);
  });

  it("sees tools registered after a listing was taken", () => {
    const registry = new ToolRegistry([mcpTool("fs", "read")]);
    expect(registry.names()).toEqual(["fs__read"]);
    registry.registerAll([mcpTool("fs", "append")]);
    expect(registry.names()).toEqual(["fs__append", "fs__read"]);
    expect(registry.manifest().map((entry) => entry.name)).toEqual(["fs__append", "fs__read"]);
    expect(registry.has("fs__append")).toBe(true);
  });
});
