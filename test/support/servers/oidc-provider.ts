import { ChildProcess, spawn } from 'node:child_process';
import { generateKeyPair, JsonWebKey } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = join(__dirname, 'oidc-provider-process.mjs');

/**
 * How long a provider may take to say it listens. It starts in about half a second on an idle machine, and in 2 to
 * 4 s with eight busy processes on two cores; a CI run once saw more than 10 s while every core was taken by Jest's
 * workers and their databases. Jest's hooks have 60 s.
 */
const START_DEADLINE_MS = 30_000;

let signingKey: Promise<JsonWebKey> | undefined;

/**
 * The providers' RS256 signing key: one per test process, generated off the event loop on first use. An RSA key
 * costs from 0.1 to more than 2 s of CPU under load, which each provider used to spend again before it listened.
 */
function testSigningKey(): Promise<JsonWebKey> {
  signingKey ??= promisify(generateKeyPair)('rsa', { modulusLength: 2048 }).then(({ privateKey }) => privateKey.export({ format: 'jwk' }));
  return signingKey;
}

/** An account at the provider, with the claims it serves (the `email` and `profile` scopes). Sign in as its `sub`. */
export interface OidcTestAccount {
  sub: string;
  email?: string;
  /** A string, as Amazon Cognito's userinfo endpoint sends it, to check that a client reads it as meant. */
  email_verified?: boolean | string;
  name?: string;
}

export interface OidcProviderOptions {
  /** The one client the provider knows: a confidential client (client_secret_basic), PKCE required. */
  client: { clientId: string; clientSecret: string; redirectUri: string };
  accounts: OidcTestAccount[];
  /**
   * Put the email and name into the ID token too. By default the provider keeps to OpenID Connect Core 5.4, as many
   * do: with an access token issued, those claims come from the userinfo endpoint only.
   */
  idTokenClaims?: boolean;
  /** A loopback port of the test's choosing (the issuer is known before the provider runs); a free one by default. */
  port?: number;
}

export interface OidcTestProvider {
  /** http://127.0.0.1:<port>, the provider's issuer identifier and the base of its discovery document. */
  issuer: string;
  /**
   * Sets the provider's clock `seconds` ahead of real time (behind when negative), for everything it issues and
   * checks from now on: a code expires without waiting, an ID token is issued already expired, a skew is simulated.
   */
  setClockOffset(seconds: number): Promise<void>;
  /** Adds an account, or replaces the one with its `sub` (its email changed at the provider, say), for sign-ins from now on. */
  setAccount(account: OidcTestAccount): Promise<void>;
  /** Ends the provider (by PID) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * A real OpenID Connect provider (node-oidc-provider, test/support/servers/oidc-provider-process.mjs) in a child process on
 * a free loopback port: it issues real codes and signed ID tokens. Call stop() in afterAll; should the test process
 * die first, the provider exits when its IPC channel closes.
 */
export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcTestProvider> {
  const { client, accounts, idTokenClaims, port } = options;
  const config = {
    clients: [{ client_id: client.clientId, client_secret: client.clientSecret, redirect_uris: [client.redirectUri] }],
    accounts,
    idTokenClaims,
    port,
  };
  // The private key goes by the environment, which only this user can read, rather than by the command line.
  const env = { ...process.env, OIDC_TEST_SIGNING_JWK: JSON.stringify(await testSigningKey()) };
  const child = spawn(process.execPath, [SCRIPT, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

  const issuer = await new Promise<string>((resolve, reject) => {
    const exitedEarly = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(new Error(`the OpenID provider exited (${code ?? signal}):\n${output}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`the OpenID provider did not start within ${START_DEADLINE_MS / 1000} s:\n${output}`));
    }, START_DEADLINE_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.once('exit', exitedEarly);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^issuer=(\S+)$/m.exec(output);
      if (line) {
        clearTimeout(timer);
        child.off('exit', exitedEarly);
        resolve(line[1]);
      }
    });
  });

  return {
    issuer,
    setClockOffset: (seconds) => send(child, { clockOffsetSeconds: seconds }),
    setAccount: (account) => send(child, { account }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Sends `message` and waits for the provider's echo of it, so that what follows runs on the new clock or accounts. */
function send(child: ChildProcess, message: { clockOffsetSeconds: number } | { account: OidcTestAccount }): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve());
    child.send(message, (error) => error && reject(error));
  });
}
