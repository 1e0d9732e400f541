import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { InvalidationBus } from '../common/invalidation-bus';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { Permission } from '../organizations/permission';
import { hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';

const KEY = 'fsk_test-key';
/** Computed here, not with `hashApiKey`: the stored form of a key is the hex SHA-256 of the key. */
const KEY_SHA256 = createHash('sha256').update(KEY).digest('hex');

type ApiKeyRow = Awaited<ReturnType<OrganizationsRepository['findActiveApiKeyByHash']>>;

function setup() {
  const bus = new EventEmitter();
  let release: (row: ApiKeyRow) => void = () => undefined;
  const lookups: string[] = [];
  const repository = {
    findActiveApiKeyByHash: (keyHash: string) => {
      lookups.push(keyHash);
      return new Promise<ApiKeyRow>((resolve) => (release = resolve));
    },
  } as unknown as OrganizationsRepository;
  const fakeBus = { subscribe: (topic: string, handler: (id: string) => void) => bus.on(topic, handler) } as unknown as InvalidationBus;
  const authenticator = new ApiKeyAuthenticator(repository, fakeBus);
  const row = { id: 'key-1', organizationId: 'org-1', keyHash: KEY_SHA256, permissions: [Permission.FLAGS_READ] } as NonNullable<ApiKeyRow>;
  return { authenticator, bus, lookups, row, release: (value: ApiKeyRow) => release(value) };
}

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashApiKey(KEY)).toBe(KEY_SHA256);
    expect(KEY_SHA256).toBe('453fea9b1fcae80fa406e84c804aa629be35830298d85f9c3e5576dd49d38ebc');
  });
});

describe('ApiKeyAuthenticator', () => {
  it('looks a key up by the SHA-256 of the key, never by the key itself', async () => {
    const { authenticator, lookups, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    expect(await pending).toMatchObject({ keyId: 'key-1', organizationId: 'org-1' });
    expect(lookups).toEqual([KEY_SHA256]);
  });

  it('refuses a row whose stored hash is not the hash of the key presented', async () => {
    const { authenticator, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release({ ...row, keyHash: createHash('sha256').update('fsk_another-key').digest('hex') });
    expect(await pending).toBeNull();
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('caches a found key, so the next request needs no lookup', async () => {
    const { authenticator, lookups, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    expect(await pending).toMatchObject({ keyId: 'key-1', organizationId: 'org-1' });
    expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
    await authenticator.authenticate(`Bearer ${KEY}`);
    expect(lookups).toHaveLength(1);
  });

  it('drops a key at once when its revocation is heard', async () => {
    const { authenticator, bus, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await pending;
    bus.emit('apiKey', 'key-1');
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('does not cache a key whose revocation arrived while it was being looked up', async () => {
    const { authenticator, bus, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    bus.emit('apiKey', 'key-1'); // revoked and committed after the lookup read the row
    release(row);
    await pending;
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('refuses missing, malformed and unknown keys', async () => {
    const { authenticator, release } = setup();
    expect(await authenticator.authenticate(undefined)).toBeNull();
    expect(await authenticator.authenticate('Basic abc')).toBeNull();
    const pending = authenticator.authenticate('Bearer fsk_unknown');
    release(null);
    expect(await pending).toBeNull();
  });
});
