import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z as zod3 } from "zod-v3";
import { CharterError } from "../../src/foundation/charter-error.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import { nodeProcess } from "../node-process.js";

const projectRoot = resolve(import.meta.dirname, "../..");
const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
  license: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  exports: Record<string, Record<string, string>>;
};

describe('require("charter")', () => {
  // Run from the project root, where the package resolves itself by name, in a CommonJS child process.
  it("fails with a typed CharterError saying how to load the ES module, not with Node's own error", async () => {
    const script = `
      try { require("charter"); console.log("loaded"); }
      catch (error) {
        console.log(JSON.stringify({
          name: error.name, code: error.code, message: error.message, details: error.details,
          branded: error[Symbol.for("charter.error")] === true,
        }));
      }`;
    const result = await nodeProcess(["--input-type=commonjs", "-e", script], { cwd: projectRoot });
    expect(result.exitCode).toBe(0);
    const error = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(error).toMatchObject({
      name: "CharterError",
      code: "REQUIRE_UNSUPPORTED",
      branded: true,
      details: { package: "charter" },
    });
    expect(error.message).toContain('await import("charter")');
  });

  it('import("charter") from CommonJS loads the library', async () => {
    const script = `import("charter").then((charter) => console.log(typeof charter.prepareAgent, typeof charter.defineFunctionTool));`;
    const result = await nodeProcess(["--input-type=commonjs", "-e", script], { cwd: projectRoot });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("function function");
  });
});

describe('import("charter/server")', () => {
  it("gives createServer, to serve the HTTP API from an application's own process", async () => {
    const probe = `import("charter/server").then((server) => console.log(typeof server.createServer, typeof server.createInProcessRunDispatcher, typeof server.createApiKey));`;
    const result = await nodeProcess(["--input-type=module", "-e", probe], { cwd: projectRoot });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("function function function");
  });
});

describe("zod", () => {
  it("is a peer dependency (one zod shared with the application), and the one Charter is developed against", () => {
    expect(manifest.dependencies.zod).toBeUndefined();
    expect(manifest.peerDependencies.zod).toMatch(/^\^4\./);
    expect(manifest.devDependencies.zod).toBe(manifest.peerDependencies.zod);
  });

  it("a zod 3 schema given to defineFunctionTool is refused with ZOD_VERSION_UNSUPPORTED naming the tool", () => {
    let caught: unknown;
    try {
      defineFunctionTool({
        name: "get_weather",
        description: "Weather of a city.",
        inputSchema: zod3.object({ city: zod3.string() }) as never,
        execute: async () => "sunny",
      });
    } catch (error) {
      caught = error;
    }
    expect(CharterError.isInstance(caught)).toBe(true);
    const error = caught as CharterError;
    expect(error.code).toBe("ZOD_VERSION_UNSUPPORTED");
    expect(error.details).toMatchObject({ tool: "get_weather", key: "inputSchema" });
    expect(error.message).toContain("zod 4");
  });
});

describe("package metadata", () => {
  it("ships a LICENSE whose license is the one package.json declares", () => {
    expect(manifest.license).toBe("MIT");
    expect(readFileSync(join(projectRoot, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
  });

  it("the committed lockfile records the dependencies package.json declares", () => {
    const lock = JSON.parse(readFileSync(join(projectRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, Record<string, unknown>>;
    };
    const root = lock.packages[""] ?? {};
    expect(root.dependencies).toEqual(manifest.dependencies);
    expect(root.devDependencies).toEqual(manifest.devDependencies);
    expect(root.peerDependencies).toEqual(manifest.peerDependencies);
  });
});
