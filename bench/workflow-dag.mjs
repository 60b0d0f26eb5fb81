// The workflow engine's own overhead per step (`npm run bench`, last section; `npm run bench:workflow` alone): the
// same 100-step DAG (10 levels of 10 steps, each step depending on the whole level before, maxConcurrency 10) in
// Charter's engine, in Mastra's workflows and in a LangGraph.js StateGraph (bench/workflow/peer-dags.mjs, loaded
// from the peers' harness's installed packages), and in a hand-written loop, rounds interleaved.
//
// Every engine runs the same scripted step (a model's one answer, given at once), so what a DAG costs per step is
// the engine's. Charter's engine does all it does for a real workflow: the workflow run stored in a durable SQLite
// run store, its hash-chained transcript (each step's start and end) and a checkpoint committed with each batch of
// starts and ends. A second Charter row runs each step as a one-turn agent run stored in the same store (the issue's
// "one-turn scripted agents"), beside the same 100 runs in the same level shape without the engine: the difference is
// the engine's overhead with real runs.
//
//   npm run build && node --expose-gc bench/workflow-dag.mjs       # ROUNDS=3 SECONDS=1 by default, ~1 min
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBenchScenario } from "./bench-scenario.mjs";
import * as peers from "./workflow/peer-dags.mjs";

const dist = new URL("../dist/", import.meta.url);
const load = (file) => import(new URL(file, dist).href);
const [
  { systemEnvironment },
  { SecretRedactor },
  { openRunStore },
  { currentRunOwner },
  { loadWorkflowFile },
  { buildWorkflowContract },
  { createWorkflowRecorder },
  { executeWorkflow },
  { stepResultFromAgentResult },
] = await Promise.all([
  load("foundation/environment.js"),
  load("foundation/secret-redactor.js"),
  load("store/open-run-store.js"),
  load("runner/run-owner.js"),
  load("workflow/load-workflow-file.js"),
  load("workflow/workflow-contract.js"),
  load("workflow/workflow-recorder.js"),
  load("workflow/execute-workflow.js"),
  load("workflow/step-run-result.js"),
]);
const { defineEcho, prepareBenchAgent, runDurableSession } = await loadBenchScenario(dist);

const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 1);
const { levels, stepsPerLevel, stepCount } = peers;
const directory = await mkdtemp(join(tmpdir(), "charter-workflow-bench-"));

// The DAG as a workflow file, as a user would write it.
const lines = ["id: dag", `maxConcurrency: ${stepsPerLevel}`, "steps:"];
for (let level = 0; level < levels; level++) {
  for (let index = 0; index < stepsPerLevel; index++) {
    lines.push(`  - id: s${level}_${index}`, "    agent: bench", '    prompt: "step"');
    if (level > 0) {
      const before = Array.from({ length: stepsPerLevel }, (_, other) => `s${level - 1}_${other}`);
      lines.push(`    dependsOn: [${before.join(", ")}]`);
    }
  }
}
const workflowPath = join(directory, "dag.workflow.yaml");
await writeFile(workflowPath, `${lines.join("\n")}\n`);
const loaded = await loadWorkflowFile(workflowPath);
const store = await openRunStore({ path: join(directory, "runs.db"), environment: systemEnvironment });
const agent = prepareBenchAgent(defineEcho({ readOnlyHint: true }));
const zeroTotals = { turns: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, toolsUsed: [] };

/** Charter's engine over the store; `runStep` is what each agent step does. */
function charterDag(runStep) {
  return async () => {
    const workflowRunId = systemEnvironment.newId("run");
    const recorder = await createWorkflowRecorder({
      store,
      runId: workflowRunId,
      contract: buildWorkflowContract(loaded, systemEnvironment),
      redactor: new SecretRedactor(),
      environment: systemEnvironment,
      create: { tenantId: null, correlationId: null, owner: currentRunOwner() },
    });
    let ran = 0;
    const executor = {
      async runAgent(request) {
        ran++;
        return runStep(request);
      },
      continueAgent: () => Promise.reject(new Error("nothing to continue in the benchmark")),
      runTool: () => Promise.reject(new Error("no tool steps in the benchmark")),
    };
    const result = await executeWorkflow({
      definition: loaded.definition,
      workflowRunId,
      input: {},
      store,
      recorder,
      executor,
      environment: systemEnvironment,
    });
    if (result.status !== "completed") throw new Error(`charter DAG ended ${result.status}`);
    return ran;
  };
}

const scriptedStepRun = async (request) => {
  const { text } = await peers.scriptedStep(request.runId);
  return {
    runId: request.runId,
    status: "completed",
    outcome: "COMPLETED_CHAT_ONLY",
    report: text,
    error: null,
    contractHash: agent.contract.contract_hash,
    headHash: agent.contract.contract_hash,
    entryCount: 0,
    totals: zeroTotals,
  };
};
const oneTurnRun = async () =>
  stepResultFromAgentResult((await runDurableSession(store, agent, 1, {})).result);

const engines = [
  { name: "bare loop", run: await peers.bare.create() },
  { name: "mastra", run: await peers.mastra.create() },
  { name: "langgraph", run: await peers.langgraph.create() },
  { name: "charter", run: charterDag(scriptedStepRun) },
  { name: "charter, agent steps", run: charterDag(oneTurnRun) },
  {
    // The same 100 one-turn runs in the same shape (10 at once, level after level), without the engine.
    name: "agent runs alone",
    run: async () => {
      for (let level = 0; level < levels; level++) {
        await Promise.all(Array.from({ length: stepsPerLevel }, () => oneTurnRun()));
      }
      return stepCount;
    },
  },
];

/** Microseconds per step: whole DAGs for at least `seconds` (after one warm-up DAG), total time / steps run. */
async function measure(engine) {
  if ((await engine.run()) !== stepCount)
    throw new Error(`${engine.name}: a DAG did not run ${stepCount} steps`);
  globalThis.gc?.();
  const start = performance.now();
  let dags = 0;
  while (performance.now() - start < seconds * 1000) {
    const ran = await engine.run();
    if (ran !== stepCount) throw new Error(`${engine.name}: a DAG ran ${ran} steps, not ${stepCount}`);
    dags++;
  }
  return ((performance.now() - start) * 1000) / (dags * stepCount);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = new Map(engines.map((engine) => [engine.name, []]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const engine of engines) figures.get(engine.name).push(await measure(engine));
    console.log(
      `round ${round}: ${engines.map((engine) => `${engine.name} ${figures.get(engine.name).at(-1).toFixed(1)}`).join(", ")} µs/step`,
    );
  }
} finally {
  await store.close();
  await rm(directory, { recursive: true, force: true });
}
const at = (name) => median(figures.get(name));
const engineOverhead = (name) => at(name) - at("bare loop");
const fasterPeer = Math.min(engineOverhead("mastra"), engineOverhead("langgraph"));
const withAgents = at("charter, agent steps") - at("agent runs alone");
console.log(
  `workflow engine overhead per step (median of ${rounds} rounds, above the bare loop's ${at("bare loop").toFixed(1)} µs):`,
);
for (const name of ["mastra", "langgraph", "charter"]) {
  console.log(`  ${name.padEnd(10)} ${engineOverhead(name).toFixed(1).padStart(8)} µs`);
}
console.log(
  `  charter with one-turn agent steps: ${withAgents.toFixed(1)} µs above the same runs without the engine (${at("agent runs alone").toFixed(1)} µs per run)`,
);
console.log(
  `faster peer / charter: ${(fasterPeer / engineOverhead("charter")).toFixed(2)} x (target >= 5); with agent steps ${(fasterPeer / withAgents).toFixed(2)} x`,
);
