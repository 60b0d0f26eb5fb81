import { existsSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import type { WalCheckpointResult } from "../../src/store/background-wal-checkpointer.js";
import { openSqliteDatabase, type SqliteStoreOptions } from "../../src/store/open-sqlite-database.js";
import { nodeProcess } from "../node-process.js";

const childScript = resolve(import.meta.dirname, "commit-and-leave-open.ts");
const resolveHook = resolve(import.meta.dirname, "typescript-resolution.mjs");

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** A SQLite database opened as the store opens it, with a table of large rows (each commit writes pages). */
async function openDatabase(options: SqliteStoreOptions) {
  const directory = await mkdtemp(join(tmpdir(), "charter-checkpointer-"));
  directories.push(directory);
  const path = join(directory, "charter.db");
  const opened = await openSqliteDatabase(path, options);
  await sql`create table rows (position integer primary key, body text not null)`.execute(opened.database);
  let position = 0;
  async function commit(): Promise<void> {
    const body = `row ${position} `.repeat(1000);
    const insert = sql`insert into rows (position, body) values (${position++}, ${body})`.compile(
      opened.database,
    );
    await opened.runner.run(function* () {
      yield insert;
    });
  }
  async function close(): Promise<void> {
    await opened.runner.close?.();
    await opened.database.destroy();
  }
  return { path, commit, close };
}

// The committing connection's own automatic checkpoint is pushed out of reach, so that whatever reaches the
// database file was copied there by the background checkpointer.
const noAutomaticCheckpoint = { walAutocheckpointPages: 1_000_000 };

describe("background WAL checkpoints (SQLite)", () => {
  it("copies committed pages into the database file on a worker thread, every N commits", async () => {
    const reports: WalCheckpointResult[] = [];
    let reported: (result: WalCheckpointResult) => void = () => undefined;
    const firstReport = new Promise<WalCheckpointResult>((resolve) => {
      reported = resolve;
    });
    const database = await openDatabase({
      ...noAutomaticCheckpoint,
      backgroundCheckpointCommits: 4,
      onBackgroundCheckpoint: (result) => {
        reports.push(result);
        reported(result);
      },
    });
    const sizeBefore = (await stat(database.path)).size;
    for (let index = 0; index < 3; index++) await database.commit();
    expect(reports).toEqual([]);
    await database.commit();

    const report = await firstReport;
    expect(report.busy).toBe(0);
    expect(report.walFrames).toBeGreaterThan(0);
    expect(report.checkpointedFrames).toBe(report.walFrames);
    // The rows' pages are now in the database file itself, not only in the WAL.
    expect((await stat(database.path)).size).toBeGreaterThan(sizeBefore + 4 * 4096);
    await database.close();
    expect(reports).toHaveLength(1);
  });

  it("checkpoints nothing in the background when turned off (0)", async () => {
    const reports: WalCheckpointResult[] = [];
    const database = await openDatabase({
      ...noAutomaticCheckpoint,
      backgroundCheckpointCommits: 0,
      onBackgroundCheckpoint: (result) => reports.push(result),
    });
    const sizeBefore = (await stat(database.path)).size;
    for (let index = 0; index < 12; index++) await database.commit();
    expect((await stat(database.path)).size).toBe(sizeBefore);
    expect((await stat(`${database.path}-wal`)).size).toBeGreaterThan(12 * 4096);
    await database.close();
    expect(reports).toEqual([]);
  });

  it("closes the worker's connection before the store's own, which then removes the WAL", async () => {
    let reported: () => void = () => undefined;
    const firstReport = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const database = await openDatabase({
      ...noAutomaticCheckpoint,
      backgroundCheckpointCommits: 2,
      onBackgroundCheckpoint: () => reported(),
    });
    for (let index = 0; index < 2; index++) await database.commit();
    await firstReport;
    // More commits: a checkpoint may be running when the store closes.
    for (let index = 0; index < 6; index++) await database.commit();
    expect(existsSync(`${database.path}-wal`)).toBe(true);
    await database.close();
    // SQLite deletes the WAL when the LAST connection to the database closes: the worker's was closed first.
    expect(existsSync(`${database.path}-wal`)).toBe(false);
  });

  it("gives the worker up when it fails, and commits go on without it", async () => {
    const reports: WalCheckpointResult[] = [];
    const database = await openDatabase({
      ...noAutomaticCheckpoint,
      backgroundCheckpointCommits: 2,
      onBackgroundCheckpoint: (result) => reports.push(result),
    });
    // The file's name is gone (the store keeps its open file): the worker cannot open the database.
    await rm(database.path);
    for (let index = 0; index < 12; index++) await database.commit();
    await database.close();
    expect(reports).toEqual([]);
  });

  it("never keeps the process alive: a process that leaves the store open still exits by itself", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-checkpointer-"));
    directories.push(directory);
    const path = join(directory, "charter.db");
    // Resolves only once the child exits: with a worker keeping it alive, the test runs into its timeout.
    const exited = await nodeProcess(["--import", resolveHook, childScript, path, "4"]);
    expect(exited).toEqual({ exitCode: 0, stdout: "committed 4\n", stderr: "" });
    // Left in the middle of a checkpoint or not, the database holds every row and is whole.
    const database = new Database(path, { readonly: true });
    try {
      expect(database.prepare("select count(*) as count from rows").get()).toEqual({ count: 4 });
      expect(database.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      database.close();
    }
  });
});
