using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore
{
    /// <summary>What the change stream needs from the client it serves. Called without the stream's lock held.</summary>
    interface IChangeStreamHost
    {
        /// <summary>The etag of the payload the client holds, sent as Last-Event-ID: the service then announces only a newer one.</summary>
        string CurrentEtag();
        /// <summary>Until when (scheduler time) a 429 holds back every request.</summary>
        double HeldUntil();
        void Opened();
        /// <summary>A refetchEvaluation event: the config is now at etag (null when the event named none).</summary>
        void Announced(string etag);
        void Dropped();
        void Failed(FlagstoreException error, double? retryAfterMs);
    }

    /// <summary>
    /// GET /flags/config/stream, read as server-sent events. It reconnects on its own: after the service's retry: hint
    /// (with jitter) when the service ended a stream that worked, with exponential backoff when it was refused or
    /// dropped, and never before a 429's Retry-After. A stream silent for longer than three of the service's 15 s
    /// keep-alive comments is taken for dead.
    /// </summary>
    sealed class ChangeStream
    {
        const string What = "GET /flags/config/stream";

        readonly string url;
        readonly string apiKey;
        readonly ITransport transport;
        readonly IScheduler scheduler;
        readonly Func<double> random;
        readonly int requestTimeoutMs;
        readonly int silenceTimeoutMs;
        readonly IChangeStreamHost host;

        readonly object gate = new object();
        object timer;
        bool hasTimer;
        CancellationTokenSource controller;
        int failures;
        double? retryMs;
        bool closed;

        public ChangeStream(string url, string apiKey, ITransport transport, IScheduler scheduler, Func<double> random,
            int requestTimeoutMs, int silenceTimeoutMs, IChangeStreamHost host)
        {
            this.url = url;
            this.apiKey = apiKey;
            this.transport = transport;
            this.scheduler = scheduler;
            this.random = random;
            this.requestTimeoutMs = requestTimeoutMs;
            this.silenceTimeoutMs = silenceTimeoutMs;
            this.host = host;
        }

        public void Start()
        {
            lock (gate) if (closed || hasTimer || controller != null) return;
            Connect();
        }

        public void Close()
        {
            CancellationTokenSource current;
            lock (gate)
            {
                closed = true;
                if (hasTimer) scheduler.ClearTimeout(timer);
                hasTimer = false;
                current = controller;
            }
            if (current != null) Deadline.TryCancel(current);
        }

        void Schedule(double delayMs)
        {
            lock (gate)
            {
                if (closed) return;
                hasTimer = true;
                object handle = null;
                handle = timer = scheduler.SetTimeout(() =>
                {
                    lock (gate)
                    {
                        if (!hasTimer || timer != handle) return;
                        hasTimer = false;
                    }
                    Connect();
                }, delayMs);
            }
        }

        async void Connect()
        {
            try
            {
                await ConnectAsync().ConfigureAwait(false);
            }
            catch (Exception error)
            {
                // A bug of this class must not end the process from a thread-pool thread: report it as a stream error.
                host.Failed(new FlagstoreException(FlagstoreErrorKind.Stream, What + ": " + error.Message, null, null, error), null);
            }
        }

        async Task ConnectAsync()
        {
            var held = host.HeldUntil() - scheduler.Now();
            if (held > 0) { Schedule(held); return; }
            var current = new CancellationTokenSource();
            lock (gate)
            {
                if (closed) return;
                controller = current;
            }
            var headers = new Dictionary<string, string>
            {
                { "Authorization", "Bearer " + apiKey },
                { "Accept", "text/event-stream" },
                { "Cache-Control", "no-cache" },
            };
            var etag = host.CurrentEtag();
            if (etag != null) headers["Last-Event-ID"] = etag;

            // Text may arrive before this method has seen the head: it waits in `early` until the stream is announced open.
            var parser = new SseParser(Event, delay => { lock (gate) retryMs = delay; });
            var textGate = new object();
            var early = new List<string>();
            var open = false;
            var received = false;
            var released = false;
            Timer watchdog = null;
            Action<string> onText = text =>
            {
                lock (textGate)
                {
                    received = true;
                    if (watchdog != null && !released) watchdog.Change(silenceTimeoutMs, Timeout.Infinite);
                    if (!open) { early.Add(text); return; }
                }
                parser.Push(text);
            };

            TransportResponse response;
            try
            {
                response = await Deadline.Within(token => transport.OpenStreamAsync(new TransportRequest(url, headers), onText, token),
                    current, requestTimeoutMs, What).ConfigureAwait(false);
            }
            catch (NotSupportedException)
            {
                // A transport that cannot stream (see ITransport): say so once, and leave the config to polling.
                lock (gate)
                {
                    controller = null;
                    if (closed) return;
                    closed = true;
                }
                host.Failed(new FlagstoreException(FlagstoreErrorKind.Stream, What + ": the transport cannot stream; the client polls instead"), null);
                host.Dropped();
                return;
            }
            catch (Exception error)
            {
                lock (gate) controller = null;
                if (!IsClosed) Lost(FlagstoreException.FromFailure(error, What), false);
                return;
            }
            if (IsClosed)
            {
                Deadline.TryCancel(current);
                return;
            }

            var contentType = response.Header("Content-Type") ?? "";
            if (response.Status != 200 || !contentType.TrimStart().StartsWith("text/event-stream", StringComparison.OrdinalIgnoreCase))
            {
                lock (gate) controller = null;
                Deadline.TryCancel(current);
                var retryAfterMs = Timing.ParseRetryAfter(response.Header("Retry-After"), scheduler.Now());
                var error = response.Status == 200
                    ? new FlagstoreException(FlagstoreErrorKind.Stream,
                        What + " answered " + (contentType.Length > 0 ? contentType : "no content type") + ", not text/event-stream", 200)
                    : FlagstoreException.FromStatus(What, response.Status, response.Body,
                        retryAfterMs == null ? (int?)null : (int)Math.Ceiling(retryAfterMs.Value / 1000));
                Refused(error, retryAfterMs);
                return;
            }

            host.Opened();
            var silent = false;
            watchdog = new Timer(state => { silent = true; Deadline.TryCancel(current); }, null, Timeout.Infinite, Timeout.Infinite);
            Timers.Hold(watchdog);
            try
            {
                List<string> backlog;
                lock (textGate)
                {
                    watchdog.Change(silenceTimeoutMs, Timeout.Infinite);
                    open = true;
                    backlog = new List<string>(early);
                    early.Clear();
                }
                foreach (var text in backlog) parser.Push(text);

                FlagstoreException failure = null;
                try
                {
                    var ended = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                    using (current.Token.Register(() => ended.TrySetResult(true)))
                    {
                        var done = await Task.WhenAny(response.Completion, ended.Task).ConfigureAwait(false);
                        if (done == response.Completion) await response.Completion.ConfigureAwait(false);
                        else
                        {
                            Deadline.Observe(response.Completion);
                            throw new OperationCanceledException();
                        }
                    }
                }
                catch (Exception error)
                {
                    var reason = silent
                        ? "was silent for " + silenceTimeoutMs + " ms"
                        : "dropped: " + FlagstoreException.FromFailure(error, "reading it").Message;
                    failure = new FlagstoreException(FlagstoreErrorKind.Stream, What + " " + reason, null, null, error);
                }
                lock (gate) controller = null;
                if (IsClosed) return;
                host.Dropped();
                bool got;
                lock (textGate) got = received;
                if (failure == null && got)
                {
                    // The service ended a stream that worked (it does after 10 minutes): come back after its hint.
                    double? hint;
                    lock (gate)
                    {
                        failures = 0;
                        hint = retryMs;
                    }
                    Schedule(Timing.ReconnectDelay(hint ?? Timing.BackoffMinMs, random()));
                    return;
                }
                Lost(failure ?? new FlagstoreException(FlagstoreErrorKind.Stream, What + " ended before sending anything"), got);
            }
            finally
            {
                lock (textGate)
                {
                    released = true;
                    Timers.Release(watchdog);
                }
            }
        }

        bool IsClosed
        {
            get { lock (gate) return closed; }
        }

        void Event(SseEvent message)
        {
            if (IsClosed || message.Type != "message") return;
            Dictionary<string, object> data;
            try
            {
                data = Json.Parse(message.Data) as Dictionary<string, object>;
            }
            catch (FormatException)
            {
                return; // not an event of this contract
            }
            object type, etag;
            if (data == null || !data.TryGetValue("type", out type) || !"refetchEvaluation".Equals(type)) return;
            data.TryGetValue("etag", out etag);
            host.Announced(etag as string);
        }

        /// <summary>Refused (an HTTP status) when opening: report, then try again later unless that was a 401/403.</summary>
        void Refused(FlagstoreException error, double? retryAfterMs)
        {
            host.Failed(error, retryAfterMs);
            int count;
            lock (gate)
            {
                if (closed) return;
                count = ++failures;
            }
            if (error.Kind == FlagstoreErrorKind.RateLimited && retryAfterMs != null) Schedule(Timing.RetryAfterDelay(retryAfterMs.Value, random()));
            else Schedule(Timing.BackoffDelay(count, random()));
        }

        /// <summary>Could not connect, or dropped: report, then back off (from 1 s again if the stream had been working).</summary>
        void Lost(FlagstoreException error, bool wasWorking)
        {
            host.Failed(error, null);
            int count;
            double? hint;
            lock (gate)
            {
                if (closed) return;
                failures = wasWorking ? 1 : failures + 1;
                count = failures;
                hint = retryMs;
            }
            Schedule(Math.Max(Timing.BackoffDelay(count, random()), hint ?? 0));
        }
    }
}
