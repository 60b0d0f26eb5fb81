// A child process for the kill -9 test: opens the store named by argv[2] (JSON), creates run argv[3] and commits
// one turn after another through the store-backed writer, printing "<commits> <entries> <head>" after each
// commit resolved (is durable). It never stops by itself; the test kills it.
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import {
  appendTurnEntries,
  checkpointDocument,
  startOfTime,
  storeTestContract,
  turnAccounting,
} from "./store-harness.js";

const location = JSON.parse(process.argv[2] ?? "{}");
const runId = process.argv[3] ?? "run-killed";
const environment = deterministicEnvironment({ start: startOfTime });
const store = await openRunStore({ ...location, environment });
const contract = storeTestContract();
const writer = createStoreTranscriptWriter({ store, agentId: "killed-agent" });
const transcript = createHashChainTranscript({
  runId,
  contractHash: contract.contract_hash,
  adapterVersion: contract.adapter_version,
  modelProfileId: contract.model_profile_id,
  redactor: new SecretRedactor(),
  writer,
  environment,
});
transcript.writeContract(contract);
for (let turn = 1; ; turn++) {
  appendTurnEntries(transcript, environment, turn, { toolOutput: `output of turn ${turn} `.repeat(200) });
  const receipt = await writer.commit({
    checkpoint: checkpointDocument(turn, transcript.entryCount - 1),
    accounting: turnAccounting(runId, turn, environment.now()),
  });
  process.stdout.write(`${turn} ${receipt.entryCount} ${receipt.headHash}\n`);
}
