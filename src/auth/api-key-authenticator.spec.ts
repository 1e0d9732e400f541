import { EventEmitter } from 'node:events';
import { InvalidationBus } from '../common/invalidation-bus';
import { ApiKeyEntity } from '../organizations/api-key.entity';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { Permission } from '../organizations/permission';
import { hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';

const KEY = 'fsk_test-key';

function setup() {
  const bus = new EventEmitter();
  let release: (row: ApiKeyEntity | null) => void = () => undefined;
  const lookups: string[] = [];
  const repository = {
    findActiveApiKeyByHash: (keyHash: string) => {
      lookups.push(keyHash);
      return new Promise<ApiKeyEntity | null>((resolve) => (release = resolve));
    },
  } as unknown as OrganizationsRepository;
  const fakeBus = { subscribe: (topic: string, handler: (id: string) => void) => bus.on(topic, handler) } as unknown as InvalidationBus;
  const authenticator = new ApiKeyAuthenticator(repository, fakeBus);
  const row = { id: 'key-1', organizationId: 'org-1', keyHash: hashApiKey(KEY), permissions: [Permission.FLAGS_READ] } as ApiKeyEntity;
  return { authenticator, bus, lookups, row, release: (value: ApiKeyEntity | null) => release(value) };
}

describe('ApiKeyAuthenticator', () => {
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
