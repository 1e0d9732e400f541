import { OWASP_SCRYPT_COST, PasswordHasher } from './password-hasher';

const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

describe('PasswordHasher', () => {
  it("hashes with OWASP's scrypt parameters by default, salted, and verifies only the right password", async () => {
    const hasher = new PasswordHasher();
    const stored = await hasher.hash('correct horse battery');
    expect(stored).toMatch(new RegExp(`^scrypt\\$${OWASP_SCRYPT_COST.N}\\$8\\$1\\$[\\w-]{22}\\$[\\w-]{43}$`));
    expect(stored).not.toContain('correct horse');
    await expect(hasher.verify('correct horse battery', stored)).resolves.toBe(true);
    await expect(hasher.verify('correct horse batterz', stored)).resolves.toBe(false);
  });

  it('salts every hash and verifies hashes of another cost (the cost is in the hash)', async () => {
    const cheap = new PasswordHasher(CHEAP);
    const first = await cheap.hash('a password of mine');
    expect(await cheap.hash('a password of mine')).not.toBe(first);
    await expect(new PasswordHasher({ N: 2 ** 11, r: 8, p: 1 }).verify('a password of mine', first)).resolves.toBe(true);
  });

  it('treats a malformed stored hash as matching nothing', async () => {
    const hasher = new PasswordHasher(CHEAP);
    for (const stored of ['', 'plain', 'scrypt$3$8$1$c2FsdA$a2V5', 'scrypt$1024$0$1$c2FsdA$a2V5', 'bcrypt$1024$8$1$c2FsdA$a2V5']) {
      await expect(hasher.verify('anything at all', stored)).resolves.toBe(false);
    }
  });

  it('runs at most MAX_CONCURRENT hashes at once and refuses with 503 past MAX_WAITING queued', async () => {
    const hasher = new PasswordHasher(CHEAP);
    let peak = 0;
    const internals = hasher as unknown as { running: number };
    const all = Array.from({ length: PasswordHasher.MAX_WAITING + PasswordHasher.MAX_CONCURRENT + 3 }, () => {
      const done = hasher.verifyNothing('some password here');
      peak = Math.max(peak, internals.running);
      return done.then(
        () => 'ok',
        (error: { status?: number; retryAfterSeconds?: number }) => `${error.status}:${error.retryAfterSeconds}`,
      );
    });
    const outcomes = await Promise.all(all);
    expect(peak).toBe(PasswordHasher.MAX_CONCURRENT);
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(PasswordHasher.MAX_WAITING + PasswordHasher.MAX_CONCURRENT);
    expect(outcomes.filter((outcome) => outcome === '503:1')).toHaveLength(3);
    expect(internals.running).toBe(0);
  });

  it('costs an unknown email the same work as a wrong password: one scrypt of the same cost and length', async () => {
    const hasher = new PasswordHasher(CHEAP);
    const stored = await hasher.hash('the real password');
    // Node's crypto cannot be spied on; its one caller here can.
    const derive = jest.spyOn(hasher as unknown as { derive: (password: string, salt: Buffer, cost: object) => Promise<Buffer> }, 'derive');
    await hasher.verify('a wrong password', stored);
    await hasher.verifyNothing('a wrong password');
    expect(derive).toHaveBeenCalledTimes(2);
    const [wrong, unknown] = derive.mock.calls.map(([password, salt, cost]) => ({ password, saltLength: salt.length, cost }));
    expect(unknown).toEqual(wrong);
    expect(wrong.cost).toEqual(CHEAP);
  });
});
