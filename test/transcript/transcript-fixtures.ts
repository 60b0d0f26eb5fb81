import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computeContractHash } from "../../src/contract/contract-hash.js";
import {
  contractSchemaVersion,
  type ExecutionContract,
  type ExecutionContractContent,
  executionContractSchema,
} from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import type { TranscriptEntryInput } from "../../src/session/transcript-sink.js";
import {
  createHashChainTranscript,
  type HashChainTranscript,
} from "../../src/transcript/hash-chain-transcript.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import type { TranscriptWriter } from "../../src/transcript/transcript-writer.js";

/** A complete, schema-valid execution contract with its real hash. */
export function contractFixture(overrides: Partial<ExecutionContractContent> = {}): ExecutionContract {
  const content: ExecutionContractContent = {
    schema_version: contractSchemaVersion,
    parent_contract_hash: null,
    model_profile_id: "openai-compatible/default",
    agent_id: "transcript-test-agent",
    system_prompt: "You are a careful assistant.",
    tool_policy: "optional",
    allowed_tools: null,
    strict_mode: true,
    max_inferences: 5,
    max_tokens_consumed: null,
    max_format_retries: 1,
    max_retries: 3,
    max_tool_calls_per_turn: 4,
    step_timeout_ms: null,
    total_timeout_ms: null,
    tool_timeout_ms: 30_000,
    context_budget: {
      context_window: 128_000,
      context_window_buffer_tokens: 256,
      max_output_tokens: 4_096,
      reserved_system: 1_000,
      reserved_synthesis: 2_000,
      force_synthesis_at_ratio: null,
    },
    tool_output_budget: {
      max_bytes_per_call: 65_536,
      truncation_marker: "[truncated]",
      summarizer_model: null,
    },
    adapter_version: "adapter-1",
    grammar_profile: null,
    grammar: null,
    logits_mask: null,
    token_gate: false,
    speculative_exec: false,
    cycle_forbid: [],
    model_targets: [
      {
        provider: "local",
        model: "scripted",
        context_window: 128_000,
        context_window_buffer_tokens: 256,
        tokenizer: null,
        request_parameters: {
          temperature: 0,
          top_p: null,
          top_k: null,
          max_output_tokens: null,
          frequency_penalty: null,
          presence_penalty: null,
          seed: null,
          stop_sequences: null,
          reasoning: null,
          reasoning_tokens: null,
        },
      },
    ],
    request_parameters: {
      temperature: 0,
      top_p: null,
      top_k: null,
      max_output_tokens: null,
      frequency_penalty: null,
      presence_penalty: null,
      seed: null,
      stop_sequences: null,
      reasoning: null,
      reasoning_tokens: null,
    },
    stream: false,
    output: { format: "text", schema: null },
    tool_manifest: [],
    decisions: { tool_policy: "default" },
    ...overrides,
  };
  const contract = {
    ...content,
    contract_id: "contract_0001",
    contract_hash: computeContractHash(content),
    created_at: "2026-01-01T00:00:00.000Z",
  };
  return executionContractSchema.parse(contract);
}

export async function temporaryDirectory(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "charter-transcript-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export function entryInput(
  index: number,
  overrides: Partial<TranscriptEntryInput> = {},
): TranscriptEntryInput {
  return {
    state: "EXECUTE",
    step_id: `turn-${index}/execute`,
    turn: index,
    timestamp: Date.UTC(2026, 0, 1) + index * 1_000,
    action: { tool: "read_file", arguments: { path: `/workspace/file-${index}.txt` } },
    result: { status: "ok", output: `contents of file ${index}` },
    model_fingerprint: "local/scripted",
    ...overrides,
  };
}

export interface TranscriptRun {
  readonly contract: ExecutionContract;
  readonly transcript: HashChainTranscript;
  readonly redactor: SecretRedactor;
}

/** A transcript over the fixture contract; the contract is written when the writer persists. */
export function startTranscript(
  options: {
    writer?: TranscriptWriter;
    redactor?: SecretRedactor;
    runId?: string;
    keepEntries?: boolean;
  } = {},
): TranscriptRun {
  const contract = contractFixture();
  const redactor = options.redactor ?? new SecretRedactor();
  const transcript = createHashChainTranscript({
    runId: options.runId ?? "run_0001",
    contractHash: contract.contract_hash,
    adapterVersion: contract.adapter_version,
    modelProfileId: contract.model_profile_id,
    redactor,
    environment: deterministicEnvironment(),
    ...(options.writer === undefined ? {} : { writer: options.writer }),
    ...(options.keepEntries === undefined ? {} : { keepEntries: options.keepEntries }),
  });
  transcript.writeContract(contract);
  return { contract, transcript, redactor };
}

/**
 * Writes a complete run directory: `count` entries, the even ones referencing a raw request and response.
 * Returns the transcript (closed) and the raw hashes by entry.
 */
export async function writeRunDirectory(
  runDirectory: string,
  count: number,
  redactor?: SecretRedactor,
): Promise<{
  transcript: HashChainTranscript;
  rawHashes: Map<number, { request: string; response: string }>;
}> {
  const { transcript } = startTranscript({
    writer: createJsonlTranscriptWriter(runDirectory),
    ...(redactor === undefined ? {} : { redactor }),
  });
  const rawHashes = new Map<number, { request: string; response: string }>();
  for (let index = 0; index < count; index++) {
    if (index % 2 === 0) {
      const request = transcript.storeRaw({
        model: "scripted",
        messages: [{ role: "user", content: `ask ${index}` }],
      });
      const response = transcript.storeRaw({
        choices: [{ message: { role: "assistant", content: `answer ${index}` } }],
      });
      rawHashes.set(index, { request, response });
      transcript.append(
        entryInput(index, {
          state: "INFER",
          step_id: `turn-${index}/infer`,
          action: { raw_request_hash: request, target: "local/scripted" },
          result: { raw_response_hash: response, status: "native" },
        }),
      );
    } else {
      transcript.append(entryInput(index));
    }
  }
  await transcript.close();
  return { transcript, rawHashes };
}
