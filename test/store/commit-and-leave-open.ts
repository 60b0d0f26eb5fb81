// A child process for the background checkpointer's test: opens the SQLite database named by argv[2], commits
// argv[3] rows with a background checkpoint asked for after every commit (so the worker has started), prints
// "committed <n>" and returns WITHOUT closing the database: the process must still exit by itself.
import { sql } from "kysely";
import { openSqliteDatabase } from "../../src/store/open-sqlite-database.js";

const path = process.argv[2] ?? "";
const commits = Number(process.argv[3] ?? "3");
const opened = await openSqliteDatabase(path, { backgroundCheckpointCommits: 1 });
await sql`create table if not exists rows (position integer primary key, body text not null)`.execute(
  opened.database,
);
for (let position = 0; position < commits; position++) {
  const insert = sql`insert into rows (position, body) values (${position}, ${"x".repeat(5000)})`.compile(
    opened.database,
  );
  await opened.runner.run(function* () {
    yield insert;
  });
}
process.stdout.write(`committed ${commits}\n`);
