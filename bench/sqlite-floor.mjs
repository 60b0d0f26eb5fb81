// `npm run bench:floor`: what SQLite alone costs to store one durable turn on this machine, with no Charter
// code at all, for the run store's own layout and the layouts it could have instead. It bounds what any durable
// runtime can reach here (issue 4's target: >= 10 x faster per turn than LangGraph + SqliteSaver).
//
// Every design writes, in one transaction per turn, the row the run store writes for one turn of the bench
// session that calls a read-only tool (measured from a 20-turn session's SQLite file, turn 11): a segment of
// the five transcript entries (3,872 bytes), the records (3,674: the raw response, two accounting entries, the
// tool result and the COMMIT checkpoint) and the run's progress. better-sqlite3, WAL, synchronous=NORMAL (a
// committed transaction survives kill -9), prepared statements.
//
// Each design runs twice: one run at a time, and FLOOR_CONCURRENT runs interleaved turn by turn (as a server
// running many sessions at once writes them), because where a row lands in its B-tree decides how many pages
// a COMMIT writes: appended at the end, or inserted in the middle of full pages.
//
// Knobs: FLOOR_SECONDS [2] per repetition, FLOOR_REPS [5] (the median is printed), FLOOR_TURNS [20] per run,
// FLOOR_CONCURRENT [100] runs interleaved in the second pass, FLOOR_DIR [the system's temporary directory]
// where the database files go (/dev/shm: without the disk).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const seconds = Number(process.env.FLOOR_SECONDS ?? 2);
const repetitions = Number(process.env.FLOOR_REPS ?? 5);
const turnsPerRun = Number(process.env.FLOOR_TURNS ?? 20);
const concurrentRuns = Number(process.env.FLOOR_CONCURRENT ?? 100);
const walFrameBytes = 4096 + 24;
// As the run store: a checkpoint of the WAL every ~10,000 pages rather than SQLite's 1,000.
const autocheckpointPages = 10_000;
/** Positions per run in the (run number, position) key: 2^24, run numbers below 2^29 stay exact in a double. */
const positionsPerRun = 2 ** 24;

const text = (bytes) => "x".repeat(bytes);
const entries = text(3872);
const records = text(3674);
const headHash = text(64);

// The columns of a schema 3 segment besides its key, in the order the table holds them (the large texts are
// where migrations 0002 and 0003 put them).
const segmentColumns =
  "v integer, first_seq integer, entry_count integer, checkpoint_seq integer, raw_count integer, " +
  "raw_bytes integer, created_at integer, records text, entries text, run_entry_count integer, head_hash text, " +
  "accounting_count integer, tool_result_count integer, turns integer, tokens_in integer, tokens_out integer, " +
  "cost_usd real, tools_used_json text";
const segmentValues = (turn) => [
  1,
  turn * 5,
  5,
  turn * 5 + 4,
  1,
  401,
  1_795_420_894_909,
  records,
  entries,
  turn * 5 + 5,
  headHash,
  turn * 2 + 2,
  turn + 1,
  turn + 1,
  3168,
  187,
  0,
  '["echo"]',
];
const placeholders = (count) => Array.from({ length: count }, () => "?").join(", ");

/**
 * A layout whose rows are `(run_id, position, ...segment columns)`, with `tableEnd` closing the definition (the
 * key, if any, and the table's options).
 */
function runIdPositionDesign(name, tableEnd) {
  return {
    name,
    setup(database) {
      database.exec(
        `create table segments (run_id text not null, position integer not null, ${segmentColumns}${tableEnd}`,
      );
      const insert = database.prepare(`insert into segments values (?, ?, ${placeholders(18)})`);
      return (run, turn) => insert.run(run.id, turn, ...segmentValues(turn));
    },
  };
}

/** Layouts of the segments table, each written one row per turn. */
const designs = [
  runIdPositionDesign(
    "run store (schema 3): a rowid table keyed (run_id, position), so a B-tree of rows and one of the key",
    ", primary key (run_id, position))",
  ),
  {
    name: "rowid = run number x 2^24 + position: one B-tree, no index (a run needs a number)",
    setup(database) {
      database.exec(
        `create table segments (segment_key integer primary key, run_id text not null, position integer not null, ${segmentColumns})`,
      );
      const insert = database.prepare(`insert into segments values (?, ?, ?, ${placeholders(18)})`);
      return (run, turn) =>
        insert.run(run.number * positionsPerRun + turn, run.id, turn, ...segmentValues(turn));
    },
  },
  runIdPositionDesign(
    "WITHOUT ROWID keyed (run_id, position): the rows in key order in one B-tree",
    ", primary key (run_id, position)) without rowid",
  ),
  runIdPositionDesign(
    "rowid only, no key: the floor (no fence against a stale writer; a run is read back by a scan)",
    ")",
  ),
];

function open(path) {
  const database = new Database(path);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);
  return database;
}

/** Median µs per turn and WAL frames per turn of one design, with `interleaved` runs written turn by turn. */
function measure(path, design, interleaved) {
  const database = open(path);
  const write = design.setup(database);
  const writeTurn = database.transaction((run, turn) => write(run, turn));
  let runs = 0;
  // `interleaved` runs, their turns written round-robin: turn 0 of each, then turn 1 of each...
  const someRuns = () => {
    const group = [];
    for (let index = 0; index < interleaved; index++) {
      const number = ++runs;
      group.push({ number, id: `run_${number.toString(16).padStart(32, "0")}` });
    }
    for (let turn = 0; turn < turnsPerRun; turn++) for (const run of group) writeTurn.immediate(run, turn);
    return interleaved * turnsPerRun;
  };
  try {
    someRuns();
    // Pages per turn: the WAL's growth over at least 2,000 turns, with no checkpoint to restart it meanwhile.
    database.pragma("wal_checkpoint(TRUNCATE)");
    database.pragma("wal_autocheckpoint = 0");
    let turns = 0;
    while (turns < 100 * turnsPerRun) turns += someRuns();
    const framesPerTurn = statSync(`${path}-wal`).size / walFrameBytes / turns;
    database.pragma("wal_checkpoint(TRUNCATE)");
    database.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);
    const warmUntil = performance.now() + 1000;
    while (performance.now() < warmUntil) someRuns();
    const perTurn = [];
    for (let repetition = 0; repetition < repetitions; repetition++) {
      let count = 0;
      const start = performance.now();
      while (performance.now() - start < seconds * 1000) count += someRuns();
      perTurn.push(((performance.now() - start) * 1000) / count);
    }
    return { perTurn: median(perTurn), framesPerTurn };
  } finally {
    database.close();
    // A design writes a few GB in its time: gone before the next one starts.
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const directory = mkdtempSync(join(process.env.FLOOR_DIR ?? tmpdir(), "charter-sqlite-floor-"));
try {
  console.log(
    `SQLite alone per durable turn (one ~7.7 KB segment row per transaction, ${turnsPerRun}-turn runs), ${process.version}:`,
  );
  console.log(`  1 run at a time          ${concurrentRuns} runs interleaved`);
  for (const [index, design] of designs.entries()) {
    const alone = measure(join(directory, `design-${index}-alone.db`), design, 1);
    const together = measure(join(directory, `design-${index}-interleaved.db`), design, concurrentRuns);
    const figure = ({ perTurn, framesPerTurn }) =>
      `${perTurn.toFixed(1).padStart(6)} us ${framesPerTurn.toFixed(1).padStart(4)} fr`;
    console.log(`  ${figure(alone)}    ${figure(together)}    ${design.name}`);
  }
  console.log("  (us: µs/turn, median of the repetitions; fr: WAL frames, i.e. pages written, per turn)");
} finally {
  rmSync(directory, { recursive: true, force: true });
}
