// A real OpenID Connect provider for tests: node-oidc-provider (ESM only, which is why it runs here, in a child
// process, rather than inside Jest) on a loopback port. test/support/servers/oidc-provider.ts starts it.
//
// argv[2] is JSON: { clients: [{ client_id, client_secret, redirect_uris }], accounts: [{ sub, email?,
// email_verified?, name? }], idTokenClaims?: boolean, port?: number (0, a free one, by default) }. The scopes
// `email` and `profile` give an account's email, email_verified and name; they go into the ID token only with
// `idTokenClaims` (by default the provider keeps to OpenID Connect Core 5.4: with an access token issued, scope
// claims come from the userinfo endpoint alone). The environment's OIDC_TEST_SIGNING_JWK is the RSA private key (a
// JWK) that signs the ID tokens.
//
// People sign in through the provider's development interactions: a login form that takes an account's `sub` as
// the login (any password), then a consent form; their Cancel link answers the client with error=access_denied.
// PKCE (S256) is required of every client. Issuer and redirect URIs may be plain http: oidc-provider 9 refuses http
// only in the redirect URIs of clients allowed the implicit flow, and these have the code flow alone.
//
// Prints `issuer=<url>` on stdout once it listens. Over the IPC channel, `{ clockOffsetSeconds }` moves this
// process's clock (Date.now, which the provider reads for every expiry), and `{ account }` adds an account or
// replaces the one with its `sub` (a person whose email changed at the provider); each is answered with the message
// itself. The process exits when the channel closes, so it never outlives the test that started it.
import { createServer } from 'node:http';
import process from 'node:process';
import { Provider } from 'oidc-provider';

const { clients, accounts, idTokenClaims = false, port = 0 } = JSON.parse(process.argv[2]);
const signingKey = JSON.parse(process.env.OIDC_TEST_SIGNING_JWK);
const accountsBySub = new Map(accounts.map((account) => [account.sub, account]));

const realNow = Date.now.bind(Date);
let clockOffsetMs = 0;
Date.now = () => realNow() + clockOffsetMs;

let handle = (_request, response) => response.writeHead(503).end();
const server = createServer((request, response) => handle(request, response));

server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients,
    // A signing key of the test run's own (OIDC_TEST_SIGNING_JWK, made by oidc-provider.ts): the provider's built-in
    // development key is the same everywhere.
    jwks: { keys: [{ ...signingKey, kid: 'test', use: 'sig' }] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: !idTokenClaims,
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const account = accountsBySub.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ ...account }) };
    },
  });
  handle = provider.callback();
  process.stdout.write(`issuer=${issuer}\n`);
});

process.on('message', (message) => {
  if (message.account) accountsBySub.set(message.account.sub, message.account);
  else clockOffsetMs = message.clockOffsetSeconds * 1000;
  process.send(message);
});
process.on('disconnect', () => process.exit(0));
