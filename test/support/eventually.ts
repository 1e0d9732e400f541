/**
 * Polls until `check` holds, for state that changes asynchronously (another instance hearing of a commit, a
 * sweep finishing). Fails the test with `what` when it does not hold within `timeoutMs`.
 */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  { timeoutMs = 5_000, intervalMs = 25, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
