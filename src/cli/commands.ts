import { agentsCommand } from "./agents-command.js";
import type { CommandDeclaration } from "./command-declaration.js";
import { conformanceCommand } from "./conformance-command.js";
import { demoCommand } from "./demo-command.js";
import { doctorCommand } from "./doctor-command.js";
import { initCommand } from "./init-command.js";
import { keysCommand } from "./keys-command.js";
import { replayCommand } from "./replay-command.js";
import { resumeCommand } from "./resume-command.js";
import { runCommand } from "./run-command.js";
import { runsCommand } from "./runs-command.js";
import { serveCommand } from "./serve-command.js";
import { toolsCommand } from "./tools-command.js";
import { verifyCommand } from "./verify-command.js";
import { viewCommand } from "./view-command.js";
import { workCommand } from "./work-command.js";
import { workerCommand } from "./worker-command.js";
import { workflowCommand } from "./workflow-command.js";

/** Every `charter` command, in the order `charter --help` lists them. A new command is one more entry here. */
export const commands: readonly CommandDeclaration[] = [
  runCommand,
  resumeCommand,
  workflowCommand,
  workCommand,
  runsCommand,
  verifyCommand,
  replayCommand,
  agentsCommand,
  initCommand,
  toolsCommand,
  doctorCommand,
  conformanceCommand,
  serveCommand,
  viewCommand,
  workerCommand,
  keysCommand,
  demoCommand,
];
