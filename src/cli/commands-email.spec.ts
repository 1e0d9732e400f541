import { CliServices, COMMANDS } from './commands';

/** The CLI reads emails through the admin API's DTOs: in their one spelling (src/people/email-address.ts), or refused naming the flag. */
describe('the CLI’s emails', () => {
  const run = async (command: string, flags: Record<string, string>, optional: Record<string, string> = {}) => {
    const seen: unknown[] = [];
    const services = {
      people: { createUser: async (dto: unknown) => seen.push(dto) },
      organizations: { createOrganization: async (dto: unknown) => seen.push(dto) },
    } as unknown as CliServices;
    const action = await COMMANDS[command].prepare(flags as never, optional, { FLAGSTORE_PASSWORD: 'correct horse battery staple' });
    await action!(services);
    return seen[0];
  };

  it('create-user and create-org pass the normal form on', async () => {
    expect(await run('create-user', { email: ' Maya@Bücher.Example ', name: 'Maya' })).toMatchObject({ email: 'maya@xn--bcher-kva.example' });
    expect(await run('create-org', { name: 'Acme' }, { 'admin-email': 'MAYA@ACME.EXAMPLE', 'admin-name': 'Maya' })).toMatchObject({
      admin: { email: 'maya@acme.example' },
    });
  });

  it('refuses an email whose domain cannot be converted, naming the flag', async () => {
    await expect(run('create-user', { email: 'maya@\u0378.example', name: 'Maya' })).rejects.toThrow(
      'email must be an email address: its domain cannot be converted to ASCII (IDNA) (--email)',
    );
  });
});
