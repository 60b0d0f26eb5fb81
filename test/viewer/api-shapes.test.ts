import { describe, expect, it } from "vitest";
import type { runView } from "../../src/server/http/run-view.js";
import type { workItemRunView } from "../../src/server/http/work-item-run-view.js";
import type { RunTimeline } from "../../src/server/inspection/run-timeline.js";
import type { RunStatistics } from "../../src/server/stats/run-statistics.js";
import type {
  RunView,
  StatisticsFiguresView,
  TimelineView,
  WorkItemRunView,
} from "../../src/viewer/api-types.js";

// The viewer declares the API's JSON shapes itself (it compiles for the browser, without the server's Node
// types). These assignments hold the server's answers to those declarations: `npm run typecheck` fails when the
// server's shapes drift from what the page reads.
const runShape = (run: ReturnType<typeof runView>): RunView => run;
const timelineShape = (timeline: RunTimeline): TimelineView => timeline;
const figuresShape = (statistics: RunStatistics): StatisticsFiguresView => statistics;
const workItemShape = (run: ReturnType<typeof workItemRunView>): WorkItemRunView => run;
// workflowRunView builds part of its answer as a Record<string, unknown>, so its type says too little to compare.

describe("the viewer's declarations of the API's shapes", () => {
  it("accept what the server answers (checked by the compiler)", () => {
    expect(
      [runShape, timelineShape, figuresShape, workItemShape].every((check) => typeof check === "function"),
    ).toBe(true);
  });
});
