import type { CliStreams } from "./cli-streams.js";
import type { FlagValues } from "./command-declaration.js";
import type { workFlags } from "./work-flags.js";

/**
 * What `work run` and `work plan` pass alike to the code that runs work items: the repository, the flags every
 * run reads (configuration, store, runs directory, tenant), the binary directory, the interrupt signal and
 * warnings on stderr. One place, so that a flag the one command honours the other does not ignore.
 */
export function workRunOptions(values: FlagValues<typeof workFlags>, streams: CliStreams) {
  return {
    repository: values.repo ?? process.cwd(),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
    signal: streams.signal,
    onWarning: (text: string) => streams.stderr.write(`charter: warning: ${text}\n`),
  };
}
