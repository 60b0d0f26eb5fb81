import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands.js";
import { agentFile, charterProcess, project } from "./cli-harness.js";

const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;

describe("charter help and discovery (real processes)", () => {
  it("charter --help lists every command with its summary", async () => {
    const { exitCode, stdout } = await charterProcess(["--help"]);
    expect(exitCode).toBe(0);
    for (const command of commands) expect(stdout).toContain(`  ${command.name}`);
    for (const command of commands) expect(stdout).toContain(command.summary);
  });

  it("charter with no command prints the overview on stderr and exits 4", async () => {
    const { exitCode, stdout, stderr } = await charterProcess([]);
    expect(exitCode).toBe(4);
    expect(stdout).toBe("");
    expect(stderr).toContain("charter help <command>");
  });

  it.each(commands.map((command) => command.name))(
    "charter %s --help and charter help <command> print every flag with its default, and an example",
    async (name) => {
      const command = commands.find((candidate) => candidate.name === name)!;
      const viaFlag = await charterProcess([name, "--help"]);
      const viaHelp = await charterProcess(["help", name]);
      expect(viaFlag.exitCode).toBe(0);
      expect(viaHelp.exitCode).toBe(0);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      const help = viaFlag.stdout;
      expect(help).toContain(`charter ${name}: ${command.summary}`);
      // Each flag's entry runs from its `--name` line to the next flag: it has a meaning and a default.
      const entries = help.split(/\n(?= {2}(?:-\w, |\s{4})--)/);
      for (const flag of Object.keys(command.flags)) {
        const entry = entries.find((text) => new RegExp(`^\\s+(?:-\\w, )?--${flag}\\b`).test(text));
        expect(entry, `--${flag} in charter ${name} --help`).toBeDefined();
        expect(entry).toMatch(/Default:\s+\S[\s\S]*\.\s*$/);
      }
      expect(help).toMatch(/Examples?:\n {2}charter /);
    },
  );

  it("charter -v and --version print the package version", async () => {
    for (const flag of ["-v", "--version"]) {
      const { exitCode, stdout } = await charterProcess([flag]);
      expect(exitCode).toBe(0);
      expect(stdout).toBe(`charter ${version}\n`);
    }
  });

  it("an unknown command suggests the nearest one, as a typed error with exit code 4", async () => {
    const { exitCode, stdout, stderr } = await charterProcess(["rnu", "agent.md"]);
    expect(exitCode).toBe(4);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^charter: ARGUMENT_INVALID: unknown command 'rnu'; did you mean run\?/);
    const unrelated = await charterProcess(["deploy"]);
    expect(unrelated.exitCode).toBe(4);
    expect(unrelated.stderr).toContain("unknown command 'deploy'");
    expect(unrelated.stderr).not.toContain("did you mean");
    const help = await charterProcess(["help", "replya"]);
    expect(help.exitCode).toBe(4);
    expect(help.stderr).toContain("did you mean replay?");
  });

  it("an unknown flag suggests the nearest flag of that command, exit 4, before anything runs", async () => {
    const typo = await charterProcess(["runs", "list", "--stor", "/nonexistent/x.db"]);
    expect(typo.exitCode).toBe(4);
    expect(typo.stderr).toMatch(
      /^charter: ARGUMENT_INVALID: unknown flag --stor for charter runs; did you mean --store\?/,
    );
    // A flag of another command is unknown here: verify takes no --approve.
    const other = await charterProcess(["verify", "some-run", "--approve", "call_1"]);
    expect(other.exitCode).toBe(4);
    expect(other.stderr).toContain("unknown flag --approve for charter verify");
    const global = await charterProcess(["--verison"]);
    expect(global.exitCode).toBe(4);
    expect(global.stderr).toContain("did you mean --version?");
  });

  it("a string flag without its value, a value on a boolean flag, and extra arguments are typed errors", async () => {
    const missing = await charterProcess(["verify", "--runs-dir"]);
    expect(missing.exitCode).toBe(4);
    expect(missing.stderr).toContain("ARGUMENT_INVALID: --runs-dir needs a value: --runs-dir DIR");
    const valued = await charterProcess(["runs", "list", "--json=yes"]);
    expect(valued.exitCode).toBe(4);
    expect(valued.stderr).toContain("ARGUMENT_INVALID: --json takes no value");
    const extra = await charterProcess(["run", "agent.md", "two", "words"]);
    expect(extra.exitCode).toBe(4);
    expect(extra.stderr).toContain("unexpected argument 'words'");
  });

  it("an unknown frontmatter key or configuration key names the file and key and suggests the nearest", async () => {
    const agent = await project({
      agent: agentFile("models: [local/m]\nmaxTurn: 3"),
      config: { providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" } } },
    });
    const badAgent = await charterProcess(["run", agent.agentPath, "hello", "--config", agent.configPath]);
    expect(badAgent.exitCode).toBe(4);
    expect(badAgent.stderr).toContain(
      `AGENT_FILE_INVALID): Agent file ${agent.agentPath}: unknown key "maxTurn"`,
    );
    expect(badAgent.stderr).toContain("did you mean maxTurns?");
    const configuration = await project({
      agent: agentFile("models: [local/m]"),
      config: {
        mcpServer: {},
        providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" } },
      },
    });
    const badConfiguration = await charterProcess([
      "run",
      configuration.agentPath,
      "hello",
      "--config",
      configuration.configPath,
    ]);
    expect(badConfiguration.exitCode).toBe(4);
    expect(badConfiguration.stderr).toContain(
      `CONFIGURATION_INVALID): Configuration ${configuration.configPath}`,
    );
    expect(badConfiguration.stderr).toContain('unknown key "mcpServer"; did you mean mcpServers?');
  });
});
