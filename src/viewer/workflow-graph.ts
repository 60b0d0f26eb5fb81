import type { WorkflowStepView } from "./api-types.js";

const svgNamespace = "http://www.w3.org/2000/svg";
const nodeWidth = 170;
const nodeHeight = 52;
const columnGap = 60;
const rowGap = 18;

function svg<Tag extends keyof SVGElementTagNameMap>(
  tag: Tag,
  attributes: Readonly<Record<string, string | number>>,
  text?: string,
): SVGElementTagNameMap[Tag] {
  const made = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = text;
  return made;
}

/**
 * A workflow's steps as a graph, left to right: each step in the column after the deepest step it depends on, an
 * arrow from each dependency, its status in words under its id, and a link to the step's run when it has one.
 */
export function workflowGraph(steps: readonly WorkflowStepView[], title: string): SVGSVGElement {
  const depth = new Map<string, number>();
  const depthOf = (step: WorkflowStepView, seen: Set<string>): number => {
    const known = depth.get(step.id);
    if (known !== undefined) return known;
    if (seen.has(step.id)) return 0;
    seen.add(step.id);
    const parents = (step.dependsOn ?? [])
      .map((id) => steps.find((candidate) => candidate.id === id))
      .filter((parent): parent is WorkflowStepView => parent !== undefined);
    const value = parents.length === 0 ? 0 : 1 + Math.max(...parents.map((parent) => depthOf(parent, seen)));
    depth.set(step.id, value);
    return value;
  };
  for (const step of steps) depthOf(step, new Set());
  const rows = new Map<number, number>();
  const position = new Map<string, { x: number; y: number }>();
  for (const step of steps) {
    const column = depth.get(step.id) ?? 0;
    const row = rows.get(column) ?? 0;
    rows.set(column, row + 1);
    position.set(step.id, { x: 10 + column * (nodeWidth + columnGap), y: 10 + row * (nodeHeight + rowGap) });
  }
  const columns = Math.max(1, ...[...rows.keys()].map((column) => column + 1));
  const height = 20 + Math.max(1, ...rows.values()) * (nodeHeight + rowGap);
  const width = 20 + columns * (nodeWidth + columnGap) - columnGap;
  const graph = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    class: "workflow-graph",
    role: "img",
    "aria-label": title,
  });
  const defs = svg("defs", {});
  const marker = svg("marker", {
    id: "arrow",
    viewBox: "0 0 10 10",
    refX: 10,
    refY: 5,
    markerWidth: 8,
    markerHeight: 8,
    orient: "auto",
  });
  marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-head" }));
  defs.appendChild(marker);
  graph.appendChild(defs);
  for (const step of steps) {
    const to = position.get(step.id);
    for (const dependency of step.dependsOn ?? []) {
      const from = position.get(dependency);
      if (from === undefined || to === undefined) continue;
      graph.appendChild(
        svg("line", {
          x1: from.x + nodeWidth,
          y1: from.y + nodeHeight / 2,
          x2: to.x,
          y2: to.y + nodeHeight / 2,
          class: "edge",
          "marker-end": "url(#arrow)",
        }),
      );
    }
  }
  for (const step of steps) {
    const at = position.get(step.id) as { x: number; y: number };
    const node = svg("g", {
      class: `node status-${step.status.replaceAll("_", "-")}`,
      "data-step-id": step.id,
    });
    node.appendChild(svg("rect", { x: at.x, y: at.y, width: nodeWidth, height: nodeHeight, rx: 6 }));
    node.appendChild(svg("text", { x: at.x + 10, y: at.y + 21, class: "node-title" }, step.id));
    node.appendChild(
      svg(
        "text",
        { x: at.x + 10, y: at.y + 40, class: "node-status" },
        `${step.status.replaceAll("_", " ")} · ${step.agent ?? step.tool ?? step.kind ?? "step"}`,
      ),
    );
    if (step.runId !== null) {
      const link = svg("a", { href: `#/runs/${encodeURIComponent(step.runId)}` });
      link.appendChild(svg("title", {}, `Step ${step.id}: open its run ${step.runId}`));
      link.appendChild(node);
      graph.appendChild(link);
    } else graph.appendChild(node);
  }
  return graph;
}
