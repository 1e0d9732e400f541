import { randomBytes } from 'node:crypto';
import { createServer, Server, Socket } from 'node:net';
import { freePort } from '../../src/common/free-port';
import { OidcError, OidcFailure } from '../../src/people/oidc/oidc-errors';
import { OidcPending } from '../../src/people/oidc/oidc-pending';
import { OidcSignIn, OidcSignInOptions } from '../../src/people/oidc/oidc-sign-in';
import { callbackPathOf, signInAtProvider } from '../support/oidc-browser';
import { OidcTestAccount, OidcTestProvider, startOidcProvider } from '../support/servers/oidc-provider';

const client = {
  clientId: 'flagstore-console',
  clientSecret: randomBytes(24).toString('base64url'),
  // Never requested: the browser driver stops where the provider sends it back, and the test reads that URL.
  redirectUri: 'http://127.0.0.1:3000/v1/auth/sso/callback',
};
const accounts: OidcTestAccount[] = [
  { sub: 'ada', email: 'ada@studio.test', email_verified: true, name: 'Ada Lovelace' },
  { sub: 'bob', email: 'bob@studio.test', email_verified: false, name: 'Bob' },
  { sub: 'nomail', name: 'No Mail' },
  { sub: 'cora', email: 'cora@studio.test', email_verified: 'true' },
  { sub: 'dan', email: 'dan@studio.test', email_verified: 'false', name: '  ' },
];

/** A sign-in started at `oidc` and carried through the provider as `login`: the callback and the pending data. */
async function signedInAtProvider(oidc: OidcSignIn, login: string): Promise<{ callback: string; pending: OidcPending; code: string }> {
  const { url, pending } = await oidc.start('/console/flags');
  const callback = callbackPathOf(await signInAtProvider(url, { login }));
  return { callback, pending, code: new URL(callback, 'http://x').searchParams.get('code')! };
}

/** The OidcError `attempt` fails with: of `reason`, and showing no code, verifier or secret, in its message or detail. */
async function failure(attempt: Promise<unknown>, reason: OidcFailure, secrets: string[] = []): Promise<OidcError> {
  const error = await attempt.then(
    () => {
      throw new Error(`expected ${reason}, but it succeeded`);
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OidcError);
  const oidcError = error as OidcError;
  expect({ reason: oidcError.reason, detail: oidcError.detail }).toEqual({ reason, detail: expect.any(String) });
  for (const secret of [...secrets, client.clientSecret]) {
    expect(oidcError.message).not.toContain(secret);
    expect(oidcError.detail).not.toContain(secret);
  }
  return oidcError;
}

describe('single sign-on against a real OpenID provider', () => {
  let provider: OidcTestProvider;
  const signIn = (options?: OidcSignInOptions) => new OidcSignIn({ issuer: provider.issuer, ...client }, options);

  beforeAll(async () => {
    provider = await startOidcProvider({ client, accounts });
  });
  afterAll(() => provider?.stop());

  it('sends the browser to the provider with PKCE S256, state and nonce, and answers the verified email', async () => {
    const oidc = signIn();
    const { url, pending } = await oidc.start('/console/flags');
    const query = new URL(url).searchParams;
    expect(url.startsWith(`${provider.issuer}/auth?`)).toBe(true);
    expect(Object.fromEntries(query)).toEqual({
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    expect(pending).toEqual({
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      codeVerifier: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      returnTo: '/console/flags',
      createdAt: expect.any(Number),
    });
    expect(url).not.toContain(pending.codeVerifier);

    const callback = callbackPathOf(await signInAtProvider(url, { login: 'ada' }));
    expect(await oidc.finish(callback, pending)).toEqual({
      email: 'ada@studio.test',
      emailVerified: true,
      name: 'Ada Lovelace',
      subject: 'ada',
      issuer: provider.issuer,
    });
  });

  it('answers an unverified email as such', async () => {
    const oidc = signIn();
    const { callback, pending } = await signedInAtProvider(oidc, 'bob');
    expect(await oidc.finish(callback, pending)).toEqual({
      email: 'bob@studio.test',
      emailVerified: false,
      name: 'Bob',
      subject: 'bob',
      issuer: provider.issuer,
    });
  });

  it('reads email_verified sent as a string, as Amazon Cognito sends it, and leaves out a blank name', async () => {
    for (const [login, emailVerified] of [
      ['cora', true],
      ['dan', false],
    ] as const) {
      const oidc = signIn();
      const { callback, pending } = await signedInAtProvider(oidc, login);
      expect(await oidc.finish(callback, pending)).toEqual({ email: `${login}@studio.test`, emailVerified, subject: login, issuer: provider.issuer });
    }
  });

  it('refuses an account the provider shares no email for', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'nomail');
    await failure(oidc.finish(callback, pending), OidcFailure.EMAIL_MISSING, [code, pending.codeVerifier]);
  });

  it('refuses a callback whose state was changed, before spending the code', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    const tampered = callback.replace(`state=${pending.state}`, `state=${'x'.repeat(43)}`);
    expect(tampered).not.toBe(callback);
    await failure(oidc.finish(tampered, pending), OidcFailure.STATE_MISMATCH, [code, pending.codeVerifier]);
    await failure(oidc.finish(callback, { ...pending, state: 'y'.repeat(43) }), OidcFailure.STATE_MISMATCH, [code]);
    // The code was never sent to the provider: the genuine callback still signs in.
    expect(await oidc.finish(callback, pending)).toMatchObject({ email: 'ada@studio.test' });
  });

  it('refuses a code exchanged twice', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    await oidc.finish(callback, pending);
    await failure(oidc.finish(callback, pending), OidcFailure.CODE_REJECTED, [code, pending.codeVerifier]);
  });

  it('refuses a code that expired (the provider issues codes for 60 s; its clock moves 61 s on)', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    await provider.setClockOffset(61);
    try {
      await failure(oidc.finish(callback, pending), OidcFailure.CODE_REJECTED, [code, pending.codeVerifier]);
    } finally {
      await provider.setClockOffset(0);
    }
  });

  it('refuses a code exchanged with another verifier', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    await failure(oidc.finish(callback, { ...pending, codeVerifier: 'v'.repeat(43) }), OidcFailure.CODE_REJECTED, [code]);
  });

  it('refuses an ID token issued for another nonce', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    const error = await failure(oidc.finish(callback, { ...pending, nonce: 'n'.repeat(43) }), OidcFailure.ID_TOKEN_INVALID, [
      code,
      pending.codeVerifier,
    ]);
    // openid-client 6's words (5 said "nonce mismatch"): the detail names the claim that failed.
    expect(error.detail).toMatch(/unexpected ID Token "nonce" claim value/);
  });

  it('refuses an ID token that has expired (the provider clock an hour and a minute behind, past the 30 s tolerance)', async () => {
    const oidc = signIn();
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    await provider.setClockOffset(-(3600 + 60));
    try {
      const error = await failure(oidc.finish(callback, pending), OidcFailure.ID_TOKEN_INVALID, [code, pending.codeVerifier]);
      // openid-client 6's words (5 said "JWT expired"): the detail names the claim that failed.
      expect(error.detail).toMatch(/"exp" \(expiration time\) claim value, expiration is past/);
    } finally {
      await provider.setClockOffset(0);
    }
  });

  it('accepts an ID token past its expiry by less than the 30 s tolerance for clock skew (the provider clock an hour and 10 s behind)', async () => {
    const oidc = signIn();
    const { callback, pending } = await signedInAtProvider(oidc, 'ada');
    await provider.setClockOffset(-(3600 + 10));
    try {
      expect(await oidc.finish(callback, pending)).toMatchObject({ email: 'ada@studio.test' });
    } finally {
      await provider.setClockOffset(0);
    }
  });

  it('answers the provider refusing the sign-in (the person cancels): access_denied', async () => {
    const oidc = signIn();
    const { url, pending } = await oidc.start('/');
    const callback = callbackPathOf(await signInAtProvider(url, { cancel: true }));
    expect(new URL(callback, 'http://x').searchParams.get('error')).toBe('access_denied');
    const error = await failure(oidc.finish(callback, pending), OidcFailure.PROVIDER_ERROR);
    expect(error.message).toBe('The sign-in provider did not sign you in (access_denied).');
  });

  it('refuses a pending sign-in older than 10 minutes by the app clock', async () => {
    let now = Date.now();
    const oidc = signIn({ clock: () => now });
    const { callback, pending } = await signedInAtProvider(oidc, 'ada');
    now += 10 * 60 * 1000 + 1;
    await failure(oidc.finish(callback, pending), OidcFailure.PENDING_EXPIRED);
  });

  it('refuses a client secret the provider does not know, as a misconfiguration', async () => {
    const oidc = new OidcSignIn({ issuer: provider.issuer, ...client, clientSecret: 'not-the-secret' });
    const { callback, pending, code } = await signedInAtProvider(oidc, 'ada');
    await failure(oidc.finish(callback, pending), OidcFailure.MISCONFIGURED, [code, pending.codeVerifier, 'not-the-secret']);
  });

  it('refuses an OIDC_ISSUER the provider does not name itself by', async () => {
    const oidc = new OidcSignIn({ issuer: `${provider.issuer}/`, ...client });
    const error = await failure(oidc.start('/'), OidcFailure.MISCONFIGURED);
    expect(error.detail).toBe(`OIDC_ISSUER is ${provider.issuer}/ but the provider names itself ${provider.issuer}`);
  });

  it('answers an issuer that does not answer within the HTTP timeout as unreachable', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const oidc = new OidcSignIn({ ...client, issuer: `http://127.0.0.1:${port}` }, { httpTimeoutMs: 300 });
      const error = await failure(oidc.start('/'), OidcFailure.PROVIDER_UNREACHABLE);
      expect(error.detail).toMatch(/timed out after 300ms/);
    } finally {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('answers an unreachable issuer as such, discovers it once it answers, and answers its going away during the exchange', async () => {
    const port = await freePort();
    const oidc = new OidcSignIn({ ...client, issuer: `http://127.0.0.1:${port}` });
    const error = await failure(oidc.start('/'), OidcFailure.PROVIDER_UNREACHABLE);
    expect(error.detail).toMatch(/ECONNREFUSED/);

    const late = await startOidcProvider({ client, accounts, port });
    try {
      const { callback, pending } = await signedInAtProvider(oidc, 'ada');
      await late.stop();
      await failure(oidc.finish(callback, pending), OidcFailure.PROVIDER_UNREACHABLE);
    } finally {
      await late.stop(); // once more, in case the sign-in failed before it
    }
  });

  describe('with a provider that puts the email into the ID token', () => {
    let generous: OidcTestProvider;
    beforeAll(async () => {
      generous = await startOidcProvider({ client, accounts, idTokenClaims: true });
    });
    afterAll(() => generous?.stop());

    it('answers the email from the ID token', async () => {
      const oidc = new OidcSignIn({ issuer: generous.issuer, ...client });
      const { callback, pending } = await signedInAtProvider(oidc, 'bob');
      expect(await oidc.finish(callback, pending)).toEqual({
        email: 'bob@studio.test',
        emailVerified: false,
        name: 'Bob',
        subject: 'bob',
        issuer: generous.issuer,
      });
    });
  });
});
