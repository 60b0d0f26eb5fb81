import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentRegistry } from "../../src/agents/agent-registry.js";
import { loadAgentRegistry } from "../../src/agents/load-agent-registry.js";
import { resolveAgentReference } from "../../src/agents/resolve-agent-reference.js";
import { scanAgentRegistry } from "../../src/agents/scan-agent-registry.js";
import { standardAgentId } from "../../src/agents/standard-agent.js";
import { parseAgentFile } from "../../src/config/agent-file.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { agentText, projectWith } from "./agent-files.js";

async function refusal(promise: Promise<unknown>): Promise<CharterError> {
  try {
    await promise;
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a CharterError");
}

function thrown(action: () => unknown): CharterError {
  try {
    action();
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a CharterError");
}

describe("the agent registry", () => {
  it("reads every agent file of ./agents, with its profile keys, beside the built-in standard agent", async () => {
    const cwd = await projectWith({
      "agents/researcher.md": agentText(
        "description: Finds sources\nkeywords: [research, sources]\nexampleTasks: Find papers on X\nnotForTasks: [write code]\ndelegation: auto",
      ),
      "agents/Code Writer.md": agentText("id: coder\nenabled: false"),
      "agents/README.md": "This folder holds our agents.\n",
      "agents/notes.txt": "not an agent",
      "agents/nested/deep.md": agentText(""),
    });
    const registry = await loadAgentRegistry({ cwd, homeDirectory: cwd });
    expect(registry.list().map((agent) => agent.id)).toEqual(["coder", "researcher", "standard"]);
    expect(registry.get("researcher")?.profile).toEqual({
      enabled: true,
      keywords: ["research", "sources"],
      exampleTasks: ["Find papers on X"],
      notForTasks: ["write code"],
      delegation: "auto",
    });
    expect(registry.get("coder")?.path).toBe(join(cwd, "agents", "Code Writer.md"));
    expect(registry.enabled().map((agent) => agent.id)).toEqual(["researcher", "standard"]);
    expect(registry.get(standardAgentId)).toMatchObject({ builtIn: true, profile: { enabled: true } });
  });

  it("finds the folders of agentsDir relative to the configuration file that sets it", async () => {
    const cwd = await projectWith({
      "config/team.charter.json": JSON.stringify({ agentsDir: ["../team-agents", "more"] }),
      "team-agents/a.md": agentText(""),
      "config/more/b.md": agentText(""),
      "agents/ignored.md": agentText(""),
    });
    const registry = await loadAgentRegistry({
      cwd,
      configPath: "config/team.charter.json",
      homeDirectory: cwd,
    });
    expect(registry.list().map((agent) => agent.id)).toEqual(["a", "b", "standard"]);
  });

  it("refuses a configured agents folder that does not exist, naming it", async () => {
    const cwd = await projectWith({ ".charter.json": JSON.stringify({ agentsDir: "missing" }) });
    const error = await refusal(loadAgentRegistry({ cwd, homeDirectory: cwd }));
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toMatchObject({ file: join(cwd, "missing"), key: "agentsDir" });
  });

  describe("INV-AGT-001 invalid profiles rejected", () => {
    it("never registers a file that does not validate, and names the file, the key and the problem", async () => {
      const cwd = await projectWith({
        "agents/good.md": agentText("keywords: [ok]"),
        "agents/bad-key.md": agentText("maxTurn: 3"),
        "agents/bad-id.md": agentText("description: fine\nid: Not_An_Id"),
        "agents/bad-list.md": agentText("keywords: [ok, 7]\nenabled: maybe"),
        "agents/auto.md": agentText(""),
      });
      const scan = await scanAgentRegistry({ cwd, homeDirectory: cwd });
      // Only the valid file (and the built-in) is registered: no partial profile.
      expect(scan.registry.list().map((agent) => agent.id)).toEqual(["good", "standard"]);
      const problems = scan.problems.map(({ file, key, line, code }) => ({
        file: file.slice(cwd.length + 1),
        key,
        line,
        code,
      }));
      expect(problems).toEqual([
        { file: "agents/auto.md", key: "id", line: null, code: "AGENT_PROFILE_INVALID" },
        { file: "agents/bad-id.md", key: "id", line: 3, code: "AGENT_FILE_INVALID" },
        { file: "agents/bad-key.md", key: "maxTurn", line: 2, code: "AGENT_FILE_INVALID" },
        { file: "agents/bad-list.md", key: "enabled", line: 3, code: "AGENT_FILE_INVALID" },
        { file: "agents/bad-list.md", key: "keywords", line: 2, code: "AGENT_FILE_INVALID" },
      ]);
      expect(scan.problems[2]?.message).toContain("did you mean maxTurns?");
      // Loading refuses the whole registry with the first problem's typed error, counting the others.
      const error = await refusal(loadAgentRegistry({ cwd, homeDirectory: cwd }));
      expect(error.code).toBe("AGENT_PROFILE_INVALID");
      expect(error.message).toContain("auto.md");
      expect(error.message).toContain("and 4 more problems");
      expect(error.details.problems).toHaveLength(5);
    });

    it("validates a definition built in code before registering it, and leaves the registry as it was", () => {
      const registry = new AgentRegistry("/work");
      const valid = parseAgentFile(agentText("keywords: [x]"), "/work/agents/helper.md");
      const invalid = [
        { ...valid, id: "Helper" },
        { ...valid, settings: { ...valid.settings, maxTurns: -1 } },
        { ...valid, profile: { ...valid.profile, keywords: [""] } },
        { ...valid, profile: { ...valid.profile, delegation: "sometimes" } },
        { ...valid, unexpected: true },
      ];
      for (const definition of invalid) {
        const error = thrown(() => registry.register(definition as never));
        expect(error.code).toBe("AGENT_PROFILE_INVALID");
        expect(error.details.file).toBe("/work/agents/helper.md");
        expect(typeof error.details.key).toBe("string");
      }
      expect(registry.list().map((agent) => agent.id)).toEqual(["standard"]);
      registry.register(valid);
      expect(registry.get("helper")).toBe(valid);
    });

    it("freezes a definition built in code, so that what was validated stays registered", () => {
      const registry = new AgentRegistry("/work");
      const definition = structuredClone(parseAgentFile(agentText("keywords: [x]"), "/work/helper.md"));
      registry.register(definition);
      const registered = registry.get("helper")!;
      expect(Object.isFrozen(registered.profile.keywords)).toBe(true);
      (definition as { profile: unknown }).profile = { ...definition.profile, keywords: [""] };
      expect(registry.get("helper")?.profile.keywords).toEqual(["x"]);
    });

    it("lets a file with id standard replace the built-in one, and refuses a disabled standard", async () => {
      const replaced = await loadAgentRegistry({
        cwd: await projectWith({
          "agents/generalist.md": agentText("id: standard\nkeywords: [anything]", "Ours."),
        }),
        directories: ["agents"],
      });
      expect(replaced.get("standard")).toMatchObject({ builtIn: false, systemPrompt: "Ours." });

      const cwd = await projectWith({ "agents/standard.md": agentText("enabled: false") });
      const error = await refusal(loadAgentRegistry({ cwd, homeDirectory: cwd }));
      expect(error.code).toBe("AGENT_PROFILE_INVALID");
      expect(error.details).toMatchObject({ key: "enabled", file: join(cwd, "agents", "standard.md") });
      const registry = new AgentRegistry("/work");
      const standard = registry.get("standard")!;
      expect(
        thrown(() => registry.update({ ...standard, profile: { ...standard.profile, enabled: false } })).code,
      ).toBe("AGENT_PROFILE_INVALID");
      expect(registry.get("standard")?.profile.enabled).toBe(true);
    });
  });

  describe("INV-AGT-002 duplicate ID registration fails", () => {
    it("refuses two files with one id, naming both files", async () => {
      const cwd = await projectWith({
        "agents/researcher.md": agentText("description: one"),
        "agents/other.md": agentText("id: researcher\ndescription: two"),
      });
      const error = await refusal(loadAgentRegistry({ cwd, homeDirectory: cwd }));
      expect(error.code).toBe("AGENT_ID_DUPLICATE");
      expect(error.details).toMatchObject({ key: "id" });
      expect(error.message).toContain(join(cwd, "agents", "other.md"));
      expect(error.message).toContain(join(cwd, "agents", "researcher.md"));
    });

    it("register fails when the id exists; update fails when it does not, and replaces when it does", () => {
      const registry = new AgentRegistry("/work");
      const first = parseAgentFile(agentText("description: first"), "/work/a/writer.md");
      const second = parseAgentFile(agentText("description: second"), "/work/b/writer.md");
      expect(thrown(() => registry.update(first)).code).toBe("AGENT_NOT_FOUND");
      registry.register(first);
      const duplicate = thrown(() => registry.register(second));
      expect(duplicate.code).toBe("AGENT_ID_DUPLICATE");
      expect(duplicate.details.files).toEqual(["/work/a/writer.md", "/work/b/writer.md"]);
      expect(registry.get("writer")?.settings.description).toBe("first");
      registry.update(second);
      expect(registry.get("writer")?.settings.description).toBe("second");
    });
  });

  it("resolves a reference: an id through the registry, anything else as a file from the given folder", async () => {
    const cwd = await projectWith({
      "agents/reviewer.md": agentText("description: reviews"),
      "agents/off.md": agentText("enabled: false"),
      "flows/local.md": agentText("description: local"),
    });
    const registry = await loadAgentRegistry({ cwd, homeDirectory: cwd });
    expect(await resolveAgentReference(registry, "reviewer", join(cwd, "flows"))).toMatchObject({
      agentPath: join(cwd, "agents", "reviewer.md"),
      agent: { id: "reviewer" },
    });
    expect(await resolveAgentReference(registry, "standard", cwd)).toMatchObject({
      agentPath: "standard",
      agent: { builtIn: true },
    });
    expect(await resolveAgentReference(registry, "./local.md", join(cwd, "flows"))).toMatchObject({
      agentPath: join(cwd, "flows", "local.md"),
    });
    const unknown = await refusal(resolveAgentReference(registry, "reviewr", cwd));
    expect(unknown.code).toBe("AGENT_NOT_FOUND");
    expect(unknown.details.suggestion).toBe("reviewer");
    expect((await refusal(resolveAgentReference(registry, "off", cwd))).code).toBe("AGENT_DISABLED");
    expect((await refusal(resolveAgentReference(registry, "missing.md", cwd))).code).toBe(
      "AGENT_FILE_INVALID",
    );
  });
});
