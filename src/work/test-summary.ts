/** Passed and failed test counts read from a test runner's summary lines, when the output has them. */
export interface TestCounts {
  readonly passed?: number;
  readonly failed?: number;
}

// ESC [ ... m, built from a string so that the pattern holds no control character literally.
const ansiColour = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

function lastNumber(text: string, pattern: RegExp): number | undefined {
  let found: number | undefined;
  for (const match of text.matchAll(pattern)) found = Number(match[1]);
  return found;
}

/**
 * Reads the counts from the summary lines of common test runners: TAP and node:test (`# pass N`, `# fail N`),
 * go test (`--- PASS:` / `--- FAIL:` lines), and vitest, jest, pytest, mocha and the plain `N passed, N failed`
 * (the last such summary in the output wins: runners print one at the end).
 */
export function parseTestSummary(output: string): TestCounts {
  const tapPassed = lastNumber(output, /^# pass\s+(\d+)\s*$/gm);
  const tapFailed = lastNumber(output, /^# fail\s+(\d+)\s*$/gm);
  if (tapPassed !== undefined || tapFailed !== undefined) {
    return { passed: tapPassed ?? 0, failed: tapFailed ?? 0 };
  }
  const goPassed = output.match(/^\s*--- PASS: /gm)?.length ?? 0;
  const goFailed = output.match(/^\s*--- FAIL: /gm)?.length ?? 0;
  if (goPassed + goFailed > 0) return { passed: goPassed, failed: goFailed };
  // Colour codes and vitest's `Tests  3 passed | 1 failed (4)` or jest's `Tests: 1 failed, 3 passed, 4 total`.
  const plain = output.replace(ansiColour, "");
  const passed = lastNumber(plain, /(\d+)\s+(?:passed|passing)\b/g);
  const failed = lastNumber(plain, /(\d+)\s+(?:failed|failing)\b/g);
  if (passed === undefined && failed === undefined) return {};
  return { passed: passed ?? 0, failed: failed ?? 0 };
}
