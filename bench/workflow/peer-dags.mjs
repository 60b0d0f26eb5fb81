// The same 100-step DAG (10 levels of 10 steps; every step of a level depends on every step of the level before;
// at most 10 steps at once) in the peers' workflow engines, each step the same scripted step: one answer of a
// scripted model that answers at once (a plain async function, no framework model code). What a run costs per
// step above that is the engine's own overhead. Loaded from the shared harness's installed packages
// (BENCH_PEERS_DIR, default /work/shared/bench-peers), so nothing here is a dependency of Charter.
//
// Each export builds a runner once (`create()`) and returns `run(index)`, which runs the whole DAG once and
// resolves the number of steps that ran (checked by the caller).
import { createRequire } from "node:module";
import { join } from "node:path";

export const levels = 10;
export const stepsPerLevel = 10;
export const stepCount = levels * stepsPerLevel;
const harness = process.env.BENCH_PEERS_DIR ?? "/work/shared/bench-peers";
const requireFromHarness = createRequire(join(harness, "package.json"));
const importFromHarness = (specifier) => import(requireFromHarness.resolve(specifier));

/** The scripted step every engine runs: the model's one answer, given at once. */
export async function scriptedStep(stepId) {
  await null;
  return { stepId, text: "done" };
}

const stepIds = [];
for (let level = 0; level < levels; level++) {
  const row = [];
  for (let index = 0; index < stepsPerLevel; index++) row.push(`s${level}_${index}`);
  stepIds.push(row);
}

/** A hand-written DAG loop: each level's steps with Promise.all, the baseline of what a DAG costs. */
export const bare = {
  name: "bare",
  async create() {
    return async () => {
      let ran = 0;
      const outputs = {};
      for (const row of stepIds) {
        const results = await Promise.all(row.map((id) => scriptedStep(id)));
        for (const result of results) outputs[result.stepId] = result.text;
        ran += results.length;
      }
      return ran;
    };
  },
};

/** Mastra 1.x workflows: createStep x 100, ten `.parallel([...])` levels, `commit()`, `createRun().start()`. */
export const mastra = {
  name: "mastra",
  async create() {
    const { createWorkflow, createStep } = await importFromHarness("@mastra/core/workflows");
    const { z } = await importFromHarness("zod");
    const anything = z.any();
    let ran = 0;
    let workflow = createWorkflow({ id: "dag", inputSchema: anything, outputSchema: anything });
    for (const row of stepIds) {
      workflow = workflow.parallel(
        row.map((id) =>
          createStep({
            id,
            inputSchema: anything,
            outputSchema: anything,
            execute: async () => {
              ran++;
              return (await scriptedStep(id)).text;
            },
          }),
        ),
      );
    }
    const committed = workflow.commit();
    return async () => {
      ran = 0;
      const run = await committed.createRun();
      const result = await run.start({ inputData: {} });
      if (result.status !== "success") throw new Error(`mastra DAG ended ${result.status}`);
      return ran;
    };
  },
};

/** LangGraph.js: a StateGraph of 100 nodes; each node of a level has an edge from the whole level before. */
export const langgraph = {
  name: "langgraph",
  async create() {
    const { StateGraph, Annotation, START, END } = await importFromHarness("@langchain/langgraph");
    const State = Annotation.Root({
      outputs: Annotation({ reducer: (left, right) => ({ ...left, ...right }), default: () => ({}) }),
    });
    let ran = 0;
    const graph = new StateGraph(State);
    for (const row of stepIds) {
      for (const id of row) {
        graph.addNode(id, async () => {
          ran++;
          return { outputs: { [id]: (await scriptedStep(id)).text } };
        });
      }
    }
    stepIds.forEach((row, level) => {
      for (const id of row) graph.addEdge(level === 0 ? START : stepIds[level - 1], id);
    });
    for (const id of stepIds[levels - 1]) graph.addEdge(id, END);
    const compiled = graph.compile();
    return async () => {
      ran = 0;
      const state = await compiled.invoke({}, { recursionLimit: 100, maxConcurrency: stepsPerLevel });
      if (Object.keys(state.outputs).length !== stepCount) throw new Error("langgraph DAG lost outputs");
      return ran;
    };
  },
};
