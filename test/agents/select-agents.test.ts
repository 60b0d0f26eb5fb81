import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AgentRegistry } from "../../src/agents/agent-registry.js";
import { type AgentSelectionCandidate, selectAgents } from "../../src/agents/select-agents.js";
import { parseAgentFile } from "../../src/config/agent-file.js";
import { canonicalJson } from "../../src/foundation/canonical-json.js";

interface Profile {
  readonly id: string;
  readonly description?: string;
  readonly keywords?: readonly string[];
  readonly exampleTasks?: readonly string[];
  readonly notForTasks?: readonly string[];
  readonly enabled?: boolean;
}

/** An agent file's text with this profile (JSON is YAML), parsed as the registry reads files. */
function agent(profile: Profile) {
  const { id, ...keys } = profile;
  const frontmatter = Object.entries(keys)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
    .join("\n");
  return parseAgentFile(`---\n${frontmatter}\n---\nI am ${id}.\n`, `/work/agents/${id}.md`);
}

function registryOf(profiles: readonly Profile[]): AgentRegistry {
  const registry = new AgentRegistry("/work");
  for (const profile of profiles) registry.register(agent(profile));
  return registry;
}

const researcher: Profile = {
  id: "researcher",
  description: "Finds and summarises sources on a topic",
  keywords: ["research", "sources", "papers"],
  exampleTasks: ["Find recent papers", "Summarise the sources on a topic"],
  notForTasks: ["write code"],
};
const coder: Profile = {
  id: "coder",
  description: "Writes and fixes code",
  keywords: ["code", "bug", "fix"],
  exampleTasks: ["Fix the failing test"],
};

function confidenceOf(candidates: readonly AgentSelectionCandidate[], id: string): number | undefined {
  return candidates.find((candidate) => candidate.agentId === id)?.confidence;
}

describe("agent selection", () => {
  describe("INV-AGT-SEL-001 selection determinism", () => {
    const words = [
      "find",
      "fix",
      "papers",
      "code",
      "test",
      "the",
      "sources",
      "bug",
      "a",
      "topic",
      "write",
      "Review!",
    ];
    const phrase = fc
      .array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.join(" "));
    const profile = fc.record(
      {
        id: fc.constantFrom("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "standard"),
        description: phrase,
        keywords: fc.array(phrase, { maxLength: 4 }),
        exampleTasks: fc.array(phrase, { maxLength: 3 }),
        notForTasks: fc.array(phrase, { maxLength: 2 }),
        enabled: fc.boolean(),
      },
      { requiredKeys: ["id"] },
    );
    const registryArbitrary = fc.uniqueArray(profile, { selector: (entry) => entry.id, maxLength: 6 });
    const task = fc.oneof(phrase, fc.string({ maxLength: 30 }));

    it("gives the same ranking, byte for byte, for the same task and registry, whatever order the agents were registered in", () => {
      fc.assert(
        fc.property(registryArbitrary, task, fc.infiniteStream(fc.nat()), (profiles, text, keys) => {
          // `standard` disabled is refused by the registry: such draws keep the built-in one.
          const usable = profiles.filter((entry) => !(entry.id === "standard" && entry.enabled === false));
          const first = selectAgents(registryOf(usable), text);
          const again = selectAgents(registryOf(usable), text);
          const shuffledOrder = [...usable]
            .map((entry) => ({ entry, key: keys.next().value as number }))
            .sort((left, right) => left.key - right.key)
            .map(({ entry }) => entry);
          const shuffled = selectAgents(registryOf(shuffledOrder), text);
          expect(canonicalJson(again)).toBe(canonicalJson(first));
          expect(JSON.stringify(shuffled)).toBe(JSON.stringify(first));
          // And what every ranking holds: at least one result, confidences in [0, 1], best first then by id, no
          // disabled agent, the standard fallback exactly when nothing else matched.
          expect(first.length).toBeGreaterThan(0);
          for (const candidate of first) {
            expect(candidate.confidence).toBeGreaterThanOrEqual(0);
            expect(candidate.confidence).toBeLessThanOrEqual(1);
            expect(usable.find((entry) => entry.id === candidate.agentId)?.enabled).not.toBe(false);
          }
          for (let index = 1; index < first.length; index++) {
            const previous = first[index - 1]!;
            const current = first[index]!;
            expect(
              previous.confidence > current.confidence ||
                (previous.confidence === current.confidence && previous.agentId < current.agentId),
            ).toBe(true);
          }
          const isFallback = (candidate: AgentSelectionCandidate) =>
            candidate.reasons.some((reason) => reason.startsWith("no agent matched"));
          const matched = first.some((candidate) => candidate.confidence > 0 && !isFallback(candidate));
          expect(first.filter(isFallback)).toEqual(
            matched ? [] : [expect.objectContaining({ agentId: "standard", confidence: 0.5 })],
          );
          if (!matched) expect(first[0]?.agentId).toBe("standard");
        }),
        { seed: 20260316, numRuns: 300 },
      );
    });
  });

  describe("INV-AGT-SEL-002 confidence range clamping", () => {
    it("clamps a score above 1 to 1 and one below 0 to 0, and says so in the reasons", () => {
      const registry = registryOf([
        {
          id: "everything",
          description: "Reviews pull requests carefully",
          keywords: ["review", "pull", "request", "carefully"],
          exampleTasks: ["review pull request carefully"],
        },
        { id: "never", keywords: ["review"], notForTasks: ["review pull request"] },
      ]);
      const [best, ...others] = selectAgents(registry, "Review pull request carefully");
      // 0.6 (the example is the task) + 0.45 (four keywords, at most 0.45) + 0.1 (two description words) = 1.15
      expect(best).toEqual({
        agentId: "everything",
        confidence: 1,
        reasons: [
          'exampleTasks: "review pull request carefully" is the task (+0.6)',
          'keywords: "review", "pull", "request", "carefully" (+0.45)',
          // Whole words: "reviews" and "requests" are not "review" and "request".
          'description: shares "pull", "carefully" (+0.1)',
          "score 1.15 clamped to 1",
        ],
      });
      // 0.15 (keyword) - 0.5 (not for) = -0.35
      expect(others).toEqual([
        {
          agentId: "never",
          confidence: 0,
          reasons: [
            'notForTasks: the task contains "review pull request" (-0.5)',
            'keywords: "review" (+0.15)',
            "score -0.35 clamped to 0",
          ],
        },
      ]);
    });
  });

  describe("INV-AGT-SEL-003 result ordering", () => {
    it("sorts by confidence, highest first, then by agent id", () => {
      const registry = registryOf([
        { id: "zulu", keywords: ["deploy"] },
        { id: "alpha", keywords: ["deploy"] },
        { id: "mike", keywords: ["deploy", "release"] },
        { id: "bravo", exampleTasks: ["deploy the release"] },
      ]);
      const ranked = selectAgents(registry, "Deploy the release");
      expect(ranked.map(({ agentId, confidence }) => [agentId, confidence])).toEqual([
        ["bravo", 0.6],
        ["mike", 0.3],
        ["alpha", 0.15],
        ["zulu", 0.15],
      ]);
      expect(
        selectAgents(registry, "Deploy the release", { limit: 2 }).map((entry) => entry.agentId),
      ).toEqual(["bravo", "mike"]);
    });
  });

  describe("INV-AGT-SEL-004 fallback to standard agent", () => {
    it("returns the standard agent at 0.5 when no agent matches", () => {
      const registry = registryOf([researcher, coder]);
      expect(selectAgents(registry, "Bake a cake")).toEqual([
        {
          agentId: "standard",
          confidence: 0.5,
          reasons: ["no agent matched the task: standard is the fallback (+0.5)"],
        },
      ]);
      expect(selectAgents(new AgentRegistry("/work"), "")).toHaveLength(1);
    });

    it("falls back when the only matches are at 0, and never selects a disabled agent", () => {
      const registry = registryOf([
        researcher,
        { id: "retired", keywords: ["cake"], exampleTasks: ["Bake a cake"], enabled: false },
      ]);
      const ranked = selectAgents(registry, "write code for the sources");
      expect(ranked.map(({ agentId, confidence }) => [agentId, confidence])).toEqual([
        ["standard", 0.5],
        ["researcher", 0],
      ]);
      expect(selectAgents(registry, "Bake a cake").map((entry) => entry.agentId)).toEqual(["standard"]);
    });

    it("lets a standard agent from a file take part like any other, and still be the fallback", () => {
      const registry = registryOf([{ id: "standard", keywords: ["anything"] }, coder]);
      expect(selectAgents(registry, "anything at all")[0]).toMatchObject({
        agentId: "standard",
        confidence: 0.15,
      });
      expect(selectAgents(registry, "nothing")[0]).toMatchObject({ agentId: "standard", confidence: 0.5 });
    });
  });

  describe("INV-AGT-SEL-005 exampleTasks boost confidence", () => {
    it("adds 0.6 for the same task after normalisation (case, whitespace, punctuation) and 0.4 for a task that contains one", () => {
      const registry = registryOf([{ id: "tester", exampleTasks: ["Fix the failing test", "run tests"] }]);
      expect(confidenceOf(selectAgents(registry, "  fix THE failing-test!! "), "tester")).toBe(0.6);
      expect(confidenceOf(selectAgents(registry, "Please fix the failing test in CI"), "tester")).toBe(0.4);
      // Whole words only, and only the best example counts.
      expect(confidenceOf(selectAgents(registry, "rerun tests"), "tester")).toBeUndefined();
      expect(confidenceOf(selectAgents(registry, "run tests, then fix the failing test"), "tester")).toBe(
        0.4,
      );
      // The boost ranks the agent with the example above one that only shares a keyword.
      const both = registryOf([
        { id: "tester", exampleTasks: ["fix the failing test"] },
        { id: "generalist", keywords: ["test"] },
      ]);
      expect(selectAgents(both, "Fix the failing test").map((entry) => entry.agentId)).toEqual([
        "tester",
        "generalist",
      ]);
    });
  });

  describe("INV-AGT-SEL-006 notForTasks reduce confidence", () => {
    it("subtracts 0.5, not below 0, and an agent with strong enough signals is still selected", () => {
      const registry = registryOf([
        {
          id: "writer",
          keywords: ["release", "notes", "write"],
          exampleTasks: ["write the release notes"],
          notForTasks: ["publish"],
        },
        { id: "publisher", keywords: ["publish"] },
      ]);
      const without = selectAgents(registry, "write the release notes");
      expect(confidenceOf(without, "writer")).toBe(1);
      // 0.4 (contains the example) + 0.45 (keywords) - 0.5 = 0.35: lowered, still first.
      const withExclusion = selectAgents(registry, "write the release notes and publish them");
      expect(withExclusion.map(({ agentId, confidence }) => [agentId, confidence])).toEqual([
        ["writer", 0.35],
        ["publisher", 0.15],
      ]);
      const weak = registryOf([{ id: "writer", keywords: ["notes"], notForTasks: ["publish"] }]);
      expect(confidenceOf(selectAgents(weak, "publish the notes"), "writer")).toBe(0);
    });
  });
});
