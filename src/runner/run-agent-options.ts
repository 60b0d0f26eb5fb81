import type { ConfigurationCache } from "../config/configuration-cache.js";
import type { ConfigurationOverlay } from "../config/load-configuration.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ContractSchemaVersion, ExecutionContract } from "../contract/execution-contract.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { CharterEvent } from "../session/charter-event.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import type { RunStatus } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import type { McpElicitationAnswer } from "../tools/sources/mcp-client-features.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import type { AgentCatalog } from "./agent-catalog.js";
import type { CompletedToolCall, ToolCallDecision, TurnCall } from "./guard-tool-calls.js";
import type { ModelCallBudget } from "./model-call-budget.js";
import type { ConversationHistoryMessage } from "./prepare-agent.js";
import type { ToolCallAdmission } from "./tool-call-admission.js";
import type { RunToolPermissions } from "./tool-permissions.js";

// What runAgent and runAgentFile take, and what a resume asks of a run: types only, apart from the runner itself.
export interface RunAgentOptions {
  /**
   * Path of the agent file (Markdown with YAML frontmatter), or a registry agent id (lowercase letters, digits and
   * hyphens, such as `reviewer` or `standard`), which `agentCatalog` resolves, or `auto`: the agent `agentCatalog`
   * selects for the prompt (the selection is recorded in the contract's decisions).
   */
  readonly agentPath: string;
  /**
   * Told where the top-level run goes once it is known, before its session starts: the agent, its model targets in
   * the order they are tried, and its contract (a server's ROUTED lifecycle event).
   */
  readonly onRouted?: (routing: RunRouting) => void;
  /** Told which agent `auto` selected and why, before the run starts. */
  readonly onAgentSelection?: (selection: AgentSelectionRecord) => void;
  /**
   * Resolves registry ids: the agent to run when `agentPath` is an id, and sub-agents named by id. Without it an id
   * is refused with AGENT_NOT_FOUND. The library's `runAgent` and the CLI supply the project's registry.
   */
  readonly agentCatalog?: AgentCatalog;
  /** The user's task. */
  readonly prompt: string;
  /**
   * Earlier messages of the conversation the run continues (a server's `conversationId`), oldest first: they are
   * put between the system prompt and the prompt, recorded in the run's PRECHECK entry and sent with every request.
   * Their number is recorded with the run's invocation, so a resume finds the prompt after them.
   */
  readonly history?: readonly ConversationHistoryMessage[];
  /**
   * What the run may do with tools (a server run: its caller's role): the tool classes it may call, and whether the
   * configuration's `approvedTools` count. Recorded with the run's invocation: a resume applies them again.
   */
  readonly toolPermissions?: RunToolPermissions;
  /**
   * Asked before each tool call that would run (a server's tool-call rate limits): a refusal is a tool failure the
   * model sees. Not recorded with the run: a resume is given it again.
   */
  readonly toolCallAdmission?: ToolCallAdmission;
  /**
   * A budget the run's model calls spend (a server tenant's tokens and cost): asked before each model call of the
   * run and its sub-agents, told what each consumed; a refusal stops the run (FAILED_BUDGET_EXHAUSTED,
   * TENANT_BUDGET_EXHAUSTED). Not recorded with the run: a resume is given it again.
   */
  readonly modelCallBudget?: ModelCallBudget;
  /**
   * The read-only tool cache of a server run: results are cached within `scope` of the run's tenant (the caller's
   * role), every read-only tool for `defaultTtl` milliseconds unless `toolCache` names its own TTL (null: only the
   * tools `toolCache` names). Without it the cache is on only when the configuration's `toolCache` names tools.
   * Not recorded with the run: a resume is given it again.
   */
  readonly toolCache?: { readonly scope: string | null; readonly defaultTtl: number | null };
  /**
   * A configuration layer given as data, above every file (a server's per-tenant provider and model overrides).
   * Not recorded with the run (it may hold provider keys): a resume must be given it again to rebuild the contract.
   */
  readonly configurationOverlay?: ConfigurationOverlay;
  /**
   * Loads the configuration instead of reading every layer's file again (a server's runs: see
   * `createConfigurationCache`, which gives the same configuration while its files are unchanged).
   */
  readonly configurationCache?: ConfigurationCache;
  /**
   * The run's id, when the caller must know it before the run starts (a work item names its snapshots and receipt
   * folder by it, a workflow records it before the step's run starts); default a new id from the environment.
   */
  readonly runId?: string;
  /** `--config FILE`. */
  readonly configPath?: string;
  /** `--set key=value` assignments. */
  readonly set?: readonly string[];
  readonly cwd?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  /** Configuration layer 4 (`<dir>/.charter.json`): the CLI passes its own directory; skipped when absent. */
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Where run directories go; default `~/.charter/runs`. */
  readonly runsDirectory?: string;
  /**
   * The run store: `postgres://...`, `sqlite:<path>` or a SQLite file path. Default: the configuration's
   * `store`, then `CHARTER_DATABASE_URL`, then `~/.charter/charter.db`.
   */
  readonly store?: string;
  /**
   * An open run store to use instead of opening one (a server that runs many runs over one connection pool): the
   * run uses its view for `tenantId` and leaves it open. Wins over `store`.
   */
  readonly runStore?: RunStore;
  /**
   * Who the run is for (a server's tenant): stored on the run row (and on its sub-agents' rows). The run's store is
   * opened for this tenant (absent: the default tenant), so that every query the run makes is scoped by it.
   */
  readonly tenantId?: string;
  /** The caller's id for what the run serves (a request id, say), stored on the run row and its sub-agents'. */
  readonly correlationId?: string;
  /** The run this one is part of (a workflow run): stored as the run's `parent_run_id`. */
  readonly parentRunId?: string | null;
  readonly environment?: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  /** Extra tools (library function tools), offered beside the agent's MCP tools. */
  readonly extraTools?: readonly RegisteredTool[];
  /** Called after every state transition of the top-level run (progress output). */
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
  /** The typed event stream of the top-level run. */
  readonly onEvent?: (event: CharterEvent) => void;
  /**
   * Called once the run's secrets are known, before anything runs, with the redactor every stored byte passes:
   * for callers that print what they observe (the CLI's `--verbose`), so that they print it redacted too.
   */
  readonly onSecretRedactor?: (redactor: SecretRedactor) => void;
  /**
   * Told what needs the user's attention but does not stop the run (abilities cut to fit their token budget), as
   * one line of text; the CLI prints it on stderr. The same is recorded in the contract's decisions.
   */
  readonly onWarning?: (text: string) => void;
  /** `--trace-llm`: each HTTP exchange with a model endpoint, as redacted text (sub-agents' included). */
  readonly traceModelHttp?: (text: string) => void;
  /** `--trace-mcp`: each JSON-RPC message to and from an MCP server, as redacted text (sub-agents' included). */
  readonly traceMcp?: (text: string) => void;
}

/** Where a run goes: its agent, the model targets it tries (in order) and its contract. */
export interface RunRouting {
  readonly runId: string;
  readonly agentId: string;
  readonly targets: readonly { readonly provider: string; readonly model: string }[];
  readonly contractHash: string;
  /** How a selector chose the agent (`auto`); null when it was named. */
  readonly selection: AgentSelectionRecord | null;
  /** True when the run continues a stored run (resume) rather than starting. */
  readonly resumed: boolean;
}

/** What `charter resume` asks of the top-level run. */
export interface ResumeRequest {
  readonly checkpoint: SessionCheckpoint;
  /** The run's status when the resume read it: reopened only from that status and that chain end. */
  readonly status: RunStatus;
  /** The stored chain's end, which the resumed session continues, and the contract it must run under. */
  readonly continueFrom: { readonly entryCount: number; readonly headHash: string };
  readonly contractHash: string;
  /** The versions the run's contract was built under: the resumed run's contract is built as they built it. */
  readonly contractVersion: {
    readonly schemaVersion: ContractSchemaVersion;
    readonly adapterVersion: string;
  };
  readonly transcriptCreatedAt: string;
  /** Decisions, stored results and the call possibly in flight, each bound to its exact call (turn, id, arguments). */
  readonly decisions: readonly ToolCallDecision[];
  readonly completed: readonly CompletedToolCall[];
  readonly possiblyInFlight: TurnCall | null;
  /** The selection the run's agent was chosen by (`charter run auto`), as its invocation recorded it. */
  readonly agentSelection?: AgentSelectionRecord;
  /** Answers to the questions tool servers asked (MCP elicitation), by call id. */
  readonly answers?: ReadonlyMap<string, McpElicitationAnswer>;
}
