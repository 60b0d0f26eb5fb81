// Summarises a run of run-http-path.sh: per round, the three HTTP-path targets; then their medians over rounds.
// Each figure is given twice: from wall time per turn, and from the client process's CPU time per turn (user +
// system), which a busy machine disturbs far less than wall time (the scripted server is another process).
//   node bench/peers/summarize-http-path.mjs bench/peers/results/http-path-<stamp>.jsonl
import { readFileSync } from "node:fs";

const rows = readFileSync(process.argv[2], "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line));
for (const measure of ["perTurnUs", "cpuPerTurnUs"]) {
  console.log(measure === "perTurnUs" ? "== Wall time per turn ==" : "\n== Client CPU time per turn ==");
  summarise(measure);
}

function summarise(measure) {
  const rounds = new Map();
  for (const row of rows) {
    const [round, label] = row.tag.split("|");
    if (!rounds.has(round)) rounds.set(round, {});
    rounds.get(round)[label] = row[measure];
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const figures = (value, build) => {
    const prefix = build === "baseline" ? "baseline" : "charter";
    const inProcess = value[prefix] - value.bare;
    const aboveFloor = value[`${prefix}-http-20`] - value["floor-http-20"];
    const above5 = value[`${prefix}-http-5`] - value["bare-http-5"];
    const above100 = value[`${prefix}-http-100`] - value["bare-http-100"];
    return {
      "in-process cost us/turn": inProcess,
      "above provider floor us/turn (T=20, http)": aboveFloor,
      "above floor / in-process (target <= 2)": aboveFloor / inProcess,
      "above bare T=5 us/turn (http)": above5,
      "above bare T=100 us/turn (http)": above100,
      "T=100 / T=5 (target <= 1.2)": above100 / above5,
      "ai-sdk / charter in process (target >= 1.5)": value["ai-sdk"] / value[prefix],
      "ai-sdk / charter http T=20 (target > 1)": value["ai-sdk-http-20"] / value[`${prefix}-http-20`],
    };
  };
  const builds = Object.keys([...rounds.values()][0]).includes("baseline")
    ? ["current", "baseline"]
    : ["current"];
  for (const [round, value] of rounds) {
    console.log(
      `${round}: ${Object.entries(value)
        .map(([label, us]) => `${label} ${us.toFixed(1)}`)
        .join(", ")} (us/turn)`,
    );
  }
  for (const build of builds) {
    const perRound = [...rounds.values()].map((value) => figures(value, build));
    console.log(
      `\n${build === "current" ? "Current build" : "Baseline build"}: median over ${perRound.length} rounds`,
    );
    for (const key of Object.keys(perRound[0])) {
      const values = perRound.map((figure) => figure[key]);
      console.log(
        `  ${key.padEnd(46)} ${median(values).toFixed(2).padStart(9)}   (rounds: ${values.map((v) => v.toFixed(2)).join(" ")})`,
      );
    }
  }
}
