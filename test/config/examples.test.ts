import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgentFile } from "../../src/config/agent-file.js";
import { loadConfiguration } from "../../src/config/load-configuration.js";
import { resolveModelTargets, selectModelReferences } from "../../src/config/resolve-model-targets.js";

const examplesDirectory = resolve(import.meta.dirname, "../../examples");
// Every folder of examples/ is one set-up: a .charter.json and the agent files beside it.
const setUps = readdirSync(examplesDirectory).filter((name) =>
  statSync(join(examplesDirectory, name)).isDirectory(),
);
// Placeholders the examples use, given stand-in values as a user's .charter.env or environment would.
const environment = { OPENAI_API_KEY: "sk-example-test-key" };

describe("examples/", () => {
  it("has the common set-ups", () => {
    expect(setUps).toEqual(
      expect.arrayContaining(["filesystem", "local-openai-compatible", "rest-tool", "sub-agents"]),
    );
  });

  it.each(setUps)(
    "%s: the configuration loads and every agent's models, tools and sub-agents resolve in it",
    async (name) => {
      const directory = join(examplesDirectory, name);
      const empty = await mkdtemp(join(tmpdir(), "charter-example-"));
      // Only the example's own file: no other configuration layer of this machine may fill a gap.
      const { configuration } = await loadConfiguration({
        configPath: join(directory, ".charter.json"),
        cwd: empty,
        homeDirectory: empty,
        etcDirectory: empty,
        processEnvironment: environment,
      });
      const agentFiles = readdirSync(directory).filter(
        (file) => file.endsWith(".md") && file !== "README.md",
      );
      expect(agentFiles.length).toBeGreaterThan(0);
      for (const file of agentFiles) {
        const agent = await loadAgentFile(join(directory, file));
        const references = selectModelReferences({}, agent.settings, configuration.defaults);
        expect(resolveModelTargets(references, configuration).length).toBe(references.length);
        for (const tool of agent.settings.tools ?? []) {
          const restTool = tool.startsWith("rest__") ? tool.slice("rest__".length) : null;
          const known =
            Object.hasOwn(configuration.mcpServers, tool) ||
            (restTool !== null && Object.hasOwn(configuration.restTools, restTool));
          expect(known, `${name}/${file}: tools entry '${tool}'`).toBe(true);
        }
        for (const child of [agent.settings.agents ?? []].flat()) {
          const childPath = resolve(directory, child);
          expect(existsSync(childPath), `${name}/${file}: sub-agent ${child}`).toBe(true);
          await loadAgentFile(childPath);
        }
      }
      // A stdio server started from the example's folder finds what its arguments name there.
      for (const server of Object.values(configuration.mcpServers)) {
        if (server.type !== "stdio") continue;
        const cwd = resolve(directory, server.cwd ?? ".");
        for (const argument of server.args ?? []) {
          if (argument.startsWith("-") || argument.startsWith("@")) continue;
          expect(existsSync(resolve(cwd, argument)), `${name}: ${server.command} ${argument}`).toBe(true);
        }
      }
    },
  );

  it("the README lists every set-up", async () => {
    const { readFile } = await import("node:fs/promises");
    const readme = await readFile(join(examplesDirectory, "README.md"), "utf8");
    for (const name of setUps) expect(readme).toContain(`(${basename(name)}/`);
  });
});
