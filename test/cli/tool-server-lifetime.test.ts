import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { busyRunProject, mcpTestServerPath, providerConfig } from "./cli-harness.js";

const binary = resolve(import.meta.dirname, "../../dist/cli/main.js");
let server: ScriptedOpenAIServer | null = null;
const strays: number[] = [];

afterEach(async () => {
  await server?.close();
  server = null;
  // A failed assertion must not leave a server that only SIGKILL ends running on the machine.
  for (const pid of strays.splice(0)) if (isRunning(pid)) process.kill(pid, "SIGKILL");
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls an observable condition until it holds or the deadline passes; true when it held. */
async function eventually(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolvePoll) => setTimeout(resolvePoll, 50));
  }
  return true;
}

describe("tool servers never outlive Charter", () => {
  it.each([
    { how: "kill -9", kill: (pid: number) => process.kill(pid, "SIGKILL") },
    // What Ctrl-\\ in a terminal does: SIGQUIT to the whole foreground group, the watchdog included.
    { how: "SIGQUIT to its whole process group", kill: (pid: number) => process.kill(-pid, "SIGQUIT") },
  ])(
    "a stdio server that ignores SIGTERM and stdin closing is gone within seconds of `charter run` dying by $how",
    async ({ kill }) => {
      const busy = await busyRunProject("key-for-lifetime-test");
      server = busy.server;
      const { firstRequest, files } = busy;
      // The same project, its server made stubborn and asked to say who it is.
      const pidFile = join(files.directory, "server.pid");
      const config = providerConfig(server.baseUrl, {
        mcpServers: {
          test: {
            type: "stdio",
            command: process.execPath,
            args: [mcpTestServerPath],
            env: { CHARTER_TEST_MCP_STUBBORN: "1", CHARTER_TEST_MCP_PID_FILE: pidFile },
          },
        },
      });
      await writeFile(files.configPath, JSON.stringify(config));
      const child = spawn(
        process.execPath,
        [
          binary,
          "run",
          files.agentPath,
          "Wait.",
          "--config",
          files.configPath,
          "--runs-dir",
          files.runsDirectory,
        ],
        // Its own process group, as a job in a terminal has.
        { stdio: ["ignore", "ignore", "ignore"], detached: true },
      );
      const exited = new Promise<void>((resolveExit) => child.on("exit", () => resolveExit()));
      // The model is asked only once the server listed its tools, by which time it has written its pid.
      await firstRequest;
      expect(existsSync(pidFile)).toBe(true);
      const serverPid = Number(readFileSync(pidFile, "utf8"));
      strays.push(serverPid);
      expect(isRunning(serverPid)).toBe(true);

      kill(child.pid!);
      await exited;
      // Charter's watchdog gives the server 2 s, then SIGTERM, then SIGKILL one second later.
      expect(await eventually(() => !isRunning(serverPid), 15_000)).toBe(true);
    },
    60_000, // a charter start on a busy machine plus the bounded wait
  );
});
