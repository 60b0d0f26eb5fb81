/**
 * The stable error codes. Exit codes, retries and tests are chosen from these, never from message text.
 * Grouped by what the CLI does with them (see cli/exit-code.ts).
 */
export const errorCodes = [
  // Invalid arguments, agent file or configuration (exit 4).
  "ARGUMENT_INVALID",
  "AGENT_FILE_INVALID",
  "CONFIGURATION_INVALID",
  "ENVIRONMENT_VARIABLE_UNRESOLVED",
  "CONTRACT_INVALID",
  "CONTRACT_PROVENANCE_MISSING",
  // A workflow file that is not valid (schema, unknown step, dependency cycle, template), or an input that does
  // not match the workflow's `input` schema: refused before any step runs.
  "WORKFLOW_FILE_INVALID",
  "WORKFLOW_INPUT_INVALID",
  // Abilities (shared knowledge files): an invalid ability file, two files with one id, an agent naming an
  // ability that does not exist.
  "ABILITY_INVALID",
  "ABILITY_DUPLICATE",
  "ABILITY_UNKNOWN",
  // The agent registry: a profile that does not validate, two agents with one id, an id no agent has, a disabled
  // agent asked for by id.
  "AGENT_PROFILE_INVALID",
  "AGENT_ID_DUPLICATE",
  "AGENT_NOT_FOUND",
  "AGENT_DISABLED",
  // Work items: a work item file that fails its schema (naming the field), a folder that is not a git working tree.
  "WORK_ITEM_INVALID",
  "WORK_REPOSITORY_INVALID",
  // Work plans: a plan that cannot be read or names one id twice, a dependency cycle (named), and a working tree
  // with uncommitted changes (a plan commits each item on the branch, so it starts from a clean one).
  "WORK_PLAN_INVALID",
  "WORK_PLAN_CYCLE",
  "WORK_TREE_NOT_CLEAN",
  // The library used in a way this package cannot serve: a schema of an unsupported zod major version, or
  // `require("charter")` (an ES module whose graph awaits at its top level).
  "ZOD_VERSION_UNSUPPORTED",
  "REQUIRE_UNSUPPORTED",
  // Tool servers that cannot start or list their tools, and tools that do not exist (exit 3).
  "MCP_SERVER_FAILED",
  "TOOL_REFERENCE_UNKNOWN",
  // A `tools` entry naming a server's tool that the server's own toolsAllowed/toolsDenied exclude.
  "TOOL_REFERENCE_DENIED",
  // Output schema validation failure (exit 5).
  "OUTPUT_SCHEMA_INVALID",
  // Session failures (exit 1).
  "PREFLIGHT_FAILED",
  "MODEL_AUTHENTICATION_FAILED",
  "MODEL_QUOTA_EXCEEDED",
  "MODEL_RATE_LIMITED",
  "MODEL_NETWORK_ERROR",
  "MODEL_TIMEOUT",
  "MODEL_SERVER_ERROR",
  "MODEL_BAD_REQUEST",
  "MODEL_INVALID_RESPONSE",
  // A response body over the target's modelResponseMaxBytes: the attempt fails, the next one moves on.
  "MODEL_RESPONSE_TOO_LARGE",
  "MODEL_ATTEMPTS_EXHAUSTED",
  // Every attempt of the run failed before any HTTP answer: the model was never reached.
  "MODEL_UNREACHABLE",
  "PROTOCOL_NO_TOOLS",
  "PROTOCOL_MALFORMED",
  "BUDGET_EXHAUSTED",
  // A budget outside the run (a server tenant's tokens or cost for the day or month) is spent: refused at the
  // start, or the run stops before its next model call.
  "TENANT_BUDGET_EXHAUSTED",
  "TIMEOUT",
  "CONTRACT_VIOLATION",
  "TOOL_RESULT_INVALID",
  "INTERRUPTED",
  "INTERNAL_ERROR",
  // A value nested deeper than Charter serialises, hashes or redacts (foundation/json-depth.ts).
  "VALUE_TOO_DEEP",
  // Tool-level codes: carried as data in tool results, not thrown.
  "TOOL_NOT_FOUND",
  "TOOL_INPUT_INVALID",
  // A REST tool parameter that would make a URL path segment `.` or `..` (and so move the path outside it).
  "TOOL_PATH_TRAVERSAL",
  // A REST tool's server redirected a request carrying configured headers or a body to another origin.
  "TOOL_REDIRECT_REFUSED",
  "TOOL_NOT_ALLOWED",
  // The run's role may not call a tool of this class (a server's roles: read_only, idempotent, write, delete).
  "TOOL_PERMISSION_DENIED",
  "TOOL_TIMEOUT",
  "TOOL_EXECUTION_FAILED",
  "TOOL_CALL_DROPPED",
  "TOOL_CONTEXT_BUDGET_EXCEEDED",
  "TOOL_OUTPUT_HANDLE_INVALID",
  // The folder of stored tool outputs is a symbolic link or another user's: nothing is written or read there.
  "TOOL_OUTPUT_FOLDER_UNSAFE",
  // A response body over the size a tool source accepts (REST maxResponseBytes): refused unread.
  "TOOL_RESPONSE_TOO_LARGE",
  // Transcript verification.
  "TRANSCRIPT_INVALID",
  "RUN_NOT_FOUND",
  // Durable runs: approvals and tools in flight when a process died.
  "APPROVAL_REQUIRED",
  "TOOL_CALL_DENIED",
  "TOOL_OUTCOME_UNKNOWN",
  "RUN_NOT_RESUMABLE",
  // Another process wrote to the run this process was running (two resumes of one run): this one stopped.
  "RUN_CONFLICT",
  // A stored run that does not verify (its chain, or a checkpoint, tool result or run row field the chain does not
  // bind): resume and replay refuse it rather than act on a forged record.
  "RUN_TAMPERED",
  // Workflows: a template that names a value the step's run did not produce (a JSON path in a report that is
  // not JSON, say), and a stored workflow checkpoint that fails its schema.
  "WORKFLOW_TEMPLATE_UNRESOLVED",
  "WORKFLOW_CHECKPOINT_INVALID",
  // Work items: a git command that failed, another work item holding the working tree's lock, and receipts that
  // cannot be found or do not verify (own hash, chain, after snapshot).
  "WORK_GIT_FAILED",
  "WORK_LOCKED",
  "RECEIPT_NOT_FOUND",
  "RECEIPT_INVALID",
  // Workspace tools (data in tool results): a path outside the repository, into .git, or through a symlink out.
  "WORKSPACE_PATH_REFUSED",
  // The server (`charter serve`): a request without valid credentials (no key, an unknown, revoked or malformed API
  // key, a JWT that does not verify); a role that may not do what it asks; a client address blocked after repeated
  // attempts at other tenants' data; a request that fails its route's schema; a path no route serves; a run whose
  // state does not allow the request (cancel a finished run); an Idempotency-Key reused with another body; an API
  // key id that names no key of the tenant.
  "AUTH_INVALID",
  "PERMISSION_DENIED",
  "CLIENT_BLOCKED",
  "REQUEST_INVALID",
  "ROUTE_NOT_FOUND",
  "RUN_STATE_CONFLICT",
  "IDEMPOTENCY_KEY_REUSED",
  "API_KEY_NOT_FOUND",
  // The server's workflow and work item runs: a workflow name with no file in `server.workflows`, a repository name
  // that `server.repositories` does not list.
  "WORKFLOW_NOT_FOUND",
  "WORK_REPOSITORY_NOT_FOUND",
  // The server's rate limits: too many requests (or, as a tool failure inside a run, tool calls) in a window from
  // one address, tenant, user or tool class; `retryAfterSeconds` says when the window ends.
  "RATE_LIMIT_EXCEEDED",
  // Tenants' provider keys are sealed with the server's secrets key before they are stored: a key sent to a server
  // that has none (PostgreSQL without CHARTER_SECRETS_KEY), and a stored key that does not open with the key this
  // process has (another CHARTER_SECRETS_KEY than the one it was sealed with).
  "TENANT_SECRETS_KEY_MISSING",
  "TENANT_SECRET_UNREADABLE",
] as const;

export type ErrorCode = (typeof errorCodes)[number];
