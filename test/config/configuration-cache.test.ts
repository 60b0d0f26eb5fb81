// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are configuration placeholders, not templates.
import { mkdir, mkdtemp, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createConfigurationCache, settledFileMilliseconds } from "../../src/config/configuration-cache.js";
import type { LoadConfigurationOptions } from "../../src/config/load-configuration.js";
import { CharterError } from "../../src/foundation/charter-error.js";

let root: string;
let options: LoadConfigurationOptions;
let environment: Record<string, string | undefined>;
const cwdLayer = () => join(root, "cwd", ".charter.json");
const homeLayer = () => join(root, "home", ".charter", "charter.json");

// File times are the system's: the cache's clock is read as a time well after every file written here, so the
// files count as settled, except in the test about files changed just now.
const later = () => Date.now() + 10 * settledFileMilliseconds;
// Edits are told apart from the version read by a modification time set explicitly (an hour earlier for the version
// read), never by how fast the test runs.
const anHourAgo = () => new Date(Date.now() - 3_600_000);

async function writeSettled(path: string, content: unknown): Promise<void> {
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  await utimes(path, anHourAgo(), anHourAgo());
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "charter-configuration-cache-"));
  await mkdir(join(root, "cwd"), { recursive: true });
  await mkdir(join(root, "home", ".charter"), { recursive: true });
  await mkdir(join(root, "etc"), { recursive: true });
  environment = {};
  options = {
    cwd: join(root, "cwd"),
    homeDirectory: join(root, "home"),
    etcDirectory: join(root, "etc"),
    processEnvironment: environment,
  };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("createConfigurationCache", () => {
  it("gives the configuration it read again while no file changed, and reads them again when one changes", async () => {
    await writeSettled(cwdLayer(), { defaults: { maxTurns: 4 } });
    const cache = createConfigurationCache({ now: later });
    const first = await cache.load(options);
    expect(first.configuration.defaults.maxTurns).toBe(4);
    expect(await cache.load(options)).toBe(first);

    // An edit to a layer that exists.
    await writeFile(cwdLayer(), JSON.stringify({ defaults: { maxTurns: 5 } }));
    const edited = await cache.load(options);
    expect(edited.configuration.defaults.maxTurns).toBe(5);
    await utimes(cwdLayer(), anHourAgo(), anHourAgo());
    const settled = await cache.load(options);
    expect(settled.configuration.defaults.maxTurns).toBe(5);
    expect(await cache.load(options)).toBe(settled);

    // A layer that did not exist appears, then goes.
    await writeSettled(homeLayer(), { defaults: { maxTurns: 7, description: "from home" } });
    const withHome = await cache.load(options);
    expect(withHome.configuration.defaults.description).toBe("from home");
    expect(withHome.configuration.defaults.maxTurns).toBe(5);
    await unlink(homeLayer());
    const withoutHome = await cache.load(options);
    expect(withoutHome.configuration.defaults.description).toBeUndefined();
  });

  it("reads the files again when a variable their placeholders took changes, in the .charter.env or the environment", async () => {
    await writeSettled(cwdLayer(), {
      providers: { local: { type: "openai-compatible", baseUrl: "${BASE_URL}", apiKey: "${LOCAL_KEY}" } },
    });
    await writeSettled(join(root, "cwd", ".charter.env"), "LOCAL_KEY=first-key\n");
    environment.BASE_URL = "http://127.0.0.1:1111/v1";
    const cache = createConfigurationCache({ now: later });
    const first = await cache.load(options);
    expect(first.configuration.providers.local?.apiKey).toBe("first-key");
    expect(await cache.load(options)).toBe(first);

    environment.BASE_URL = "http://127.0.0.1:2222/v1";
    const otherUrl = await cache.load(options);
    expect(otherUrl.configuration.providers.local?.baseUrl).toBe("http://127.0.0.1:2222/v1");

    await writeFile(join(root, "cwd", ".charter.env"), "LOCAL_KEY=second-key\n");
    const otherKey = await cache.load(options);
    expect(otherKey.configuration.providers.local?.apiKey).toBe("second-key");
    expect(otherKey.secrets.map((secret) => secret.value)).toContain("second-key");
    expect(otherKey.secrets.map((secret) => secret.value)).not.toContain("first-key");
  });

  it("keeps one configuration per set of layers and overlay: another agent directory or tenant overlay is its own", async () => {
    await writeSettled(cwdLayer(), { defaults: { maxTurns: 4 } });
    await mkdir(join(root, "agents"));
    await writeSettled(join(root, "agents", ".charter.json"), { defaults: { description: "agents" } });
    const cache = createConfigurationCache({ now: later });
    const base = await cache.load(options);
    const agentDirectory = await cache.load({ ...options, promptDirectory: join(root, "agents") });
    const tenant = await cache.load({
      ...options,
      overlay: { label: "tenant acme", data: { defaults: { maxTurns: 8 } } },
    });
    expect(base.configuration.defaults.maxTurns).toBe(4);
    expect(base.configuration.defaults.description).toBeUndefined();
    expect(agentDirectory.configuration.defaults.description).toBe("agents");
    expect(tenant.configuration.defaults.maxTurns).toBe(8);
    expect(await cache.load(options)).toBe(base);
    expect(await cache.load({ ...options, promptDirectory: join(root, "agents") })).toBe(agentDirectory);
    const otherTenant = await cache.load({
      ...options,
      overlay: { label: "tenant acme", data: { defaults: { maxTurns: 9 } } },
    });
    expect(otherTenant.configuration.defaults.maxTurns).toBe(9);
  });

  it("keeps nothing read from a file changed just now, nor a load that failed", async () => {
    await writeFile(cwdLayer(), JSON.stringify({ defaults: { maxTurns: 4 } }));
    // The clock reads the moment the file was written: a second edit within the same tick could look unchanged.
    const cache = createConfigurationCache({ now: () => Date.now() });
    const first = await cache.load(options);
    const second = await cache.load(options);
    expect(second).not.toBe(first);
    expect(second.configuration).toEqual(first.configuration);

    const settledCache = createConfigurationCache({ now: later });
    await writeSettled(cwdLayer(), "{ not json");
    const failure = await settledCache.load(options).then(
      () => null,
      (error: unknown) => error,
    );
    expect(CharterError.isInstance(failure) && failure.code).toBe("CONFIGURATION_INVALID");
    await writeSettled(cwdLayer(), { defaults: { maxTurns: 3 } });
    expect((await settledCache.load(options)).configuration.defaults.maxTurns).toBe(3);
  });
});
