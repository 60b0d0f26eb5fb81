// Keeps the layering of docs/architecture.md: no import cycles between files, and each module imports only
// the modules below it. The core (contract, model spec, tools, session, transcript) never imports a concrete
// provider, MCP transport, database or server.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..", "src");

/** Which top-level modules each module may import (besides itself). Order mirrors the layering. */
const core = ["foundation", "contract", "model", "tools", "session", "transcript"];
// The runner wires concrete pieces together; the demo, the CLI and the library entry point sit on it.
const wiring = [...core, "config", "abilities", "store", "runner", "workflow"];
const allowedImports = {
  foundation: [],
  contract: ["foundation"],
  model: ["foundation", "contract"],
  tools: ["foundation", "contract"],
  session: ["foundation", "contract", "model", "tools"],
  transcript: ["foundation", "contract", "session"],
  config: ["foundation", "contract"],
  // Shared knowledge files, chosen for a task and fitted to a token budget (the model's tokenizer) for the runner.
  abilities: ["foundation", "contract", "model", "config"],
  store: ["foundation", "contract", "session", "transcript"],
  testing: core,
  runner: [...core, "config", "abilities", "store"],
  conformance: [...core, "config", "runner"],
  // The agent registry and selection sit on the runner, which reaches them only through hooks it is given.
  agents: [...core, "config", "runner"],
  // Workflows sit on the runner: each agent step is a full run, each tool step a call through the tool pipeline.
  workflow: [...core, "config", "store", "runner", "agents"],
  // Work items: atomic agent runs over a git working tree (snapshots, admission, test gate, receipts), on the
  // runner and the agent registry (a work item names its agent by registry id or file).
  work: [...core, "config", "store", "runner", "agents"],
  // The server: HTTP API, identity and tenants, run execution (in process or through the queue), telemetry.
  server: [...core, "config", "abilities", "store", "runner", "agents", "workflow", "work"],
  // The run viewer: browser code bundled by esbuild, on nothing of the Node side (it reads the API over HTTP).
  viewer: [],
  demo: [...wiring, "testing"],
  cli: [...wiring, "agents", "work", "server", "conformance", "demo", "testing"],
  "index.ts": [...wiring, "agents", "work", "conformance", "testing"],
};

/** Concrete implementations that only their own subfolder, the wiring layers and tests may import. */
const concreteFolders = ["model/providers", "tools/sources", "store"];
const concreteImporters = [
  "runner",
  "workflow",
  "work",
  "server",
  "conformance",
  "cli",
  "demo",
  "testing",
  "index.ts",
];

/** Packages that are concrete providers, transports, databases or servers: allowed only in these folders. */
const restrictedPackages = [
  { prefix: "@ai-sdk/", allowedIn: ["model/providers"] },
  { prefix: "ollama-ai-provider", allowedIn: ["model/providers"] },
  { prefix: "@openrouter/", allowedIn: ["model/providers"] },
  { prefix: "@modelcontextprotocol/", allowedIn: ["tools/sources", "testing", "demo"] },
  { prefix: "node:http", allowedIn: ["model/providers", "tools/sources", "testing", "demo", "cli"] },
  { prefix: "kysely", allowedIn: ["store"] },
  { prefix: "better-sqlite3", allowedIn: ["store"] },
  // Exactly `pg` (and its subpaths): `pg-boss` is the server's queue, not the store's driver.
  { prefix: "pg", exact: true, allowedIn: ["store"] },
  // The server's own components: HTTP, tokens, the job queue, telemetry export.
  { prefix: "fastify", allowedIn: ["server"] },
  { prefix: "@fastify/", allowedIn: ["server"] },
  { prefix: "jose", allowedIn: ["server"] },
  { prefix: "pg-boss", allowedIn: ["server"] },
  { prefix: "@opentelemetry/", allowedIn: ["server"] },
];

function listFiles(directory) {
  const files = [];
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...listFiles(path));
    else if (name.endsWith(".ts")) files.push(path);
  }
  return files;
}

const importPattern = /(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const files = listFiles(root);
const graph = new Map();
const problems = [];

for (const file of files) {
  const source = readFileSync(file, "utf8");
  const fromPath = relative(root, file);
  const fromModule = fromPath.includes("/") ? fromPath.split("/")[0] : fromPath;
  const edges = [];
  for (const match of source.matchAll(importPattern)) {
    const specifier = match[1] ?? match[2];
    if (specifier.startsWith(".")) {
      const target = resolve(dirname(file), specifier).replace(/\.js$/, ".ts");
      const toPath = relative(root, target);
      edges.push(target);
      const toModule = toPath.includes("/") ? toPath.split("/")[0] : toPath;
      if (toModule !== fromModule && !(allowedImports[fromModule] ?? []).includes(toModule)) {
        problems.push(`${fromPath}: module '${fromModule}' must not import '${toPath}' (layering)`);
      }
      for (const concrete of concreteFolders) {
        if (toPath.startsWith(`${concrete}/`) && !fromPath.startsWith(`${concrete}/`)) {
          if (!concreteImporters.includes(fromModule)) {
            problems.push(`${fromPath}: core code must not import the concrete '${toPath}'`);
          }
        }
      }
    } else {
      for (const rule of restrictedPackages) {
        if (
          (rule.exact === true
            ? specifier === rule.prefix || specifier.startsWith(`${rule.prefix}/`)
            : specifier.startsWith(rule.prefix)) &&
          !rule.allowedIn.some((folder) => fromPath.startsWith(`${folder}`))
        ) {
          problems.push(`${fromPath}: '${specifier}' may only be imported in ${rule.allowedIn.join(", ")}`);
        }
      }
    }
  }
  graph.set(file, edges);
}

// Tarjan's strongly connected components: any component larger than one file is an import cycle.
let index = 0;
const indices = new Map();
const lowLinks = new Map();
const stack = [];
const onStack = new Set();
function strongConnect(node) {
  indices.set(node, index);
  lowLinks.set(node, index);
  index++;
  stack.push(node);
  onStack.add(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (!indices.has(next)) {
      strongConnect(next);
      lowLinks.set(node, Math.min(lowLinks.get(node), lowLinks.get(next)));
    } else if (onStack.has(next)) {
      lowLinks.set(node, Math.min(lowLinks.get(node), indices.get(next)));
    }
  }
  if (lowLinks.get(node) === indices.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(relative(root, member));
    } while (member !== node);
    if (component.length > 1) problems.push(`import cycle: ${component.join(" -> ")}`);
  }
}
for (const file of graph.keys()) if (!indices.has(file)) strongConnect(file);

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  console.error(`architecture check failed: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(`architecture check passed: ${files.length} files, no cycles, layering respected`);
