using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore.Tests
{
    /// <summary>A scheduler whose time passes only when a test says so.</summary>
    public sealed class ManualScheduler : IScheduler
    {
        sealed class Entry
        {
            public double Due;
            public long Order;
            public Action Callback;
            public double Delay;
        }

        readonly object gate = new object();
        readonly List<Entry> entries = new List<Entry>();
        long order;
        double now = 1767225600000; // 2026-01-01T00:00:00Z

        public object SetTimeout(Action callback, double delayMs)
        {
            lock (gate)
            {
                var entry = new Entry { Due = now + Math.Max(0, delayMs), Order = order++, Callback = callback, Delay = delayMs };
                entries.Add(entry);
                return entry;
            }
        }

        public void ClearTimeout(object handle)
        {
            lock (gate) entries.Remove((Entry)handle);
        }

        public double Now()
        {
            lock (gate) return now;
        }

        public int Pending
        {
            get { lock (gate) return entries.Count; }
        }

        /// <summary>The delays of the timers pending, in the order they are due.</summary>
        public List<double> Delays
        {
            get
            {
                lock (gate)
                {
                    var list = new List<double>();
                    foreach (var entry in Sorted()) list.Add(entry.Delay);
                    return list;
                }
            }
        }

        List<Entry> Sorted()
        {
            var sorted = new List<Entry>(entries);
            sorted.Sort((a, b) => a.Due != b.Due ? a.Due.CompareTo(b.Due) : a.Order.CompareTo(b.Order));
            return sorted;
        }

        /// <summary>Moves time to the next timer and runs it; returns its delay.</summary>
        public double RunNext()
        {
            Entry next;
            lock (gate)
            {
                if (entries.Count == 0) throw new AssertionException("no timer is pending");
                next = Sorted()[0];
                entries.Remove(next);
                if (next.Due > now) now = next.Due;
            }
            next.Callback();
            return next.Delay;
        }

        public void Advance(double ms)
        {
            lock (gate) now += ms;
        }
    }

    /// <summary>A stream the fake transport opened: the test pushes its text and ends it.</summary>
    public sealed class FakeStream
    {
        public TransportRequest Request;
        public Action<string> OnText;
        public readonly TaskCompletionSource<bool> Body = new TaskCompletionSource<bool>();
        public CancellationToken Token;

        public void Push(string text)
        {
            OnText(text);
        }

        public void End()
        {
            Body.TrySetResult(true);
        }

        public void Break()
        {
            Body.TrySetException(new System.IO.IOException("connection reset"));
        }
    }

    /// <summary>
    /// A transport answering from code: by default the config as a service holds it (200 with the payload, 304 when
    /// If-None-Match names its etag), unless a test queued answers of its own. Every request is recorded.
    /// </summary>
    public sealed class FakeTransport : ITransport
    {
        readonly object gate = new object();
        public readonly List<TransportRequest> Requests = new List<TransportRequest>();
        public readonly List<TransportRequest> StreamRequests = new List<TransportRequest>();
        readonly Queue<Func<TransportRequest, TransportResponse>> answers = new Queue<Func<TransportRequest, TransportResponse>>();
        readonly Queue<Func<TransportRequest, TransportResponse>> streamAnswers = new Queue<Func<TransportRequest, TransportResponse>>();
        public readonly List<FakeStream> Streams = new List<FakeStream>();
        public string Etag = "e1";
        public string Body;

        public FakeTransport(string body = null)
        {
            Body = body;
        }

        public static string Payload(string etag, string flagsJson, double pollIntervalSeconds = 20)
        {
            return "{\"etag\":\"" + etag + "\",\"generatedAt\":\"2026-01-01T00:00:00.000Z\",\"pollIntervalSeconds\":"
                + Json.FormatNumber(pollIntervalSeconds) + ",\"flags\":" + flagsJson + "}";
        }

        /// <summary>The config the fake service holds from now on.</summary>
        public void Serve(string etag, string flagsJson, double pollIntervalSeconds = 20)
        {
            lock (gate)
            {
                Etag = etag;
                Body = Payload(etag, flagsJson, pollIntervalSeconds);
            }
        }

        public void Answer(Func<TransportRequest, TransportResponse> answer)
        {
            lock (gate) answers.Enqueue(answer);
        }

        public void Answer(int status, string body = "", IDictionary<string, string> headers = null)
        {
            Answer(request => new TransportResponse(status, headers, body));
        }

        public void AnswerStream(Func<TransportRequest, TransportResponse> answer)
        {
            lock (gate) streamAnswers.Enqueue(answer);
        }

        public static TransportResponse Fail(string message)
        {
            throw new System.Net.Http.HttpRequestException(message);
        }

        public Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation)
        {
            Func<TransportRequest, TransportResponse> answer = null;
            string etag, body;
            lock (gate)
            {
                Requests.Add(request);
                if (answers.Count > 0) answer = answers.Dequeue();
                etag = Etag;
                body = Body;
            }
            try
            {
                if (answer != null) return Task.FromResult(answer(request));
                string match;
                if (request.Headers.TryGetValue("If-None-Match", out match) && match == Timing.IfNoneMatch(etag))
                    return Task.FromResult(new TransportResponse(304, new Dictionary<string, string> { { "ETag", Timing.IfNoneMatch(etag) } }, ""));
                return Task.FromResult(new TransportResponse(200, new Dictionary<string, string> { { "ETag", Timing.IfNoneMatch(etag) } }, body));
            }
            catch (Exception error)
            {
                var failed = new TaskCompletionSource<TransportResponse>();
                failed.SetException(error);
                return failed.Task;
            }
        }

        public Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation)
        {
            Func<TransportRequest, TransportResponse> answer = null;
            lock (gate)
            {
                StreamRequests.Add(request);
                if (streamAnswers.Count > 0) answer = streamAnswers.Dequeue();
            }
            if (answer != null)
            {
                try
                {
                    return Task.FromResult(answer(request));
                }
                catch (Exception error)
                {
                    var failed = new TaskCompletionSource<TransportResponse>();
                    failed.SetException(error);
                    return failed.Task;
                }
            }
            var stream = new FakeStream { Request = request, OnText = onText, Token = cancellation };
            cancellation.Register(() => stream.Body.TrySetCanceled());
            lock (gate) Streams.Add(stream);
            return Task.FromResult(new TransportResponse(200, new Dictionary<string, string> { { "Content-Type", "text/event-stream" } }, "", stream.Body.Task));
        }

        public int Count
        {
            get { lock (gate) return Requests.Count; }
        }

        public TransportRequest Last
        {
            get { lock (gate) return Requests[Requests.Count - 1]; }
        }
    }
}
