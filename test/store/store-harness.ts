import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import type { AccountingEntry } from "../../src/session/accounting-entry.js";
import type { CommitBatch, RawPayloadInput, StoredEntryInput } from "../../src/store/commit-batch.js";
import type { RunStore } from "../../src/store/run-store.js";
import { toolRequestHash } from "../../src/store/tool-request-hash.js";
import {
  createHashChainTranscript,
  type HashChainTranscript,
} from "../../src/transcript/hash-chain-transcript.js";
import {
  createInMemoryTranscriptWriter,
  type InMemoryTranscriptWriter,
} from "../../src/transcript/in-memory-transcript-writer.js";
import type { TranscriptWriter } from "../../src/transcript/transcript-writer.js";

export type TestEnvironment = ReturnType<typeof deterministicEnvironment>;

/** A contract made the only way contracts are made, by the contract factory, with a deterministic id. */
export function storeTestContract(): ExecutionContract {
  return buildExecutionContract({
    agent: { id: "store-test-agent", systemPrompt: "You are a test agent.", settings: {} },
    configurationDefaults: {},
    overrides: {},
    modelTargets: [{ provider: "local", model: "scripted", contextWindow: 32_768 }],
    toolManifest: [
      {
        name: "lookup",
        description: "Looks a key up.",
        input_schema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
        source: { kind: "mcp", server: "test", tool: "lookup" },
        annotations: { readOnlyHint: true },
      },
    ],
    parentContractHash: null,
    adapterVersion: "protocol-adapter/1",
    environment: deterministicEnvironment({ start: startOfTime }),
  });
}

/** Where a store lives, in the form `openRunStore` takes, so that another process can open it too. */
export interface StoreLocation {
  readonly path?: string;
  readonly url?: string;
  readonly postgres?: { readonly schema: string };
  readonly sqlite?: { readonly backgroundCheckpointCommits: number };
}

/** Direct access to a backend's tables, bypassing the store, to damage what it holds. */
export interface StoreTampering {
  replaceEntryLine(runId: string, seq: number, line: string): Promise<void>;
  deleteEntry(runId: string, seq: number): Promise<void>;
  /** Adds `offset` to the seq column of the run's rows from `fromSeq` on (their lines unchanged). */
  shiftEntrySeqs(runId: string, fromSeq: number, offset: number): Promise<void>;
  replaceRawPayload(hash: string, json: string): Promise<void>;
  /** Sets the entry count of the segment holding entry `seq` (its lines unchanged). */
  miscountSegment(runId: string, seq: number, entryCount: number): Promise<void>;
  recordMigration(name: string): Promise<void>;
  /**
   * Replaces `search` by `replacement` in the run's stored checkpoints (`C`) or tool results (`T`), as an edit of the
   * database with SQL would; returns how many records changed.
   */
  editRecords(runId: string, tag: "C" | "T", search: string, replacement: string): Promise<number>;
  /** Sets a column of the run's row. */
  setRunColumn(
    runId: string,
    column: "tenant_id" | "correlation_id" | "status",
    value: string | null,
  ): Promise<void>;
}

export interface StoreUnderTest {
  readonly store: RunStore;
  readonly environment: TestEnvironment;
  readonly location: StoreLocation;
  readonly tamper: StoreTampering;
  /** Opens another store over the same database (the first one stays open). */
  reopen(): Promise<RunStore>;
  /** Closes every store opened here and removes the database. */
  dispose(): Promise<void>;
}

/** Makes an empty store over a fresh database, with its own deterministic clock. */
export type RunStoreFactory = () => Promise<StoreUnderTest>;

export const startOfTime = Date.UTC(2026, 0, 1);

/**
 * A run's hash chain written through the real transcript into memory, from which batches are cut by hand:
 * tests decide what each commit holds, including batches that must fail.
 */
export interface RunDraft {
  readonly runId: string;
  readonly contract: ExecutionContract;
  readonly transcript: HashChainTranscript;
  readonly memory: InMemoryTranscriptWriter;
  /** Appends the five entries of a turn (INFER with raw payloads ... COMMIT); returns the COMMIT seq. */
  appendTurn(turn: number, options?: TurnOptions): number;
  /** Entries and raw payloads appended since the previous call. */
  take(): { entries: StoredEntryInput[]; rawPayloads: RawPayloadInput[] };
  /** A batch of everything appended since the previous take, with a checkpoint on the given COMMIT. */
  batch(commitSeq: number, extra?: Partial<CommitBatch>): CommitBatch;
}

export interface TurnOptions {
  /** Text placed in the raw request, to share a payload between runs or make it large. */
  readonly requestText?: string;
  /** Text placed in the EXECUTE entry's result, to make an entry large. */
  readonly toolOutput?: string;
}

/** Captures what the in-memory writer gets, and forwards it, so lines and raw payloads can be taken in order. */
function capturingWriter(memory: InMemoryTranscriptWriter) {
  const entries: StoredEntryInput[] = [];
  const raw: RawPayloadInput[] = [];
  const writer: TranscriptWriter = {
    writeHeader: (header) => memory.writeHeader(header),
    writeContract: (contract) => memory.writeContract(contract),
    appendEntry(entry, line) {
      entries.push({ entry, line });
      memory.appendEntry(entry, line);
    },
    writeRaw(hash, json) {
      if (!memory.raw.has(hash)) raw.push({ hash, json });
      memory.writeRaw(hash, json);
    },
    flush: () => memory.flush(),
    close: () => memory.close(),
  };
  return { writer, entries, raw };
}

export function draftRun(environment: TestEnvironment, runId: string): RunDraft {
  const contract = storeTestContract();
  const memory = createInMemoryTranscriptWriter({ keepLines: true });
  const capture = capturingWriter(memory);
  const transcript = createHashChainTranscript({
    runId,
    contractHash: contract.contract_hash,
    adapterVersion: contract.adapter_version,
    modelProfileId: contract.model_profile_id,
    redactor: new SecretRedactor(),
    writer: capture.writer,
    environment,
  });
  transcript.writeContract(contract);
  let takenEntries = 0;
  let takenRaw = 0;

  const draft: RunDraft = {
    runId,
    contract,
    transcript,
    memory,
    appendTurn(turn, options = {}) {
      appendTurnEntries(transcript, environment, turn, options);
      return transcript.entryCount - 1;
    },
    take() {
      const entries = capture.entries.slice(takenEntries);
      const rawPayloads = capture.raw.slice(takenRaw);
      takenEntries = capture.entries.length;
      takenRaw = capture.raw.length;
      return { entries, rawPayloads };
    },
    batch(commitSeq, extra = {}) {
      const { entries, rawPayloads } = draft.take();
      const turn = entries.find((stored) => stored.entry.seq === commitSeq)?.entry.turn ?? 0;
      return {
        runId,
        entries,
        rawPayloads,
        checkpoint: { seq: commitSeq, document: checkpointDocument(turn, commitSeq) },
        accounting: turnAccounting(runId, turn, environment.now()),
        toolResults: [turnToolResult(turn)],
        totals: {
          turns: turn,
          tokensIn: 100 * turn,
          tokensOut: 20 * turn,
          costUsd: 0.001 * turn,
          toolsUsed: ["lookup"],
        },
        ...extra,
      };
    },
  };
  return draft;
}

/** The five transitions of a tool-using turn, as the session records them (shapes simplified). */
export function appendTurnEntries(
  transcript: HashChainTranscript,
  environment: TestEnvironment,
  turn: number,
  options: TurnOptions = {},
): void {
  const rawRequestHash = transcript.storeRaw({
    messages: [{ role: "user", content: options.requestText ?? `question of turn ${turn}` }],
    model: "scripted",
  });
  const rawResponseHash = transcript.storeRaw({
    choices: [{ message: { tool_calls: [{ id: `call-${turn}`, name: "lookup" }] } }],
    id: `${transcript.header.run_id}-response-${turn}`,
  });
  const at = (
    step: string,
    state: Parameters<HashChainTranscript["append"]>[0]["state"],
    action: unknown,
    result: unknown,
  ) => {
    environment.advance(5);
    transcript.append({
      state,
      step_id: `turn-${turn}/${step}`,
      turn,
      timestamp: environment.now(),
      action,
      result,
      model_fingerprint: state === "INFER" ? "local/scripted" : null,
    });
  };
  at(
    "infer",
    "INFER",
    { raw_request_hash: rawRequestHash, attempt: 1 },
    { raw_response_hash: rawResponseHash },
  );
  at("validate_calls", "VALIDATE_CALLS", { calls: [`call-${turn}`] }, { accepted: 1 });
  at(
    "execute",
    "EXECUTE",
    { call_id: `call-${turn}`, tool: "lookup" },
    { output: options.toolOutput ?? `value ${turn}` },
  );
  at("observe", "OBSERVE", { messages: 1 }, { ctx_tokens: 120 * turn });
  at("commit", "COMMIT", { predicates: "next_turn" }, { next: "INFER", émoji: "✓ ünïcode" });
}

export function checkpointDocument(turn: number, seq: number) {
  return {
    v: 1,
    step_index: turn,
    completed_step_id: `turn-${turn}/commit`,
    covers_seq: seq,
    conversation: [
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "Do the task — «quoted» \u2028 line separator" },
    ],
    counters: { turn, tokens: 120 * turn, executed_tools: turn },
    context: { forced_final_turn: false, nested: { list: [1, 2.5, null, true] } },
  };
}

export function turnAccounting(runId: string, turn: number, timestamp: number): AccountingEntry[] {
  return [
    {
      type: "llm",
      provider: "local",
      model: "scripted",
      status: "ok",
      latency: 12,
      tokens: { input: 100, output: 20 },
      timestamp,
      agentId: "store-test-agent",
      callPath: "store-test-agent",
      txnId: `${runId}-txn`,
      turn,
      attempt: 1,
    },
    {
      type: "tool",
      mcpServer: "test",
      command: "lookup",
      status: "ok",
      latency: 3,
      timestamp,
      charactersIn: 10,
      charactersOut: 12,
      agentId: "store-test-agent",
      callPath: "store-test-agent",
      txnId: `${runId}-txn`,
      turn,
      callId: `call-${turn}`,
    },
  ];
}

export function turnToolResult(turn: number) {
  const requestArguments = { key: `k${turn}` };
  return {
    turn,
    callId: `call-${turn}`,
    toolName: "test__lookup",
    server: "test",
    requestHash: toolRequestHash({ server: "test", tool: "lookup", arguments: requestArguments }),
    status: "ok",
    errorCode: null,
    result: { content: `value ${turn}`, executed: true },
  };
}

/** Stores a new run for a draft (header and contract), as the store-backed writer would. */
export function createDraftedRun(
  store: RunStore,
  draft: RunDraft,
  extra: { tenantId?: string; agentId?: string } = {},
) {
  // A run of a tenant is stored through that tenant's view: a store writes its own tenant's runs only.
  return (extra.tenantId === undefined ? store : store.forTenant(extra.tenantId)).createRun({
    header: draft.memory.header!,
    contract: draft.contract,
    agentId: extra.agentId ?? "store-test-agent",
  });
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Every item of a paged read, in order. */
export async function collectPages<T>(pages: AsyncIterable<readonly T[]>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages) items.push(...page);
  return items;
}

export function newTestEnvironment(): TestEnvironment {
  return deterministicEnvironment({ start: startOfTime });
}
