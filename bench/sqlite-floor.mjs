// `npm run bench:floor`: what SQLite alone costs to store one durable turn on this machine, with no Charter
// code at all, for designs from the run store's own shape down to an unindexed log. It bounds what any durable
// runtime can reach here (issue 4's target: >= 10 x faster per turn than LangGraph + SqliteSaver).
//
// Every design writes the bytes one tool turn of the bench session stores (measured from `npm run bench`'s
// SQLite file at T = 20): before the tool executes, the INFER, VALIDATE_CALLS and EXECUTE entries, the raw
// response, the model's accounting entry and a checkpoint; after it, the OBSERVE and COMMIT entries, the tool
// result, the tool's accounting entry and a checkpoint. Two transactions per turn, because a tool without
// annotations is not idempotent and must never run twice: the call has to be durable before it starts.
// better-sqlite3, WAL, synchronous=NORMAL (a committed transaction survives kill -9), prepared statements.
//
// Knobs: FLOOR_SECONDS [2] per repetition, FLOOR_REPS [5] (the median is printed), FLOOR_TURNS [20] per run,
// FLOOR_DIR [the system's temporary directory] where the database files go (/dev/shm: without the disk).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const seconds = Number(process.env.FLOOR_SECONDS ?? 2);
const repetitions = Number(process.env.FLOOR_REPS ?? 5);
const turnsPerRun = Number(process.env.FLOOR_TURNS ?? 20);
const walFrameBytes = 4096 + 24;

const text = (bytes) => "x".repeat(bytes);
// Bytes per row, in the order the run store writes them (see the comment at the top).
const beforeExecute = {
  entries: [text(1184), text(581), text(789)],
  raw: text(396),
  accounting: text(270),
  checkpoint: text(2000),
};
const afterExecute = {
  entries: [text(596), text(605)],
  toolResult: text(250),
  accounting: text(270),
  checkpoint: text(2000),
};

/** Designs from the run store's shape (one table per kind of record) down to one unindexed table. */
const designs = [
  {
    name: "run store, schema 1: 7 tables keyed (run_id, seq), 2 txns/turn",
    setup(database) {
      const tables = ["entries", "accounting", "checkpoints", "tool_results"];
      for (const table of tables) {
        database.exec(
          `create table ${table} (run_id text not null, seq integer not null, body text not null, primary key (run_id, seq))`,
        );
      }
      // Raw payloads are content-addressed: keyed by their hash, so each lands at a random place in its index.
      database.exec("create table raw_payloads (hash text primary key, body text not null)");
      database.exec(
        "create table run_raw_payloads (run_id text not null, hash text not null, primary key (run_id, hash))",
      );
      database.exec("create table runs (run_id text primary key, head integer not null)");
      const insertRaw = database.prepare("insert into raw_payloads values (?, ?)");
      const insertRunRaw = database.prepare("insert into run_raw_payloads values (?, ?)");
      const insert = Object.fromEntries(
        tables.map((table) => [table, database.prepare(`insert into ${table} values (?, ?, ?)`)]),
      );
      const update = database.prepare("update runs set head = ? where run_id = ?");
      return {
        start: database.prepare("insert into runs values (?, 0)"),
        before: database.transaction((run, turn) => {
          update.run(turn, run);
          for (const [index, body] of beforeExecute.entries.entries())
            insert.entries.run(run, turn * 5 + index, body);
          const hash = pseudoHash();
          insertRaw.run(hash, beforeExecute.raw);
          insertRunRaw.run(run, hash);
          insert.accounting.run(run, turn * 2, beforeExecute.accounting);
          insert.checkpoints.run(run, turn * 2, beforeExecute.checkpoint);
        }),
        after: database.transaction((run, turn) => {
          update.run(turn, run);
          for (const [index, body] of afterExecute.entries.entries())
            insert.entries.run(run, turn * 5 + 3 + index, body);
          insert.tool_results.run(run, turn, afterExecute.toolResult);
          insert.accounting.run(run, turn * 2 + 1, afterExecute.accounting);
          insert.checkpoints.run(run, turn * 2 + 1, afterExecute.checkpoint);
        }),
      };
    },
  },
  segmentDesign(),
  logDesign("one log table keyed (run_id, seq), 2 txns/turn", true, 2),
  logDesign(
    "one log table, rowid only (no index: a run cannot be read back without a scan), 2 txns/turn",
    false,
    2,
  ),
  logDesign("one log table, rowid only, 1 txn/turn (the call is not durable before it runs)", false, 1),
];

/**
 * The run store since schema 2: each transaction updates the run row (the fence) and appends ONE segment row
 * holding all of its records (src/store/run-segment.ts), keyed (run_id, position).
 */
function segmentDesign() {
  return {
    name: "run store, schema 2: run row + one segment row per txn, 2 txns/turn",
    setup(database) {
      database.exec("create table runs (run_id text primary key, head integer not null)");
      database.exec(
        "create table segments (run_id text not null, position integer not null, body text not null, primary key (run_id, position))",
      );
      const update = database.prepare("update runs set head = ? where run_id = ?");
      const append = database.prepare("insert into segments values (?, ?, ?)");
      const before = Object.values(beforeExecute).flat().join("\n");
      const after = Object.values(afterExecute).flat().join("\n");
      return {
        start: database.prepare("insert into runs values (?, 0)"),
        before: database.transaction((run, turn) => {
          update.run(turn, run);
          append.run(run, turn * 2, before);
        }),
        after: database.transaction((run, turn) => {
          update.run(turn, run);
          append.run(run, turn * 2 + 1, after);
        }),
      };
    },
  };
}

/** Every record of a turn as a row of one table: (run_id, seq, body), with or without the (run_id, seq) key. */
function logDesign(name, keyed, transactionsPerTurn) {
  return {
    name,
    setup(database) {
      database.exec(
        `create table log (run_id text not null, seq integer not null, body text not null${keyed ? ", primary key (run_id, seq)" : ""})`,
      );
      const insert = database.prepare("insert into log values (?, ?, ?)");
      const before = [
        ...beforeExecute.entries,
        beforeExecute.raw,
        beforeExecute.accounting,
        beforeExecute.checkpoint,
      ];
      const after = [
        ...afterExecute.entries,
        afterExecute.toolResult,
        afterExecute.accounting,
        afterExecute.checkpoint,
      ];
      const write = (run, firstSeq, bodies) => {
        for (const [index, body] of bodies.entries()) insert.run(run, firstSeq + index, body);
      };
      const perTurn = before.length + after.length;
      return transactionsPerTurn === 2
        ? {
            before: database.transaction((run, turn) => write(run, turn * perTurn, before)),
            after: database.transaction((run, turn) => write(run, turn * perTurn + before.length, after)),
          }
        : { before: database.transaction((run, turn) => write(run, turn * perTurn, [...before, ...after])) };
    },
  };
}

function open(path) {
  const database = new Database(path);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  // As the run store: a checkpoint of the WAL every ~10,000 pages rather than SQLite's 1,000.
  database.pragma("wal_autocheckpoint = 10000");
  return database;
}

let hashState = 0x2545f491;
/** A 64-hex-digit key that looks random (xorshift), standing in for a BLAKE3 hash. */
function pseudoHash() {
  let hex = "";
  for (let word = 0; word < 8; word++) {
    hashState ^= hashState << 13;
    hashState ^= hashState >>> 17;
    hashState ^= hashState << 5;
    hex += (hashState >>> 0).toString(16).padStart(8, "0");
  }
  return hex;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const directory = mkdtempSync(join(process.env.FLOOR_DIR ?? tmpdir(), "charter-sqlite-floor-"));
try {
  console.log(
    `SQLite floor of one durable tool turn (~8.5 KB in ${turnsPerRun}-turn runs), ${process.version}:`,
  );
  for (const [index, design] of designs.entries()) {
    const path = join(directory, `design-${index}.db`);
    const database = open(path);
    const statements = design.setup(database);
    let runs = 0;
    const oneRun = () => {
      const run = `run_${(runs++).toString(16).padStart(32, "0")}`;
      statements.start?.run(run);
      for (let turn = 0; turn < turnsPerRun; turn++) {
        statements.before.immediate(run, turn);
        statements.after?.immediate(run, turn);
      }
    };
    oneRun();
    const walBefore = statSync(`${path}-wal`).size;
    for (let run = 0; run < 10; run++) oneRun();
    const framesPerTurn = (statSync(`${path}-wal`).size - walBefore) / walFrameBytes / (10 * turnsPerRun);
    const warmUntil = performance.now() + 1000;
    while (performance.now() < warmUntil) oneRun();
    const perTurn = [];
    for (let repetition = 0; repetition < repetitions; repetition++) {
      let count = 0;
      const start = performance.now();
      while (performance.now() - start < seconds * 1000) {
        oneRun();
        count++;
      }
      perTurn.push(((performance.now() - start) * 1000) / (count * turnsPerRun));
    }
    database.close();
    console.log(
      `  ${median(perTurn).toFixed(1).padStart(6)} us/turn  ${framesPerTurn.toFixed(1).padStart(4)} WAL frames/turn  ${design.name}`,
    );
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
