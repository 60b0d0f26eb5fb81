import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Ability } from "../../src/abilities/ability.js";
import { abilityRelevance, matchWords } from "../../src/abilities/ability-relevance.js";
import type { AgentAbilities } from "../../src/abilities/agent-abilities.js";
import { abilitySection, fitAbilities } from "../../src/abilities/fit-abilities.js";
import { selectAbilities } from "../../src/abilities/select-abilities.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { createTokenEstimator } from "../../src/model/token-estimator.js";

function ability(id: string, keywords: readonly string[], content = `Knowledge of ${id}.`): Ability {
  return { id, keywords, description: null, content, contentHash: blake3Hex(content), file: `/a/${id}.md` };
}

function agent(core: readonly Ability[], candidates: readonly Ability[], tokenBudget = 2000): AgentAbilities {
  return { core, candidates, tokenBudget, tokenBudgetSource: "default" };
}

const estimator = createTokenEstimator();

describe("keyword relevance", () => {
  it("counts the distinct keywords found in the task as whole words, in order", () => {
    const task = matchWords("Review this Pull-Request: the SQL query is slow; the query joins two tables.");
    expect(abilityRelevance(ability("x", ["sql"]), task)).toBe(1);
    expect(abilityRelevance(ability("x", ["SQL", "query", "Query", "index"]), task)).toBe(2);
    expect(abilityRelevance(ability("x", ["pull request"]), task)).toBe(1);
    expect(abilityRelevance(ability("x", ["request pull"]), task)).toBe(0);
    // Whole words only: "join" is not "joins", "sq" is not "sql".
    expect(abilityRelevance(ability("x", ["join", "sq"]), task)).toBe(0);
    expect(abilityRelevance(ability("x", ["++"]), task)).toBe(0);
  });
});

describe("selection", () => {
  const candidates = [
    ability("zeta", ["deploy"]),
    ability("beta", ["query"]),
    ability("alpha", ["query"]),
    ability("indexes", ["index", "query"]),
  ];

  it("puts the core abilities first in their order, then matches by relevance, then id", () => {
    const selected = selectAbilities(
      agent([ability("house", ["nothing"]), ability("glossary", [])], candidates),
      "Which index makes this query fast?",
    );
    expect(selected.map((entry) => [entry.ability.id, entry.kind, entry.relevance])).toEqual([
      ["house", "core", null],
      ["glossary", "core", null],
      ["indexes", "matched", 2],
      ["alpha", "matched", 1],
      ["beta", "matched", 1],
    ]);
  });

  it("is the same for the same task whatever order the candidates are listed in", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(candidates, { minLength: candidates.length }),
        fc.constantFrom("query", "deploy the index query", "nothing here", "QUERY index"),
        (shuffled, task) => {
          const ids = (list: readonly Ability[]) =>
            selectAbilities(agent([], list), task).map((entry) => entry.ability.id);
          expect(ids(shuffled)).toEqual(ids(candidates));
        },
      ),
    );
  });
});

describe("fitting into the token budget", () => {
  const fitWithin = (selected: ReturnType<typeof selectAbilities>, tokenBudget: number) =>
    fitAbilities(selected, { tokenBudget, tokenBudgetSource: "agent", countText: estimator.countText });

  it("injects everything whole when it fits, and counts nothing when nothing is selected", () => {
    const selected = selectAbilities(agent([ability("a", [])], [ability("b", ["x"])]), "x");
    const fitted = fitWithin(selected, 2000);
    expect(fitted.text).toBe(
      `${abilitySection("a", "Knowledge of a.")}\n\n${abilitySection("b", "Knowledge of b.")}`,
    );
    expect(fitted.tokens).toBe(estimator.countText(fitted.text));
    expect(fitted.cut).toBeNull();
    let counted = false;
    const empty = fitAbilities([], {
      tokenBudget: 10,
      tokenBudgetSource: "default",
      countText: () => {
        counted = true;
        return 0;
      },
    });
    expect(empty).toMatchObject({ text: "", tokens: 0, injected: [], leftOut: [], cut: null });
    expect(counted).toBe(false);
  });

  it("leaves out an ability of which not even one token fits", () => {
    const selected = selectAbilities(agent([ability("first", []), ability("second", [])], []), "");
    const wholeFirst = estimator.countText(abilitySection("first", "Knowledge of first."));
    const fitted = fitWithin(selected, wholeFirst + 3);
    expect(fitted.injected.map((entry) => entry.id)).toEqual(["first"]);
    expect(fitted.leftOut.map((entry) => entry.id)).toEqual(["second"]);
    expect(fitted.cut).toBe(`token budget ${wholeFirst + 3}: second left out`);
  });

  it("never exceeds the budget, whatever the abilities and the budget", () => {
    const words = fc.constantFrom(
      "alpha",
      "beta",
      "ünïcode",
      "🙂",
      "x".repeat(90),
      "\n",
      "  ",
      "<|endoftext|>",
      ".",
    );
    const knowledge = fc
      .array(words, { minLength: 1, maxLength: 60 })
      .map((parts) => parts.join(" ").trim() || "k");
    fc.assert(
      fc.property(
        fc.array(knowledge, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 300 }),
        (contents, budget) => {
          const core = contents.map((content, index) => ability(`ability-${index}`, [], content));
          const fitted = fitWithin(selectAbilities(agent(core, []), ""), budget);
          expect(estimator.countText(fitted.text)).toBe(fitted.tokens);
          expect(fitted.tokens).toBeLessThanOrEqual(budget);
          // Priority order kept: what is injected is a prefix of the list, only the last one possibly cut.
          expect(fitted.injected.map((entry) => entry.id)).toEqual(
            core.slice(0, fitted.injected.length).map((entry) => entry.id),
          );
          expect(fitted.injected.slice(0, -1).every((entry) => !entry.truncated)).toBe(true);
          for (const entry of fitted.injected) {
            const content = core.find((candidate) => candidate.id === entry.id)!.content;
            const section = new RegExp(`<ability id="${entry.id}">\\n([\\s\\S]*?)\\n</ability>`).exec(
              fitted.text,
            );
            expect(content.startsWith(section?.[1] ?? "\u0000")).toBe(true);
          }
          expect(fitted.injected.length + fitted.leftOut.length).toBe(core.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});
