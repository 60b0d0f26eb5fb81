import type { AgentDefinition } from "../config/agent-file.js";
import type { AgentSelectionCandidate } from "../contract/agent-selection-record.js";
import type { AgentRegistry } from "./agent-registry.js";
import { compareIds } from "./agent-registry.js";
import { containsPhrase, normalizeTaskText } from "./normalize-task-text.js";
import { standardAgentId } from "./standard-agent.js";

export type { AgentSelectionCandidate } from "../contract/agent-selection-record.js";

/**
 * The weights of selection, in thousandths of confidence: scores are added as integers, so that the same task and
 * registry give the same confidences on every machine (no floating-point drift from the order of additions).
 */
export const selectionWeights = {
  /** The task, normalised, is one of the agent's `exampleTasks`. */
  exampleTaskExact: 600,
  /** The task contains one of the agent's `exampleTasks` (whole words, normalised). Only the best example counts. */
  exampleTaskContained: 400,
  /** The task is or contains one of the agent's `notForTasks` (counted once, however many match). */
  notForTask: -500,
  /** Each of the agent's `keywords` found in the task (whole words, normalised)... */
  keyword: 150,
  /** ...up to this much in all. */
  keywordsAtMost: 450,
  /** Each distinct significant word of the agent's `description` also in the task... */
  descriptionWord: 50,
  /** ...up to this much in all. */
  descriptionAtMost: 150,
  /** The `standard` agent's confidence when no agent matched the task. */
  fallback: 500,
} as const;

/** Words of a description that say nothing about a task: never counted. Fixed, so selection never changes under you. */
const descriptionStopWords = new Set([
  "about",
  "after",
  "agent",
  "also",
  "answer",
  "answers",
  "before",
  "between",
  "could",
  "does",
  "each",
  "every",
  "from",
  "have",
  "help",
  "helps",
  "into",
  "just",
  "like",
  "make",
  "makes",
  "more",
  "most",
  "much",
  "only",
  "other",
  "over",
  "same",
  "should",
  "some",
  "such",
  "task",
  "tasks",
  "than",
  "that",
  "their",
  "them",
  "then",
  "there",
  "these",
  "they",
  "this",
  "those",
  "through",
  "under",
  "very",
  "what",
  "when",
  "where",
  "which",
  "while",
  "will",
  "with",
  "within",
  "without",
  "would",
  "your",
]);

/** Significant description words are at least this long (shorter ones are mostly articles and prepositions). */
const descriptionWordMinimumLength = 4;

export interface SelectAgentsOptions {
  /** At most this many candidates (default: every candidate). */
  readonly limit?: number;
  /** Agents never to select (the `delegate` tool excludes the delegation chain). */
  readonly exclude?: readonly string[];
}

/**
 * Ranks the registry's enabled agents for a task (seed 003 INV-AGT-SEL-001..006). Deterministic: no randomness and
 * no clock, integer weights, ties broken by agent id. Each enabled agent with at least one signal (an example task,
 * a task it is not for, a keyword, a description word) is a candidate; its confidence is the sum of its signals
 * clamped to [0, 1]. When no candidate has a confidence above 0, the `standard` agent is returned first with 0.5.
 * Results are sorted by confidence, highest first, then by agent id.
 */
export function selectAgents(
  registry: AgentRegistry,
  task: string,
  options: SelectAgentsOptions = {},
): AgentSelectionCandidate[] {
  const normalizedTask = normalizeTaskText(task);
  const excluded = new Set(options.exclude ?? []);
  const candidates: AgentSelectionCandidate[] = [];
  for (const agent of registry.enabled()) {
    if (excluded.has(agent.id)) continue;
    const scored = scoreAgent(agent, normalizedTask);
    if (scored !== null) candidates.push(scored);
  }
  if (!candidates.some((candidate) => candidate.confidence > 0) && !excluded.has(standardAgentId)) {
    const index = candidates.findIndex((candidate) => candidate.agentId === standardAgentId);
    const own = index === -1 ? [] : (candidates.splice(index, 1)[0] as AgentSelectionCandidate).reasons;
    candidates.push({
      agentId: standardAgentId,
      confidence: selectionWeights.fallback / 1000,
      reasons: [
        ...own,
        `no agent matched the task: ${standardAgentId} is the fallback (${signed(selectionWeights.fallback)})`,
      ],
    });
  }
  candidates.sort(
    (left, right) => right.confidence - left.confidence || compareIds(left.agentId, right.agentId),
  );
  return options.limit === undefined ? candidates : candidates.slice(0, options.limit);
}

/** The agent's confidence for a normalised task and why, or null when nothing in its profile touches the task. */
function scoreAgent(agent: AgentDefinition, task: string): AgentSelectionCandidate | null {
  let score = 0;
  const reasons: string[] = [];

  let exact: string | undefined;
  let contained: string | undefined;
  for (const example of agent.profile.exampleTasks) {
    const normalized = normalizeTaskText(example);
    if (normalized === "") continue;
    if (normalized === task) {
      exact = example;
      break;
    }
    if (contained === undefined && containsPhrase(task, normalized)) contained = example;
  }
  if (exact !== undefined) {
    score += selectionWeights.exampleTaskExact;
    reasons.push(`exampleTasks: "${exact}" is the task (${signed(selectionWeights.exampleTaskExact)})`);
  } else if (contained !== undefined) {
    score += selectionWeights.exampleTaskContained;
    reasons.push(
      `exampleTasks: the task contains "${contained}" (${signed(selectionWeights.exampleTaskContained)})`,
    );
  }

  const notFor = agent.profile.notForTasks.find((entry) => containsPhrase(task, normalizeTaskText(entry)));
  if (notFor !== undefined) {
    score += selectionWeights.notForTask;
    reasons.push(`notForTasks: the task contains "${notFor}" (${signed(selectionWeights.notForTask)})`);
  }

  const keywords: string[] = [];
  const seenKeywords = new Set<string>();
  for (const keyword of agent.profile.keywords) {
    const normalized = normalizeTaskText(keyword);
    if (seenKeywords.has(normalized)) continue;
    seenKeywords.add(normalized);
    if (containsPhrase(task, normalized)) keywords.push(keyword);
  }
  if (keywords.length > 0) {
    const added = Math.min(keywords.length * selectionWeights.keyword, selectionWeights.keywordsAtMost);
    score += added;
    reasons.push(`keywords: ${quoted(keywords)} (${signed(added)})`);
  }

  const taskWords = new Set(task.split(" "));
  const shared: string[] = [];
  for (const word of new Set(normalizeTaskText(agent.settings.description ?? "").split(" "))) {
    if (word.length < descriptionWordMinimumLength || descriptionStopWords.has(word)) continue;
    if (taskWords.has(word)) shared.push(word);
  }
  if (shared.length > 0) {
    const added = Math.min(
      shared.length * selectionWeights.descriptionWord,
      selectionWeights.descriptionAtMost,
    );
    score += added;
    reasons.push(`description: shares ${quoted(shared)} (${signed(added)})`);
  }

  if (reasons.length === 0) return null;
  // Confidence stays in [0, 1] (INV-AGT-SEL-002); a score outside it is clamped, and the reasons say so.
  const clamped = Math.max(0, Math.min(1000, score));
  if (clamped !== score) reasons.push(`score ${score / 1000} clamped to ${clamped / 1000}`);
  return { agentId: agent.id, confidence: clamped / 1000, reasons };
}

function signed(thousandths: number): string {
  return `${thousandths < 0 ? "-" : "+"}${Math.abs(thousandths) / 1000}`;
}

function quoted(items: readonly string[]): string {
  return items.map((item) => JSON.stringify(item)).join(", ");
}
