// The OFREP test page's module: a web app reading Flagstore's flags through the real OpenFeature web SDK and
// its OFREP provider, loaded unbundled through the page's import map. The jest test calls window.ofrep through
// page.evaluate; every function answers plain data (what the app could see) and never throws.
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

/** Every ConfigurationChanged event the client received: { flagsChanged, message, at }. */
const changes = [];
/** Every other provider event (Ready, Stale, Error), for failure messages: { type, message, at }. */
const events = [];
/**
 * Every request the provider sent, through its fetchImplementation option:
 * { url, ifNoneMatch, at, status?, etag?, eventStreams?, failed? }.
 */
const requests = [];
let client;

function failure(error) {
  return { name: error && error.name, message: String(error && error.message) };
}

/** The provider's own fetch, recorded: which refetch carried what (the stream's ETag, If-None-Match) and got what. */
async function recordingFetch(request, init) {
  const entry = { url: request.url, ifNoneMatch: request.headers.get('If-None-Match'), at: performance.now() };
  requests.push(entry);
  try {
    const response = await fetch(request, init);
    entry.status = response.status;
    entry.etag = response.headers.get('ETag');
    if (response.status === 200)
      entry.eventStreams = await response
        .clone()
        .json()
        .then(
          (body) => body.eventStreams,
          () => undefined,
        );
    return response;
  } catch (error) {
    entry.failed = failure(error);
    throw error;
  }
}

const DETAILS = {
  boolean: (key, defaultValue) => client.getBooleanDetails(key, defaultValue),
  string: (key, defaultValue) => client.getStringDetails(key, defaultValue),
  number: (key, defaultValue) => client.getNumberDetails(key, defaultValue),
  object: (key, defaultValue) => client.getObjectDetails(key, defaultValue),
};

window.ofrep = {
  /**
   * Sets an OFREPWebProvider up ({ baseUrl, headers: { name: value }, pollInterval }) and waits for it:
   * answers { status } (the client's provider status), with { error } when initialization failed.
   */
  async start({ baseUrl, headers, pollInterval }) {
    const provider = new OFREPWebProvider({
      baseUrl,
      headers: Object.entries(headers),
      pollInterval,
      // Nothing but the change stream may refresh the flags here: no refetch when the tab turns visible, no
      // flags from a previous run's localStorage.
      disableVisibilityRefresh: true,
      cacheMode: 'disabled',
      fetchImplementation: recordingFetch,
    });
    client = OpenFeature.getClient();
    client.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
      changes.push({ flagsChanged: details.flagsChanged ?? [], message: details.message, at: performance.now() });
    });
    for (const type of [ProviderEvents.Ready, ProviderEvents.Stale, ProviderEvents.Error]) {
      client.addHandler(type, (details) => events.push({ type, message: details && details.message, at: performance.now() }));
    }
    try {
      await OpenFeature.setProviderAndWait(provider);
      return { status: client.providerStatus };
    } catch (error) {
      return { status: client.providerStatus, error: failure(error) };
    }
  },

  /** Evaluation details, one per [{ key, type: 'boolean' | 'string' | 'number' | 'object', defaultValue }]. */
  read(reads) {
    return reads.map(({ key, type, defaultValue }) => {
      const { flagKey, value, reason, variant, flagMetadata, errorCode, errorMessage } = DETAILS[type](key, defaultValue);
      return { flagKey, value, reason, variant, flagMetadata: { ...flagMetadata }, errorCode, errorMessage };
    });
  },

  /** What was recorded so far: { changes, events, requests, providerStatus }. */
  recorded() {
    return { changes, events, requests, providerStatus: client && client.providerStatus };
  },
};
