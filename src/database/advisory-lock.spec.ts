import { SqlSession, withAdvisoryLock } from './advisory-lock';

function recordingSession(failOn?: RegExp): SqlSession & { statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    query: async (sql: string, parameters?: unknown[]) => {
      statements.push(`${sql} ${JSON.stringify(parameters)}`);
      if (failOn?.test(sql)) throw new Error(`failed: ${sql}`);
      return [];
    },
  };
}

describe('withAdvisoryLock', () => {
  it('takes the lock, runs, releases it, and returns what the run returned', async () => {
    const session = recordingSession();
    const result = await withAdvisoryLock(session, 42, async () => {
      await session.query('SELECT work');
      return 'done';
    });
    expect(result).toBe('done');
    expect(session.statements).toEqual(['SELECT pg_advisory_lock($1) [42]', 'SELECT work undefined', 'SELECT pg_advisory_unlock($1) [42]']);
  });

  it("leaves the lock of a failed run to the end of the session, and throws the run's error", async () => {
    const session = recordingSession();
    await expect(withAdvisoryLock(session, 42, () => Promise.reject(new Error('migration failed')))).rejects.toThrow('migration failed');
    expect(session.statements).toEqual(['SELECT pg_advisory_lock($1) [42]']);
  });

  it('does not run when the lock could not be taken', async () => {
    const session = recordingSession(/pg_advisory_lock/);
    const run = jest.fn(async () => undefined);
    await expect(withAdvisoryLock(session, 42, run)).rejects.toThrow('failed');
    expect(run).not.toHaveBeenCalled();
  });
});
