using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore
{
    public sealed class FlagstoreClientOptions
    {
        /// <summary>The service's API base, with its version: https://flags.example.com/v1.</summary>
        public string BaseUrl { get; set; }
        /// <summary>An API key with FLAGS_READ.</summary>
        public string ApiKey { get; set; }
        /// <summary>
        /// The attributes flag rules read, for every call: this server's own (serverId, region, build, …). A call's
        /// context extends it (a player's targetingKey, …), its attributes winning.
        /// </summary>
        public IDictionary<string, object> Context { get; set; }
        /// <summary>Also listen on GET /flags/config/stream and re-read as soon as the config changes. Default false.</summary>
        public bool Stream { get; set; }
        /// <summary>Where the last good payload is kept, so a restart while the service is down still has flags.</summary>
        public string CacheFile { get; set; }
        /// <summary>Default: an HttpClientTransport of the client's own.</summary>
        public ITransport Transport { get; set; }
        /// <summary>What the client waits with (poll interval, backoff, Retry-After, reconnects). Default: SystemScheduler.</summary>
        public IScheduler Scheduler { get; set; }
        /// <summary>Jitter's source, in [0, 1). Default: System.Random.</summary>
        public Func<double> Random { get; set; }
        /// <summary>A config request (or the opening of the stream) that takes longer fails as Timeout. Default 10 000.</summary>
        public int RequestTimeoutMs { get; set; }
        /// <summary>An open stream that sends nothing (not even its keep-alive comment) for this long is dropped. Default 45 000.</summary>
        public int StreamSilenceTimeoutMs { get; set; }
        /// <summary>
        /// Where Changed and Error are raised. Default: the SynchronizationContext of the thread that constructs the
        /// client (Unity's main thread, say), or, when it has none, the thread that made the change.
        /// </summary>
        public SynchronizationContext EventContext { get; set; }
        /// <summary>
        /// Default true: the client starts on its own right after the constructor (on the scheduler). False: call
        /// Start() after subscribing to Changed and Error, so that no event can come before a handler is attached.
        /// </summary>
        public bool AutoStart { get; set; }

        public FlagstoreClientOptions()
        {
            RequestTimeoutMs = 10000;
            StreamSilenceTimeoutMs = 45000;
            AutoStart = true;
        }
    }

    /// <summary>
    /// Serves a Flagstore organization's flags to a game server from memory, and keeps them current: it polls
    /// GET /flags/config with If-None-Match every pollIntervalSeconds (±10 %), or, with Stream, re-reads when the
    /// change stream says so and polls only while the stream is down. Through an outage it keeps the last good payload
    /// (and the cache file keeps it across restarts). A 401 or 403 stops it for good. Safe to use from any thread.
    /// </summary>
    public sealed class FlagstoreClient : IDisposable, IChangeStreamHost
    {
        const string What = "GET /flags/config";
        static readonly Dictionary<string, Flag> NoFlags = new Dictionary<string, Flag>();

        readonly string configUrl;
        readonly string apiKey;
        readonly ITransport transport;
        readonly IDisposable ownTransport;
        readonly IScheduler scheduler;
        readonly Func<double> random;
        readonly int requestTimeoutMs;
        readonly string cacheFile;
        readonly ChangeStream stream;
        readonly Dictionary<string, object> context;
        readonly SynchronizationContext eventContext;

        readonly object gate = new object();
        readonly List<Action> outbox = new List<Action>();
        ConfigPayload payload;
        volatile Dictionary<string, Flag> flags = NoFlags;
        string persistedEtag;
        readonly TaskCompletionSource<bool> ready = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        bool readySettled;
        PollTimer pollTimer;
        object startHandle;
        bool started;
        /// <summary>Failed reads in a row (network, timeout, 5xx, unexpected answers): the backoff's exponent.</summary>
        int failures;
        /// <summary>A 429's Retry-After: no request, poll or stream, before this scheduler time.</summary>
        double holdUntil;
        Task reading;
        bool readAgain;
        string lastAnnounced;
        bool streamOpen;
        readonly HashSet<CancellationTokenSource> inFlight = new HashSet<CancellationTokenSource>();
        /// <summary>After a 401/403, or Close(): no request is ever sent again.</summary>
        bool stopped;
        bool closed;

        sealed class PollTimer
        {
            public object Handle;
        }

        sealed class Outcome
        {
            public ConfigPayload Payload;
            public FlagstoreException Error;
            public double? RetryAfterMs;
        }

        /// <summary>The attributes changed: the keys whose value, type, runtime or rules changed, or that came or went, sorted. Not raised for the first load.</summary>
        public event Action<IList<string>> Changed;
        public event Action<FlagstoreException> Error;

        public FlagstoreClient(string baseUrl, string apiKey, IDictionary<string, object> context = null, string cacheFile = null, bool stream = false)
            : this(new FlagstoreClientOptions { BaseUrl = baseUrl, ApiKey = apiKey, Context = context, CacheFile = cacheFile, Stream = stream })
        {
        }

        public FlagstoreClient(FlagstoreClientOptions options)
        {
            if (options == null) throw new ArgumentNullException("options");
            if (string.IsNullOrEmpty(options.ApiKey)) throw new ArgumentException("FlagstoreClient: ApiKey is required", "options");
            Uri uri;
            if (options.BaseUrl == null || !Uri.TryCreate(options.BaseUrl, UriKind.Absolute, out uri) || (uri.Scheme != "http" && uri.Scheme != "https"))
                throw new ArgumentException("FlagstoreClient: BaseUrl must be an http(s) URL such as https://flags.example.com/v1", "options");
            configUrl = options.BaseUrl.TrimEnd('/') + "/flags/config";
            apiKey = options.ApiKey;
            context = options.Context == null ? new Dictionary<string, object>() : new Dictionary<string, object>(options.Context);
            if (options.Transport == null)
            {
                var own = new HttpClientTransport();
                transport = own;
                ownTransport = own;
            }
            else transport = options.Transport;
            scheduler = options.Scheduler ?? SystemScheduler.Instance;
            random = options.Random ?? SharedRandom;
            requestTimeoutMs = options.RequestTimeoutMs > 0 ? options.RequestTimeoutMs : 10000;
            cacheFile = options.CacheFile;
            eventContext = options.EventContext ?? SynchronizationContext.Current;
            if (options.Stream)
            {
                stream = new ChangeStream(configUrl + "/stream", apiKey, transport, scheduler, random, requestTimeoutMs,
                    options.StreamSilenceTimeoutMs > 0 ? options.StreamSilenceTimeoutMs : 45000, this);
            }
            if (options.AutoStart)
            {
                lock (gate) startHandle = scheduler.SetTimeout(Start, 0);
            }
        }

        static readonly Random Randomness = new Random();

        static double SharedRandom()
        {
            lock (Randomness) return Randomness.NextDouble();
        }

        /// <summary>
        /// Completes once the client has flags to serve: from the service, or, when the service cannot be reached, from
        /// the cache file. Faults when there is neither (the client keeps retrying, and raises Changed with every key when
        /// it first gets them), on a 401 or 403 (it has stopped), or on Close() before either.
        /// </summary>
        public Task Ready
        {
            get { return ready.Task; }
        }

        /// <summary>
        /// Blocks until Ready completes or the timeout passes: true when the client has flags to serve, false when it
        /// does not (yet): the getters then give their fallbacks and the client keeps trying. For a Main without async.
        /// </summary>
        public bool WaitUntilReady(TimeSpan timeout)
        {
            try
            {
                return ready.Task.Wait(timeout);
            }
            catch (AggregateException)
            {
                return false;
            }
        }

        /// <summary>The etag of the payload served, or null before the first.</summary>
        public string Etag
        {
            get { lock (gate) return payload == null ? null : payload.Etag; }
        }

        /// <summary>Starts the client when it was made with AutoStart = false; does nothing the second time.</summary>
        public void Start()
        {
            lock (gate)
            {
                if (started || stopped) return;
                started = true;
                if (startHandle != null) scheduler.ClearTimeout(startHandle);
                startHandle = null;
            }
            StartAsync();
        }

        async void StartAsync()
        {
            if (cacheFile != null) LoadCache(cacheFile);
            lock (gate) if (stopped) return;
            await Read().ConfigureAwait(false);
            bool go;
            lock (gate) go = !stopped;
            if (go && stream != null) stream.Start();
        }

        /// <summary>
        /// A boolean flag's value for the context (the client's default context extended by context): the first of its
        /// rules whose conditions all hold, else its value. Unknown keys and flags of another type give the fallback.
        /// </summary>
        public bool GetBoolean(string key, bool fallback, IDictionary<string, object> context = null)
        {
            object value;
            return ValueOf(key, "boolean", context, out value) ? (bool)value : fallback;
        }

        public string GetString(string key, string fallback, IDictionary<string, object> context = null)
        {
            object value;
            return ValueOf(key, "string", context, out value) ? (string)value : fallback;
        }

        public double GetNumber(string key, double fallback, IDictionary<string, object> context = null)
        {
            object value;
            return ValueOf(key, "number", context, out value) ? (double)value : fallback;
        }

        /// <summary>A json flag's value: a copy of its own (Dictionary&lt;string, object&gt;, List&lt;object&gt;, double, string, bool or null).</summary>
        public object GetJson(string key, object fallback, IDictionary<string, object> context = null)
        {
            object value;
            return ValueOf(key, "json", context, out value) ? Json.Copy(value) : fallback;
        }

        /// <summary>A json flag's value as JSON text (for JsonUtility.FromJson and the like), or fallback.</summary>
        public string GetJsonText(string key, string fallback, IDictionary<string, object> context = null)
        {
            object value;
            return ValueOf(key, "json", context, out value) ? Json.Write(value) : fallback;
        }

        /// <summary>Every flag's value for the context, as {key: value}, server ones included: for the server's own use, never for players.</summary>
        public Dictionary<string, object> All(IDictionary<string, object> context = null)
        {
            return Relay.All(flags.Values, ContextWith(context));
        }

        /// <summary>
        /// Only the shared flags, as {key: value}, resolved for the context (a player's targetingKey and attributes): what a
        /// server may relay to that player. Never the rules themselves. Json.Write turns it into the text to send.
        /// </summary>
        public Dictionary<string, object> ClientSafe(IDictionary<string, object> context = null)
        {
            return Relay.ClientSafe(flags.Values, ContextWith(context));
        }

        /// <summary>Stops polling and the stream and abandons what is in flight; a cache write under way finishes first.</summary>
        public void Close()
        {
            lock (gate)
            {
                if (!closed)
                {
                    closed = true;
                    Stop();
                    RejectReady(new FlagstoreException(FlagstoreErrorKind.Closed, "the client was closed before it was ready"));
                    outbox.Clear();
                }
            }
            if (ownTransport != null) ownTransport.Dispose();
        }

        public void Dispose()
        {
            Close();
        }

        bool ValueOf(string key, string type, IDictionary<string, object> extra, out object value)
        {
            Flag flag;
            value = null;
            if (key == null || !flags.TryGetValue(key, out flag) || flag.Type != type) return false;
            // ConfigPayload checked that every value, the rules' included, matches its flag's type.
            value = flag.Rules == null ? flag.Value : Targeting.Evaluate(flag, ContextWith(extra)).Value;
            return true;
        }

        IDictionary<string, object> ContextWith(IDictionary<string, object> extra)
        {
            if (extra == null || extra.Count == 0) return context;
            var merged = new Dictionary<string, object>(context);
            foreach (var entry in extra) merged[entry.Key] = entry.Value;
            return merged;
        }

        void LoadCache(string path)
        {
            try
            {
                var cached = CacheFile.Read(path);
                lock (gate)
                {
                    if (cached == null || payload != null) return;
                    Use(cached);
                    persistedEtag = cached.Etag;
                }
            }
            catch (Exception error)
            {
                lock (gate)
                {
                    Post(new FlagstoreException(FlagstoreErrorKind.Cache, "the cache file " + path + " could not be read: " + error.Message, null, null, error));
                }
            }
            finally
            {
                Flush();
            }
        }

        /// <summary>Reads the config now. A read under way is shared; a change announced meanwhile is read right after it.</summary>
        Task Read()
        {
            TaskCompletionSource<bool> source;
            lock (gate)
            {
                if (stopped) return Task.FromResult(true);
                if (reading != null)
                {
                    readAgain = true;
                    return reading;
                }
                var held = holdUntil - scheduler.Now();
                if (held > 0)
                {
                    if (pollTimer == null) SchedulePoll(held);
                    return Task.FromResult(true);
                }
                CancelPoll();
                source = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                reading = source.Task;
            }
            RunRead(source);
            return source.Task;
        }

        async void RunRead(TaskCompletionSource<bool> source)
        {
            var succeeded = false;
            try
            {
                succeeded = await ReadOnce().ConfigureAwait(false);
            }
            catch (Exception error)
            {
                lock (gate) Post(FlagstoreException.FromFailure(error, What));
                Flush();
            }
            bool again;
            lock (gate)
            {
                reading = null;
                again = readAgain;
                readAgain = false;
                again = again && succeeded && (lastAnnounced == null || payload == null || lastAnnounced != payload.Etag);
            }
            source.TrySetResult(succeeded);
            if (again) Deadline.Observe(Read());
        }

        /// <summary>One request and what follows from its answer; true when it brought a payload or confirmed the one held.</summary>
        async Task<bool> ReadOnce()
        {
            var outcome = await RequestConfig().ConfigureAwait(false);
            try
            {
                lock (gate)
                {
                    if (stopped) return false;
                    if (outcome.Error != null)
                    {
                        ReadFailed(outcome.Error, outcome.RetryAfterMs);
                        return false;
                    }
                    failures = 0;
                    var changed = outcome.Payload != null ? Use(outcome.Payload) : new List<string>();
                    if (outcome.Payload != null) Persist(outcome.Payload);
                    if (!streamOpen) SchedulePoll(Timing.PollDelay(payload != null ? payload.PollIntervalSeconds : Timing.DefaultPollIntervalSeconds, random()));
                    if (!readySettled) ResolveReady();
                    else if (changed.Count > 0) Post(changed);
                    return true;
                }
            }
            finally
            {
                Flush();
            }
        }

        async Task<Outcome> RequestConfig()
        {
            var controller = new CancellationTokenSource();
            var headers = new Dictionary<string, string> { { "Authorization", "Bearer " + apiKey }, { "Accept", "application/json" } };
            lock (gate)
            {
                inFlight.Add(controller);
                // The service's validator is weak (W/"etag"); sending it back exactly as served is what it matches fastest.
                if (payload != null) headers["If-None-Match"] = Timing.IfNoneMatch(payload.Etag);
            }
            try
            {
                var response = await Deadline.Within(token => transport.SendAsync(new TransportRequest(configUrl, headers), token),
                    controller, requestTimeoutMs, What).ConfigureAwait(false);
                bool held;
                lock (gate) held = payload != null;
                if (response.Status == 304 && held) return new Outcome();
                if (response.Status == 200)
                {
                    try
                    {
                        return new Outcome { Payload = ConfigPayload.Parse(response.Body) };
                    }
                    catch (FormatException error)
                    {
                        return new Outcome
                        {
                            Error = new FlagstoreException(FlagstoreErrorKind.InvalidPayload,
                                What + " answered 200 with a body that is not a config payload: " + error.Message.Replace("JSON: ", ""), 200, null, error),
                        };
                    }
                }
                var retryAfterMs = Timing.ParseRetryAfter(response.Header("Retry-After"), scheduler.Now());
                var retryAfterSeconds = retryAfterMs == null ? (int?)null : (int)Math.Ceiling(retryAfterMs.Value / 1000);
                return new Outcome { Error = FlagstoreException.FromStatus(What, response.Status, response.Body, retryAfterSeconds), RetryAfterMs = retryAfterMs };
            }
            catch (Exception error)
            {
                return new Outcome { Error = FlagstoreException.FromFailure(error, What) };
            }
            finally
            {
                lock (gate) inFlight.Remove(controller);
            }
        }

        void ReadFailed(FlagstoreException error, double? retryAfterMs)
        {
            Post(error);
            if (error.IsFatal)
            {
                Stop();
                RejectReady(error);
                return;
            }
            SchedulePoll(WaitAfter(error, retryAfterMs));
            // Through an outage the last good payload keeps serving; at start that is the cache file's, when there is one.
            if (payload != null) ResolveReady();
            else RejectReady(error);
        }

        /// <summary>How long to wait after a failure: Retry-After for a 429 that names one, else the next backoff step.</summary>
        double WaitAfter(FlagstoreException error, double? retryAfterMs)
        {
            if (error.Kind == FlagstoreErrorKind.RateLimited && retryAfterMs != null)
            {
                holdUntil = Math.Max(holdUntil, scheduler.Now() + retryAfterMs.Value);
                return Timing.RetryAfterDelay(retryAfterMs.Value, random());
            }
            failures += 1;
            var delay = Timing.BackoffDelay(failures, random());
            if (error.Kind == FlagstoreErrorKind.RateLimited) holdUntil = Math.Max(holdUntil, scheduler.Now() + delay);
            return delay;
        }

        /// <summary>Makes next the payload served; returns the keys that changed.</summary>
        List<string> Use(ConfigPayload next)
        {
            var map = new Dictionary<string, Flag>(StringComparer.Ordinal);
            foreach (var flag in next.Flags) map[flag.Key] = flag;
            var changed = ConfigPayload.ChangedKeys(flags, map);
            payload = next;
            flags = map;
            return changed;
        }

        /// <summary>Under the lock, so writes run one after another and an older payload never lands after a newer one.</summary>
        void Persist(ConfigPayload next)
        {
            if (cacheFile == null || next.Etag == persistedEtag) return;
            persistedEtag = next.Etag;
            try
            {
                CacheFile.Write(cacheFile, next);
            }
            catch (Exception error)
            {
                Post(new FlagstoreException(FlagstoreErrorKind.Cache, "the cache file " + cacheFile + " could not be written: " + error.Message, null, null, error));
            }
        }

        void SchedulePoll(double delayMs)
        {
            CancelPoll();
            if (stopped) return;
            var timer = new PollTimer();
            pollTimer = timer;
            timer.Handle = scheduler.SetTimeout(() =>
            {
                lock (gate)
                {
                    if (pollTimer != timer) return;
                    pollTimer = null;
                }
                Read();
            }, delayMs);
        }

        void CancelPoll()
        {
            if (pollTimer != null) scheduler.ClearTimeout(pollTimer.Handle);
            pollTimer = null;
        }

        string IChangeStreamHost.CurrentEtag()
        {
            lock (gate) return payload == null ? null : payload.Etag;
        }

        double IChangeStreamHost.HeldUntil()
        {
            lock (gate) return holdUntil;
        }

        void IChangeStreamHost.Opened()
        {
            lock (gate)
            {
                streamOpen = true;
                // While the stream is up, events bring changes; a retry after a failure stays scheduled.
                if (failures == 0 && holdUntil <= scheduler.Now()) CancelPoll();
            }
        }

        void IChangeStreamHost.Dropped()
        {
            lock (gate)
            {
                streamOpen = false;
                if (pollTimer == null && reading == null && !stopped)
                    SchedulePoll(Timing.PollDelay(payload != null ? payload.PollIntervalSeconds : Timing.DefaultPollIntervalSeconds, random()));
            }
        }

        void IChangeStreamHost.Announced(string etag)
        {
            lock (gate)
            {
                lastAnnounced = etag;
                if (etag != null && payload != null && etag == payload.Etag) return;
            }
            Read();
        }

        void IChangeStreamHost.Failed(FlagstoreException error, double? retryAfterMs)
        {
            lock (gate)
            {
                Post(error);
                if (error.IsFatal) Stop();
                else if (error.Kind == FlagstoreErrorKind.RateLimited && retryAfterMs != null)
                    holdUntil = Math.Max(holdUntil, scheduler.Now() + retryAfterMs.Value);
            }
            Flush();
        }

        void Stop()
        {
            stopped = true;
            CancelPoll();
            if (startHandle != null) scheduler.ClearTimeout(startHandle);
            startHandle = null;
            if (stream != null) stream.Close();
            foreach (var controller in inFlight) Deadline.TryCancel(controller);
            inFlight.Clear();
        }

        void ResolveReady()
        {
            if (readySettled) return;
            readySettled = true;
            ready.TrySetResult(true);
        }

        void RejectReady(FlagstoreException error)
        {
            if (readySettled) return;
            readySettled = true;
            ready.TrySetException(error);
            // Ready is optional: a fault nobody asked for must not surface as an unobserved task exception.
            Deadline.Observe(ready.Task);
        }

        void Post(FlagstoreException error)
        {
            outbox.Add(() =>
            {
                var handler = Error;
                if (handler != null) handler(error);
            });
        }

        void Post(List<string> keys)
        {
            var list = keys.AsReadOnly();
            outbox.Add(() =>
            {
                var handler = Changed;
                if (handler != null) handler(list);
            });
        }

        /// <summary>Raises what was posted under the lock, outside it; a handler's own exception does not break the client's schedule.</summary>
        void Flush()
        {
            Action[] pending;
            lock (gate)
            {
                if (outbox.Count == 0) return;
                pending = outbox.ToArray();
                outbox.Clear();
            }
            foreach (var action in pending)
            {
                if (eventContext != null) eventContext.Post(state => Raise((Action)state), action);
                else Raise(action);
            }
        }

        static void Raise(Action action)
        {
            try
            {
                action();
            }
            catch (Exception)
            {
                // A handler's bug is the handler's: the client goes on.
            }
        }
    }
}
