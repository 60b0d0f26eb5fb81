// The bench scenario, shared by `npm run bench` (bench/run.mjs) and bench/durable-in-process.mjs, over the Charter
// build in a given dist directory (the latter loads several builds into one process).
//
// A session is T turns (the peers' harness scenario): on turns 1..T-1 the model calls `echo`, on turn T it answers
// "done". The model is in process and answers at once, and works out the turn from the history it is sent (tool
// results so far + 1) and T from the first user message, so one prepared agent serves every session.

/** Loads the scenario over the build whose compiled modules are under `distDirectory` (a file URL ending in /). */
export async function loadBenchScenario(distDirectory) {
  const load = (file) => import(new URL(file, distDirectory).href);
  const [
    { systemEnvironment },
    { createDurableRunHooks },
    { prepareAgent },
    { createStoreTranscriptWriter },
    { createStrictScriptedModel },
    { defineFunctionTool },
  ] = await Promise.all([
    load("foundation/environment.js"),
    load("runner/durable-run-hooks.js"),
    load("runner/prepare-agent.js"),
    load("store/store-transcript-writer.js"),
    load("testing/strict-scripted-model.js"),
    load("tools/define-function-tool.js"),
  ]);

  const prompt = (turns) => `session turns ${turns}: start`;

  function scriptedStep(turn, turns) {
    return turn < turns
      ? {
          kind: "tool_calls",
          calls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `hello ${turn}` } }],
          usage: { prompt_tokens: 120 + 28 * turn, completion_tokens: 17 },
        }
      : { kind: "text", text: "done", usage: { prompt_tokens: 120 + 28 * turn, completion_tokens: 2 } };
  }

  // The echo has no side effect and says so (`readOnlyHint`): a durable turn calling it is one transaction.
  // `defineEcho(null)` is an echo without the hint (a tool of unknown class, recorded before it runs).
  const defineEcho = (annotations) =>
    defineFunctionTool({
      name: "echo",
      description: "Echoes its text.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
        additionalProperties: false,
      },
      ...(annotations === null ? {} : { annotations }),
      async execute(input) {
        return String(input.text);
      },
    });

  const model = createStrictScriptedModel({
    provider: "bench",
    model: "scripted",
    recordRequests: false,
    respond: (request) => {
      const turns = Number(/turns (\d+)/.exec(request.messages[1].content)[1]);
      let turn = 1;
      for (const message of request.messages) if (message.role === "tool") turn++;
      return scriptedStep(turn, turns);
    },
  });

  const prepareBenchAgent = (tool) =>
    prepareAgent({
      agent: {
        id: "bench",
        systemPrompt: "You are a benchmark agent.",
        settings: { maxTurns: 60, toolPolicy: "optional" },
      },
      targets: [{ provider: "bench", model: "scripted", contextWindow: 1_000_000 }],
      models: [model],
      tools: [tool],
    });

  function checkResult(result, turns) {
    if (!result.success || result.turns !== turns || result.finalReport?.content !== "done") {
      throw new Error(`bench session failed: ${result.outcome} after ${result.turns} turns`);
    }
  }

  /**
   * One durable session of `agent` in `store`, wired as the CLI wires a run (src/runner/run-agent.ts,
   * runLoadedAgent) minus the JSONL run directory and the approval guard: a store transcript writer, a checkpoint
   * (with the entries it covers) committed in one transaction at every continuing COMMIT, before the next
   * inference starts, and before tools execute unless every call of the turn may run again (the read-only echo's
   * turns are one transaction); each tool result stored before the next call starts or with the checkpoint that
   * follows it (see docs/durable-runs.md); the run's end recorded before the transcript closes. It resolves only
   * once all of it is committed, with the run's id and the session's checked result.
   */
  async function runDurableSession(store, agent, turns, invocation) {
    const runId = systemEnvironment.newId("run");
    const writer = createStoreTranscriptWriter({ store, agentId: "bench" });
    const hooks = createDurableRunHooks({
      store,
      writer,
      runId,
      invocation,
      tools: { manifest: agent.contract.tool_manifest },
    });
    const { result } = await agent.run({
      prompt: prompt(turns),
      runId,
      transcriptWriter: writer,
      checkpoint: hooks.checkpoint,
      wrapToolExecutor: hooks.wrapToolExecutor,
      beforeClose: hooks.finish,
    });
    checkResult(result, turns);
    return { runId, result };
  }

  return { prompt, scriptedStep, defineEcho, prepareBenchAgent, checkResult, runDurableSession };
}
