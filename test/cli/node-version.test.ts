import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { charterBinary } from "./cli-harness.js";

const projectRoot = resolve(import.meta.dirname, "../..");

/** A Node older than Charter's minimum on this machine (the distribution's default Node 20 here and in CI), if any. */
function findOldNode(): { path: string; version: string } | undefined {
  const candidates = [process.env.CHARTER_TEST_OLD_NODE, "/usr/bin/node", "/usr/local/bin/node"];
  for (const path of candidates) {
    if (path === undefined || path === "" || !existsSync(path)) continue;
    const probe = spawnSync(path, ["--version"], { encoding: "utf8" });
    const version = probe.stdout.trim().replace(/^v/, "");
    const [major = 0, minor = 0] = version.split(".").map(Number);
    if (probe.status === 0 && (major < 22 || (major === 22 && minor < 12))) return { path, version };
  }
  return undefined;
}

function run(
  command: string,
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(command, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolveExit, rejectExit) => {
    child.on("error", rejectExit);
    child.on("close", (exitCode, signal) => resolveExit({ exitCode, signal, stdout, stderr }));
  });
}

const oldNode = findOldNode();
const noOldNode =
  "skipped: no Node older than 22.12 on this machine (looked at CHARTER_TEST_OLD_NODE, /usr/bin/node, /usr/local/bin/node)";

describe("charter on a Node older than 22.12", () => {
  it.skipIf(oldNode !== undefined)(noOldNode, () => {});

  it.runIf(oldNode !== undefined)(
    "exits 4 with the Node it needs and the one it found, before loading a native module (no crash)",
    async () => {
      const node = oldNode as { path: string; version: string };
      // `demo` opens the SQLite run store: without the check, better-sqlite3 ends Node 20 with a segmentation fault.
      for (const argv of [["demo"], ["--version"]]) {
        const result = await run(node.path, [charterBinary, ...argv]);
        expect(result.signal).toBeNull();
        expect(result.exitCode).toBe(4);
        expect(result.stdout).toBe("");
        expect(result.stderr).toContain(`charter needs Node >= 22.12 (this is Node ${node.version})`);
        expect(result.stderr).toContain("Install Node 24");
        expect(result.stderr).toContain("npm run charter --");
      }
    },
    60_000,
  );

  it.runIf(oldNode !== undefined && existsSync(join(dirname(oldNode?.path ?? "/"), "npm")))(
    "runs through `npm run` on the project's own Node 24 even when the Node first on PATH is the old one",
    async () => {
      const node = oldNode as { path: string; version: string };
      const path = [dirname(node.path), "/usr/bin", "/bin"].join(":");
      const result = await run(
        join(dirname(node.path), "npm"),
        ["run", "--silent", "charter", "--", "--version"],
        {
          cwd: projectRoot,
          env: { ...process.env, PATH: path },
        },
      );
      expect(result.stderr).not.toContain("charter needs Node");
      expect(result.exitCode).toBe(0);
      expect(result.stdout.trim()).toMatch(/^charter \d+\.\d+\.\d+/);
    },
    // npm itself starts slowly on a loaded machine.
    120_000,
  );

  it("names the minimum package.json's engines field declares", () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    expect(manifest.engines.node).toBe(">=22.12");
    expect(readFileSync(charterBinary, "utf8")).toMatch(/minimumMajor = 22;\s*const minimumMinor = 12;/);
  });
});
