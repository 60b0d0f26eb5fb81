// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are configuration placeholders, not templates.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LoadConfigurationOptions, loadConfiguration } from "../../src/config/load-configuration.js";
import { CharterError } from "../../src/foundation/charter-error.js";

type Origin = "explicit" | "cwd" | "prompt" | "binary" | "home" | "system";
const origins: readonly Origin[] = ["explicit", "cwd", "prompt", "binary", "home", "system"];

let root: string;
let paths: Record<Origin, string>;
let options: LoadConfigurationOptions;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "charter-configuration-"));
  paths = {
    explicit: join(root, "explicit", "custom.json"),
    cwd: join(root, "cwd", ".charter.json"),
    prompt: join(root, "prompt", ".charter.json"),
    binary: join(root, "binary", ".charter.json"),
    home: join(root, "home", ".charter", "charter.json"),
    system: join(root, "etc", "charter", "charter.json"),
  };
  for (const path of Object.values(paths)) await mkdir(dirname(path), { recursive: true });
  options = {
    configPath: paths.explicit,
    cwd: join(root, "cwd"),
    promptDirectory: join(root, "prompt"),
    binaryDirectory: join(root, "binary"),
    homeDirectory: join(root, "home"),
    etcDirectory: join(root, "etc"),
    processEnvironment: {},
  };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writeLayer(origin: Origin, content: unknown): Promise<void> {
  await writeFile(paths[origin], typeof content === "string" ? content : JSON.stringify(content));
}

async function writeEnv(origin: Origin, text: string): Promise<string> {
  const path = join(dirname(paths[origin]), ".charter.env");
  await writeFile(path, text);
  return path;
}

async function loadFailure(loadOptions: LoadConfigurationOptions = options): Promise<CharterError> {
  const error = await loadConfiguration(loadOptions).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error;
}

describe("agentsDir", () => {
  it("is relative to the file that sets it; the highest layer that sets it wins, a single path read as a list", async () => {
    await writeLayer("home", { agentsDir: "team-agents" });
    await writeLayer("cwd", { agentsDir: ["./mine", "/abs/agents"] });
    const both = await loadConfiguration({ ...options, configPath: undefined });
    expect(both.configuration.agentsDir).toEqual([join(root, "cwd", "mine"), "/abs/agents"]);
    await rm(paths.cwd);
    const home = await loadConfiguration({ ...options, configPath: undefined });
    expect(home.configuration.agentsDir).toEqual([join(root, "home", ".charter", "team-agents")]);
  });

  it("refuses a value that is neither a path nor a list of paths, naming the file", async () => {
    await writeLayer("cwd", { agentsDir: 3 });
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toMatchObject({ file: paths.cwd, key: "agentsDir" });
  });
});

describe("loadConfiguration layers", () => {
  // The layer order of seed 000 §9.
  it("takes each value from the highest layer present, in precedence order", async () => {
    for (const origin of origins) {
      await writeLayer(origin, { defaults: { description: origin } });
    }
    // Remove layers from the top down: each time, the next one must win.
    for (let index = 0; index < origins.length; index++) {
      const expected = origins[index] as Origin;
      const loadOptions = index === 0 ? options : { ...options, configPath: undefined };
      const { configuration } = await loadConfiguration(loadOptions);
      expect(configuration.defaults.description).toBe(expected);
      await rm(paths[expected]);
    }
    const { configuration } = await loadConfiguration({ ...options, configPath: undefined });
    expect(configuration).toEqual({
      providers: {},
      mcpServers: {},
      restTools: {},
      queues: {},
      pricing: {},
      store: {},
      toolCache: {},
      abilitiesDir: "./abilities",
      defaults: {},
      agentsDir: null,
      server: {},
    });
  });

  it("reports every layer, highest first, with whether it was present", async () => {
    await writeLayer("cwd", {});
    await writeLayer("home", {});
    await writeLayer("explicit", {});
    const { layers } = await loadConfiguration(options);
    expect(layers.map(({ path, present, origin }) => ({ path, present, origin }))).toEqual([
      { path: paths.explicit, present: true, origin: "explicit" },
      { path: paths.cwd, present: true, origin: "cwd" },
      { path: paths.prompt, present: false, origin: "prompt" },
      { path: paths.binary, present: false, origin: "binary" },
      { path: paths.home, present: true, origin: "home" },
      { path: paths.system, present: false, origin: "system" },
    ]);
  });

  it("reads a directory shared by two layers once, at its higher position, and skips absent directories", async () => {
    await writeLayer("cwd", { defaults: { maxTurns: 4 } });
    const { layers, configuration } = await loadConfiguration({
      ...options,
      configPath: undefined,
      promptDirectory: join(root, "cwd"),
      binaryDirectory: undefined,
    });
    expect(layers.map((layer) => layer.origin)).toEqual(["cwd", "home", "system"]);
    expect(configuration.defaults.maxTurns).toBe(4);
  });

  it("resolves a relative --config against the working directory and requires it to exist", async () => {
    await writeLayer("explicit", { defaults: { maxTurns: 9 } });
    const relative = await loadConfiguration({ ...options, configPath: "../explicit/custom.json" });
    expect(relative.configuration.defaults.maxTurns).toBe(9);
    const missing = await loadFailure({ ...options, configPath: join(root, "nope.json") });
    expect(missing.code).toBe("CONFIGURATION_INVALID");
    expect(missing.details).toMatchObject({ file: join(root, "nope.json"), reason: "ENOENT" });
  });

  it("deep-merges layers: objects key by key, arrays and scalars replaced by the higher layer", async () => {
    await writeLayer("system", {
      providers: {
        local: {
          type: "openai-compatible",
          baseUrl: "http://127.0.0.1:1/v1",
          models: { small: { contextWindow: 8192 } },
        },
      },
      mcpServers: { files: { command: "files-server", args: ["--root", "/srv"] } },
      defaults: { tools: ["files", "github"], temperature: 0.4, maxTurns: 20, output: { format: "json" } },
    });
    await writeLayer("home", { providers: { local: { apiKey: "home-key" } } });
    await writeLayer("cwd", {
      providers: { local: { models: { large: { contextWindow: 65536, temperature: null } } } },
      mcpServers: { files: { args: ["--root", "/work"] } },
      defaults: { tools: ["files"], temperature: null },
    });
    const { configuration } = await loadConfiguration({ ...options, configPath: undefined });
    expect(configuration).toEqual({
      providers: {
        local: {
          type: "openai-compatible",
          baseUrl: "http://127.0.0.1:1/v1",
          apiKey: "home-key",
          headers: {},
          mode: "chat",
          models: { small: { contextWindow: 8192 }, large: { contextWindow: 65536, temperature: null } },
          modelDefaults: {},
        },
      },
      mcpServers: {
        files: { type: "stdio", command: "files-server", args: ["--root", "/work"], env: {}, cwd: null },
      },
      restTools: {},
      queues: {},
      pricing: {},
      store: {},
      toolCache: {},
      abilitiesDir: "./abilities",
      defaults: { tools: ["files"], temperature: null, maxTurns: 20, output: { format: "json" } },
      agentsDir: null,
      server: {},
    });
  });

  it("reads a relative abilitiesDir from the directory of the file that sets it; an absolute one as it is", async () => {
    await writeLayer("home", { abilitiesDir: "team-abilities" });
    const fromHome = await loadConfiguration({ ...options, configPath: undefined });
    expect(fromHome.configuration.abilitiesDir).toBe(join(dirname(paths.home), "team-abilities"));
    await writeLayer("cwd", { abilitiesDir: "/srv/abilities" });
    const fromCwd = await loadConfiguration({ ...options, configPath: undefined });
    expect(fromCwd.configuration.abilitiesDir).toBe("/srv/abilities");
  });

  it("parses durations and other settings in the merged defaults", async () => {
    await writeLayer("home", { defaults: { toolTimeout: "45s", models: "local/small" } });
    const { configuration } = await loadConfiguration({ ...options, configPath: undefined });
    expect(configuration.defaults).toEqual({ toolTimeout: 45_000, models: ["local/small"] });
  });

  it("fills the OpenAI base URL for a provider of type openai", async () => {
    await writeLayer("cwd", { providers: { openai: { type: "openai", models: { "gpt-4o": {} } } } });
    const { configuration } = await loadConfiguration({ ...options, configPath: undefined });
    expect(configuration.providers.openai?.baseUrl).toBe("https://api.openai.com/v1");
  });

  it("resolves a relative MCP server cwd against the file that declares it", async () => {
    await writeLayer("home", {
      mcpServers: { tools: { command: "node", args: ["server.js"], cwd: "servers/tools" } },
    });
    await writeLayer("cwd", { mcpServers: { absolute: { command: "x", cwd: "/opt/x" } } });
    const { configuration } = await loadConfiguration({ ...options, configPath: undefined });
    expect(configuration.mcpServers.tools).toMatchObject({
      cwd: join(root, "home", ".charter", "servers", "tools"),
    });
    expect(configuration.mcpServers.absolute).toMatchObject({ cwd: "/opt/x" });
  });

  it("returns a deeply frozen result", async () => {
    await writeLayer("cwd", { defaults: { tools: ["a"] } });
    const loaded = await loadConfiguration({ ...options, configPath: undefined });
    expect(Object.isFrozen(loaded.configuration.defaults.tools)).toBe(true);
    expect(() => {
      (loaded.layers as unknown[]).push({});
    }).toThrow(TypeError);
  });
});

describe("loadConfiguration placeholders", () => {
  it("expands each layer with the .charter.env beside it, before merging", async () => {
    const envFiles: Partial<Record<Origin, string>> = {};
    // Each layer writes its own token into its own provider; every layer's env file defines TOKEN differently.
    for (const origin of origins) {
      await writeLayer(origin, {
        providers: {
          [origin]: {
            type: "openai-compatible",
            baseUrl: "http://127.0.0.1:1/${PATH_PART}",
            apiKey: "${TOKEN}",
          },
        },
      });
      envFiles[origin] = await writeEnv(origin, `TOKEN=${origin}-token\nPATH_PART=${origin}\n`);
    }
    const { configuration, layers } = await loadConfiguration(options);
    for (const origin of origins) {
      expect(configuration.providers[origin]).toMatchObject({
        apiKey: `${origin}-token`,
        baseUrl: `http://127.0.0.1:1/${origin}`,
      });
    }
    expect(layers.map((layer) => layer.envFile)).toEqual(origins.map((origin) => envFiles[origin]));
  });

  it("uses the env file beside --config FILE, not the working directory's, and $HOME/.charter/.charter.env for home", async () => {
    await writeLayer("explicit", { defaults: { description: "${WHO}" } });
    await writeEnv("explicit", "WHO=beside-the-explicit-file");
    await writeFile(join(root, "cwd", ".charter.env"), "WHO=cwd");
    await writeLayer("home", { defaults: { modelProfile: "${WHO}" } });
    await writeFile(join(root, "home", ".charter.env"), "WHO=wrong-directory");
    await writeEnv("home", "WHO=home-dot-charter");
    const { configuration } = await loadConfiguration(options);
    expect(configuration.defaults).toMatchObject({
      description: "beside-the-explicit-file",
      modelProfile: "home-dot-charter",
    });
  });

  it("falls back to the process environment, after the env file", async () => {
    await writeLayer("cwd", { defaults: { description: "${FROM_FILE}/${FROM_PROCESS}" } });
    await writeEnv("cwd", "FROM_FILE=file");
    const { configuration } = await loadConfiguration({
      ...options,
      configPath: undefined,
      processEnvironment: { FROM_FILE: "process-loses", FROM_PROCESS: "process" },
    });
    expect(configuration.defaults.description).toBe("file/process");
  });

  it("does not lend one layer's env file to another", async () => {
    await writeLayer("cwd", { defaults: { description: "ok" } });
    await writeEnv("cwd", "ONLY_IN_CWD=1");
    await writeLayer("home", { defaults: { modelProfile: "${ONLY_IN_CWD}" } });
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("ENVIRONMENT_VARIABLE_UNRESOLVED");
    expect(error.details).toEqual({ variable: "ONLY_IN_CWD", file: paths.home });
  });

  it("names the unresolved variable and its file", async () => {
    await writeLayer("system", { providers: { p: { type: "openai", apiKey: "${MISSING_KEY}" } } });
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("ENVIRONMENT_VARIABLE_UNRESOLVED");
    expect(error.details).toEqual({ variable: "MISSING_KEY", file: paths.system });
  });

  it("keeps ${parameters.x} literally", async () => {
    await writeLayer("cwd", {
      mcpServers: {
        rest: {
          command: "rest-bridge",
          args: ["--path", "/items/${parameters.id}"],
          env: { HOST: "${HOST}" },
        },
      },
    });
    const { configuration } = await loadConfiguration({
      ...options,
      configPath: undefined,
      processEnvironment: { HOST: "example.test" },
    });
    expect(configuration.mcpServers.rest).toMatchObject({
      args: ["--path", "/items/${parameters.id}"],
      env: { HOST: "example.test" },
    });
  });

  it("names the env file and line of a malformed env file", async () => {
    await writeLayer("cwd", {});
    const envPath = await writeEnv("cwd", "GOOD=1\nthis is not an assignment\n");
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toEqual({ file: envPath, line: 2 });
  });
});

describe("loadConfiguration secrets", () => {
  it("lists every env-file value and every apiKey and header value, once each, labelled without the value", async () => {
    await writeLayer("cwd", {
      providers: {
        local: {
          type: "openai-compatible",
          baseUrl: "http://127.0.0.1:1/v1",
          apiKey: "${LOCAL_KEY}",
          headers: { Authorization: "Bearer ${PROCESS_TOKEN}", "X-Org": "literal-org" },
        },
      },
    });
    const cwdEnv = await writeEnv("cwd", "LOCAL_KEY=sk-local-123\nUNUSED_SECRET=never-referenced\n");
    await writeLayer("home", { providers: { openai: { type: "openai", apiKey: "sk-literal-in-json" } } });
    const homeEnv = await writeEnv("home", "LOCAL_KEY=sk-local-123\nHOME_ONLY=home-value\n");
    const { secrets } = await loadConfiguration({
      ...options,
      configPath: undefined,
      processEnvironment: { PROCESS_TOKEN: "tok-from-process", NOT_A_SECRET: "x" },
    });
    const byLabel = (left: { label: string }, right: { label: string }) =>
      left.label.localeCompare(right.label);
    expect([...secrets].sort(byLabel)).toEqual(
      [
        { value: "sk-local-123", label: `${cwdEnv}:LOCAL_KEY` },
        { value: "never-referenced", label: `${cwdEnv}:UNUSED_SECRET` },
        { value: "home-value", label: `${homeEnv}:HOME_ONLY` },
        { value: "tok-from-process", label: "environment:PROCESS_TOKEN" },
        { value: "Bearer tok-from-process", label: "providers.local.headers.Authorization" },
        { value: "literal-org", label: "providers.local.headers.X-Org" },
        { value: "sk-literal-in-json", label: "providers.openai.apiKey" },
      ].sort(byLabel),
    );
    for (const secret of secrets) expect(secret.label).not.toContain(secret.value);
  });

  it("registers every value a ${VAR} resolves to from the process environment, wherever it is used", async () => {
    await writeLayer("cwd", {
      mcpServers: {
        db: {
          type: "stdio",
          command: "node",
          args: ["server.js", "--password=${DB_PASSWORD}"],
          env: { DB_URL: "postgres://app:${DB_PASSWORD}@db/app", REGION: "${REGION}" },
        },
      },
    });
    const { secrets } = await loadConfiguration({
      ...options,
      configPath: undefined,
      processEnvironment: {
        DB_PASSWORD: "hunter2-from-process",
        REGION: "eu-west-1",
        UNUSED: "not-referenced",
      },
    });
    expect(secrets).toContainEqual({ value: "hunter2-from-process", label: "environment:DB_PASSWORD" });
    expect(secrets).toContainEqual({ value: "eu-west-1", label: "environment:REGION" });
    // Only what configuration references: the rest of the environment is not Charter's to redact.
    expect(secrets.map((secret) => secret.value)).not.toContain("not-referenced");
  });
});

describe("loadConfiguration errors", () => {
  it("names an unknown key by its path and the file that holds it", async () => {
    await writeLayer("home", {
      providers: {
        local: { type: "openai-compatible", baseUrl: "http://x", models: { m: { contextWindo: 1 } } },
      },
    });
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toMatchObject({ file: paths.home, key: "providers.local.models.m.contextWindo" });
  });

  it("names unknown keys at the top level, in defaults and in servers", async () => {
    for (const [content, key] of [
      [{ provider: {} }, "provider"],
      [{ defaults: { maxTurn: 3 } }, "defaults.maxTurn"],
      [{ mcpServers: { s: { command: "x", environment: {} } } }, "mcpServers.s.environment"],
      [{ providers: { "gpt-4.1": { typ: "openai" } } }, 'providers["gpt-4.1"].typ'],
    ] as const) {
      await writeLayer("binary", content);
      const error = await loadFailure({ ...options, configPath: undefined });
      expect(error.details).toMatchObject({ file: paths.binary, key });
    }
  });

  it("suggests the nearest known key for an unknown one, at the place it was found", async () => {
    for (const [content, key, suggestion] of [
      [
        { providers: { local: { type: "openai", baseURL: "http://x" } } },
        "providers.local.baseURL",
        "baseUrl",
      ],
      [{ defaults: { maxTurn: 3 } }, "defaults.maxTurn", "maxTurns"],
      [{ mcpServers: { s: { command: "x", arg: [] } } }, "mcpServers.s.arg", "args"],
      [
        { mcpServers: { s: { type: "http", url: "http://x", header: {} } } },
        "mcpServers.s.header",
        "headers",
      ],
      [{ stores: {} }, "stores", "store"],
    ] as const) {
      await writeLayer("binary", content);
      const error = await loadFailure({ ...options, configPath: undefined });
      expect(error.code).toBe("CONFIGURATION_INVALID");
      expect(error.details).toMatchObject({ file: paths.binary, key, suggestion });
      expect(error.message).toContain(`did you mean ${suggestion}?`);
    }
    await writeLayer("binary", { defaults: { budget: 3 } });
    const unrelated = await loadFailure({ ...options, configPath: undefined });
    expect(unrelated.details).toMatchObject({ key: "defaults.budget" });
    expect(unrelated.details.suggestion).toBeUndefined();
    expect(unrelated.message).not.toContain("did you mean");
  });

  it("names the key path and the problem of a bad value", async () => {
    await writeLayer("prompt", {
      providers: { local: { type: "azure" } },
      defaults: { toolTimeout: "soon" },
    });
    const error = await loadFailure({ ...options, configPath: undefined });
    const keys = (error.details.issues as { key: string }[]).map((issue) => issue.key).sort();
    expect(keys).toEqual(["defaults.toolTimeout", "providers.local.type"]);
    expect(error.details.file).toBe(paths.prompt);
  });

  it("names the files behind an incomplete merged entry", async () => {
    await writeLayer("system", { providers: { local: { apiKey: "k" } } });
    await writeLayer("cwd", { providers: { local: { baseUrl: "http://127.0.0.1:1/v1" } } });
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toMatchObject({
      key: "providers.local.type",
      file: paths.cwd,
      files: [paths.cwd, paths.system],
    });
    await writeLayer("cwd", { providers: { local: { type: "openai-compatible" } } });
    const missingUrl = await loadFailure({ ...options, configPath: undefined });
    expect(missingUrl.details).toMatchObject({ key: "providers.local.baseUrl" });
  });

  it("names a file that is not JSON or not an object", async () => {
    await writeLayer("cwd", '{ "defaults": { "maxTurns": 3, } }');
    expect((await loadFailure({ ...options, configPath: undefined })).details).toEqual({ file: paths.cwd });
    await writeLayer("cwd", "[1, 2]");
    expect((await loadFailure({ ...options, configPath: undefined })).details).toEqual({ file: paths.cwd });
  });

  it("names a layer path that cannot be read", async () => {
    await mkdir(paths.cwd);
    const error = await loadFailure({ ...options, configPath: undefined });
    expect(error.details).toEqual({ file: paths.cwd, reason: "EISDIR" });
  });
});
