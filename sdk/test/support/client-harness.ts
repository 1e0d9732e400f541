import { FlagstoreClient, FlagstoreClientOptions, FlagstoreError } from '../../src';
import { ManualScheduler } from './manual-scheduler';
import { RecordingFetch } from './recording-fetch';

export interface Harness {
  scheduler: ManualScheduler;
  recorder: RecordingFetch;
  client: FlagstoreClient;
}

/**
 * The clients a test file makes, on a ManualScheduler and a RecordingFetch (jitter's random fixed at 0.5, the
 * middle: delays are exactly the nominal ones unless a test picks another), closed after each test.
 */
export function useClients() {
  const open: FlagstoreClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  /** `recorder`: one the test has already set up, for what the client's very first request should meet. */
  return (
    options: Partial<FlagstoreClientOptions> & Pick<FlagstoreClientOptions, 'baseUrl' | 'apiKey'>,
    recorder = new RecordingFetch(),
  ): Harness => {
    const scheduler = new ManualScheduler();
    const client = new FlagstoreClient({ scheduler, fetch: recorder.fetch, random: () => 0.5, ...options });
    open.push(client);
    return { scheduler, recorder, client };
  };
}

/** Fires the soonest timer and resolves with the delay of the next one the client sets. */
export async function tick(scheduler: ManualScheduler): Promise<number> {
  const next = scheduler.nextTimer();
  scheduler.runNext();
  return (await next).delay;
}

export function nextChange(client: FlagstoreClient): Promise<string[]> {
  return new Promise((resolve) => {
    const listener = (keys: string[]) => {
      client.off('change', listener);
      resolve(keys);
    };
    client.on('change', listener);
  });
}

export function nextError(client: FlagstoreClient): Promise<FlagstoreError> {
  return new Promise((resolve) => {
    const listener = (error: FlagstoreError) => {
      client.off('error', listener);
      resolve(error);
    };
    client.on('error', listener);
  });
}

/** Every `error` the client emits, in order. */
export function collectErrors(client: FlagstoreClient): FlagstoreError[] {
  const errors: FlagstoreError[] = [];
  client.on('error', (error) => errors.push(error));
  return errors;
}
