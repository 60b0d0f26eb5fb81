// `import { ... } from "charter/server"`: the HTTP API for an application that serves it from its own process.
// A separate entry point so that `import "charter"` never loads Fastify, jose or the queue.
export { type CharterServer, type CreateServerOptions, createServer } from "./create-server.js";
export {
  createInProcessRunDispatcher,
  type InProcessRunDispatcher,
  type InProcessRunDispatcherOptions,
} from "./execution/in-process-run-dispatcher.js";
export type { RunDispatcher } from "./execution/run-dispatcher.js";
export type { RunExecutionContext } from "./execution/run-execution-context.js";
export type { RunDecisionRequest, RunRequest, ServerRole } from "./execution/run-request.js";
export { createApiKey } from "./identity/create-api-key.js";
export { type StartedServer, type StartServerOptions, startServer } from "./start-server.js";
export {
  createTenantConfigurationResolver,
  resolveTenantSettings,
  type TenantSettings,
} from "./tenants/resolve-tenant-settings.js";
