import type { FastifyPluginAsync } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import { errorCodes } from "../../foundation/error-codes.js";
import type { FinalReport } from "../../session/final-report.js";
import type { StoredRunEvent } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import type { RunRequest } from "../execution/run-request.js";
import { checkTenantBudgets } from "../limits/tenant-budgets.js";
import { traceContextField } from "../telemetry/trace-context-field.js";
import { checkAgentAllowed } from "./check-agent-allowed.js";
import { correlationIdOf } from "./correlation-id-of.js";
import { type errorResponse, errorResponseOf } from "./error-response.js";
import { openEventStream } from "./event-stream.js";
import { identityOf } from "./request-identity.js";
import { runCallerFields } from "./run-caller-fields.js";
import { dispatcherOf } from "./start-server-run.js";

export interface ChatCompletionRoutesOptions {
  /** `server.budgets`: a tenant whose token or cost budget is spent starts no run (429); default none. */
  readonly budgets?: BudgetsConfiguration;
  readonly store: RunStore;
  readonly dispatcher?: RunDispatcher;
  readonly environment: RuntimeEnvironment;
}

interface ChatMessage {
  readonly role: "user" | "assistant" | "system" | "developer" | "tool";
  readonly content: string | readonly { readonly type: string; readonly text?: string }[] | null;
}

interface ChatCompletionBody {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream?: boolean;
  readonly stream_options?: { readonly include_usage?: boolean };
  readonly metadata?: Record<string, unknown>;
}

/** OpenAI's request fields that Charter accepts and leaves to the agent's contract (its models and limits). */
const ignoredOpenAIFields = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "user",
  "seed",
  "presence_penalty",
  "frequency_penalty",
] as const;

const chatCompletionBody = {
  type: "object",
  additionalProperties: false,
  required: ["model", "messages"],
  properties: {
    model: {
      type: "string",
      pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
      description: "The agent's id in the server's registry, or `auto`.",
    },
    messages: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["role", "content"],
        properties: {
          role: { type: "string", enum: ["user", "assistant", "system", "developer", "tool"] },
          content: {
            anyOf: [
              { type: "string" },
              { type: "null" },
              {
                type: "array",
                items: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
              },
            ],
          },
          name: { type: "string" },
        },
      },
    },
    stream: { type: "boolean", default: false },
    stream_options: { type: "object", properties: { include_usage: { type: "boolean" } } },
    n: { type: "integer", const: 1, description: "One answer per run: only 1." },
    metadata: { type: "object", additionalProperties: true, description: "Kept with the run." },
    ...Object.fromEntries(
      ignoredOpenAIFields.map((field) => [field, { description: "Accepted and ignored." }]),
    ),
  },
} as const;

function invalidMessages(message: string, path: string): CharterError {
  return new CharterError("REQUEST_INVALID", message, {
    details: { location: "body", issues: [{ path, message }] },
  });
}

/** A message's text: a string, or the text parts of a content array (images and audio are refused). */
function textOf(message: ChatMessage, index: number): string {
  if (typeof message.content === "string") return message.content;
  if (message.content === null) return "";
  return message.content
    .map((part, partIndex) => {
      if (part.type === "text" && typeof part.text === "string") return part.text;
      throw invalidMessages(
        `only text content is accepted (messages[${index}].content[${partIndex}] is ${part.type})`,
        `body/messages/${index}/content/${partIndex}`,
      );
    })
    .join("");
}

/**
 * The run the messages ask for: the last message (a user's) is the prompt, every earlier one the exchange it
 * continues. System and developer messages are refused: the agent's instructions are its own definition's, and a
 * caller's text never takes their place; tool messages are refused since the agent's tools are the server's.
 */
export function promptOfMessages(messages: readonly ChatMessage[]): {
  readonly prompt: string;
  readonly earlier: { readonly role: "user" | "assistant"; readonly content: string }[];
} {
  const earlier: { role: "user" | "assistant"; content: string }[] = [];
  messages.forEach((message, index) => {
    if (message.role !== "user" && message.role !== "assistant") {
      throw invalidMessages(
        `messages[${index}] is a ${message.role} message: the agent's instructions are its own, so only user and assistant messages are accepted (put context in a user message)`,
        `body/messages/${index}/role`,
      );
    }
    earlier.push({ role: message.role, content: textOf(message, index) });
  });
  const last = earlier.pop();
  if (last === undefined || last.role !== "user" || last.content.trim() === "") {
    throw invalidMessages(
      "the last message must be a user message with text: it is the task the agent runs",
      `body/messages/${messages.length - 1}`,
    );
  }
  return { prompt: last.content, earlier };
}

/** What a settled run answers: its report's text and its usage, from its final event and its row. */
interface RunAnswer {
  readonly agent: string;
  readonly content: string;
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/**
 * `POST /v1/chat/completions`: an OpenAI-compatible front to runs. `model` names the agent; the messages become the
 * run's prompt and the exchange before it; the answer is the agent's final report, with the run's token usage, and
 * the run id as the completion's `id` (and `x-charter-run-id`). Errors keep the server's shape and add OpenAI's
 * `type` (the failure class) and `param`, so OpenAI clients read them.
 */
export const chatCompletionRoutes: FastifyPluginAsync<ChatCompletionRoutesOptions> = async (app, options) => {
  const { store, environment } = options;
  const closing = new AbortController();
  app.addHook("preClose", async () => closing.abort());

  // Scoped to this plugin: its errors (those of the authentication hook included) carry OpenAI's fields too.
  app.setErrorHandler((error, _request, reply) => {
    const response = errorResponseOf(error);
    const retryAfter = response.body.error.details.retryAfterSeconds;
    if (typeof retryAfter === "number") reply.header("retry-after", String(retryAfter));
    return reply.status(response.status).send(openAIErrorBody(response.body));
  });

  /** Resolves when the run has stopped, or the caller went away (then the run goes on, unwatched). */
  async function waitForRun(signal: AbortSignal, tenantId: string, runId: string): Promise<RunAnswer> {
    await dispatcherOf(options.dispatcher).whenSettled(tenantId, runId, signal);
    const tenantStore = store.forTenant(tenantId);
    const events = await tenantStore.readRunEvents(runId);
    const last: StoredRunEvent | undefined = events.at(-1);
    if (last?.type === "COMPLETED") {
      const run = await tenantStore.getRun(runId);
      const report = run?.finalReport as FinalReport | null | undefined;
      const usage = last.data.token_usage as RunAnswer["usage"] | undefined;
      return {
        agent: run?.agentId ?? "",
        content:
          report?.content ?? (report?.content_json !== undefined ? JSON.stringify(report.content_json) : ""),
        usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      };
    }
    if (last?.type === "FAILED") {
      const failure = (last.data.error ?? {}) as { code?: string; message?: string };
      const code = (errorCodes as readonly string[]).includes(failure.code ?? "")
        ? (failure.code as ErrorCode)
        : "INTERNAL_ERROR";
      throw new CharterError(code, failure.message ?? `run ${runId} failed`, {
        details: { runId, ...(last.data.cancelled === true ? { cancelled: true } : {}) },
      });
    }
    if (signal.aborted)
      throw new CharterError("INTERNAL_ERROR", "the client went away", { details: { runId } });
    // Stopped for a person's decision: the answer is not there yet; the run goes on once it is decided.
    throw new CharterError(
      "RUN_STATE_CONFLICT",
      `run ${runId} waits for a person's approval of a destructive call: decide it with POST /v1/runs/${runId}/approvals, then read the run`,
      { details: { runId, status: "awaiting_approval" } },
    );
  }

  app.post<{ Body: ChatCompletionBody }>(
    "/v1/chat/completions",
    {
      config: { permission: "runs.start" },
      schema: {
        summary: "OpenAI-compatible chat completion: a run of the agent named by `model`",
        description:
          "The last (user) message is the prompt, earlier user and assistant messages the exchange it continues. The answer is the agent's final report; with `stream: true`, `chat.completion.chunk` server-sent events and `data: [DONE]`.",
        tags: ["openai"],
        body: chatCompletionBody,
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const tenantStore = store.forTenant(identity.tenantId);
      const body = request.body;
      const { prompt, earlier } = promptOfMessages(body.messages);
      await checkAgentAllowed(tenantStore, body.model);
      await checkTenantBudgets({
        store,
        tenantId: identity.tenantId,
        environment,
        ...(options.budgets !== undefined ? { serverBudgets: options.budgets } : {}),
      });
      const correlationId = correlationIdOf(request, reply, environment);
      const now = environment.now();
      const runId = environment.newId("run");
      const runRequest: RunRequest = {
        ...runCallerFields(request, runId, correlationId),
        conversationId: null,
        agent: body.model,
        prompt,
        input: null,
        metadata: body.metadata ?? {},
        ...(earlier.length > 0 ? { messages: earlier } : {}),
        requestedAt: now,
        ...traceContextField(request.headers),
      };
      await dispatcherOf(options.dispatcher).dispatch(runRequest);
      reply.header("x-charter-run-id", runId);
      const created = Math.floor(now / 1000);
      if (body.stream !== true) {
        const gone = new AbortController();
        const onClose = () => gone.abort();
        reply.raw.once("close", onClose);
        try {
          const answer = await waitForRun(gone.signal, identity.tenantId, runId);
          return reply.status(200).send({
            id: runId,
            object: "chat.completion",
            created,
            model: answer.agent || body.model,
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: answer.content, refusal: null },
                logprobs: null,
                finish_reason: "stop",
              },
            ],
            usage: answer.usage,
          });
        } finally {
          reply.raw.off("close", onClose);
        }
      }
      const stream = openEventStream(
        reply,
        { "x-charter-run-id": runId, "x-correlation-id": correlationId },
        closing.signal,
      );
      const chunk = (model: string, choices: unknown[], extra: Record<string, unknown> = {}) =>
        stream.send({
          data: JSON.stringify({
            id: runId,
            object: "chat.completion.chunk",
            created,
            model,
            choices,
            ...extra,
          }),
        });
      try {
        await chunk(body.model, [
          { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
        ]);
        const answer = await waitForRun(stream.signal, identity.tenantId, runId);
        const model = answer.agent || body.model;
        // A run's answer is its final report, known when the run ends: it comes as one content chunk.
        await chunk(model, [
          { index: 0, delta: { content: answer.content }, logprobs: null, finish_reason: null },
        ]);
        await chunk(model, [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
        if (body.stream_options?.include_usage === true) await chunk(model, [], { usage: answer.usage });
        await stream.send({ data: "[DONE]" });
      } catch (error) {
        // The headers are sent: the error is an event in OpenAI's form, which OpenAI clients raise.
        await stream.send({ data: JSON.stringify(openAIErrorBody(errorResponseOf(error).body)) });
      } finally {
        stream.end();
      }
    },
  );
};

/** The server's error body with OpenAI's fields added: `type` (the failure class) and `param`. */
export function openAIErrorBody(body: ReturnType<typeof errorResponse>["body"]) {
  return { error: { ...body.error, type: body.error.class, param: null } };
}
