// Diagnostic only (not used by run-peers.sh). Preloaded with NODE_OPTIONS="--import <this file>", it makes every
// `better-sqlite3` import or require in the process resolve to Charter's own better-sqlite3 (13.x, Node-API)
// instead of the harness's pinned 12.11.1, whose Statement finalizer aborts Node 24 during GC
// (`node::RemoveEnvironmentCleanupHook: Assertion (env) != nullptr`; upstream WiseLibs/better-sqlite3#1515,
// closed without a fix in 12.x). That lets `langgraph:sqlite` (LangGraph's SqliteSaver) run on Node 24.
// The harness still reports better-sqlite3 12.11.1 in `versions` (it reads node_modules), so runs made with
// this hook are tagged and filed apart (see README.md). The runner's child processes inherit NODE_OPTIONS.
import { registerHooks } from "node:module";

const target = new URL("../../node_modules/better-sqlite3/lib/index.js", import.meta.url).href;
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === "better-sqlite3") return { url: target, format: "commonjs", shortCircuit: true };
    return nextResolve(specifier, context);
  },
});
