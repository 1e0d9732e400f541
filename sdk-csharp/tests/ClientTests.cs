using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using static Flagstore.Tests.Runner;

namespace Flagstore.Tests
{
    /// <summary>The client against a fake transport and a manual clock: polling, backoff, Retry-After, 401/403, cache, stream.</summary>
    public static class ClientTests
    {
        const string Flags = "[{\"key\":\"pvp\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"}," +
            "{\"key\":\"motd\",\"type\":\"string\",\"value\":\"hi\",\"runtime\":\"shared\"}," +
            "{\"key\":\"max\",\"type\":\"number\",\"value\":64,\"runtime\":\"server\"}," +
            "{\"key\":\"loot\",\"type\":\"json\",\"value\":{\"tier\":\"common\",\"drops\":[1,2]},\"runtime\":\"shared\"}," +
            "{\"key\":\"bonus\",\"type\":\"number\",\"value\":1,\"runtime\":\"shared\",\"rules\":[{\"id\":\"eu\",\"conditions\":[{\"attribute\":\"region\",\"operator\":\"in\",\"values\":[\"eu-west\"]}],\"value\":2}]}]";

        sealed class Harness : IDisposable
        {
            public readonly FakeTransport Transport = new FakeTransport();
            public readonly ManualScheduler Scheduler = new ManualScheduler();
            public readonly List<FlagstoreException> Errors = new List<FlagstoreException>();
            public readonly List<IList<string>> Changes = new List<IList<string>>();
            public FlagstoreClient Client;
            public double RandomValue = 0.5;

            public Harness(Action<FlagstoreClientOptions> configure = null, bool serve = true)
            {
                if (serve) Transport.Serve("e1", Flags);
                var options = new FlagstoreClientOptions
                {
                    BaseUrl = "http://flagstore.test/v1/",
                    ApiKey = "fsk_test",
                    Transport = Transport,
                    Scheduler = Scheduler,
                    Random = () => RandomValue,
                    AutoStart = false,
                };
                if (configure != null) configure(options);
                Client = new FlagstoreClient(options);
                Client.Error += error => { lock (Errors) Errors.Add(error); };
                Client.Changed += keys => { lock (Changes) Changes.Add(keys); };
                Client.Start();
            }

            public void Dispose()
            {
                Client.Dispose();
            }
        }

        static void Eventually(Func<bool> condition, string what)
        {
            var deadline = DateTime.UtcNow.AddSeconds(5);
            while (!condition())
            {
                if (DateTime.UtcNow > deadline) throw new AssertionException("not within 5 s: " + what);
                Thread.Sleep(5);
            }
        }

        static string Header(TransportRequest request, string name)
        {
            string value;
            return request.Headers.TryGetValue(name, out value) ? value : null;
        }

        static bool IsReady(FlagstoreClient client)
        {
            return client.Ready.Status == TaskStatus.RanToCompletion;
        }

        static FlagstoreException ReadyError(FlagstoreClient client)
        {
            Assert.True(client.Ready.IsFaulted, "Ready faulted");
            return (FlagstoreException)client.Ready.Exception.InnerException;
        }

        public static void Register()
        {
            Test("client: the first poll is a plain GET /flags/config with the key; then If-None-Match, a 304 changes nothing", () =>
            {
                using (var h = new Harness())
                {
                    Assert.True(IsReady(h.Client), "ready after the first answer");
                    var first = h.Transport.Requests[0];
                    Assert.Equal("http://flagstore.test/v1/flags/config", first.Url);
                    Assert.Equal("Bearer fsk_test", Header(first, "Authorization"));
                    Assert.Equal("application/json", Header(first, "Accept"));
                    Assert.Equal(null, Header(first, "If-None-Match"));
                    Assert.Equal(new List<double> { 20000 }, h.Scheduler.Delays, "the next poll");
                    h.Scheduler.RunNext();
                    Assert.Equal("W/\"e1\"", Header(h.Transport.Last, "If-None-Match"));
                    Assert.Equal(0, h.Changes.Count, "no change on 304 nor on the first load");
                    Assert.True(h.Client.GetBoolean("pvp", false), "served");
                    Assert.Equal(0, h.Errors.Count, "no error");
                }
            });

            Test("client: polls every pollIntervalSeconds ±10 %", () =>
            {
                using (var h = new Harness())
                {
                    h.Transport.Serve("e2", Flags, 30);
                    h.RandomValue = 0;
                    h.Scheduler.RunNext();
                    Assert.Equal(27000.0, h.Scheduler.Delays[0], "-10 %");
                    h.RandomValue = 0.99999;
                    h.Scheduler.RunNext();
                    Assert.Near(33000, h.Scheduler.Delays[0], 1, "+10 %");
                }
            });

            Test("client: typed getters with fallback, rules with the default and the call's context, copies of json", () =>
            {
                using (var h = new Harness(options => options.Context = new Dictionary<string, object> { { "region", "eu-west" } }))
                {
                    Assert.Equal(true, h.Client.GetBoolean("pvp", false));
                    Assert.Equal("hi", h.Client.GetString("motd", "x"));
                    Assert.Equal(64.0, h.Client.GetNumber("max", 0));
                    Assert.Equal("x", h.Client.GetString("pvp", "x"), "wrong type: fallback");
                    Assert.Equal(-1.0, h.Client.GetNumber("nope", -1), "unknown key: fallback");
                    Assert.Equal(-1.0, h.Client.GetNumber(null, -1), "null key: fallback");
                    Assert.Equal(2.0, h.Client.GetNumber("bonus", 0), "the default context");
                    Assert.Equal(1.0, h.Client.GetNumber("bonus", 0, new Dictionary<string, object> { { "region", "us-east" } }), "the call's context wins");
                    var loot = (Dictionary<string, object>)h.Client.GetJson("loot", null);
                    loot["tier"] = "mutated";
                    Assert.JsonEqual(Json.Parse("{\"tier\":\"common\",\"drops\":[1,2]}"), h.Client.GetJson("loot", null), "a copy");
                    Assert.Equal("{\"tier\":\"common\",\"drops\":[1,2]}", h.Client.GetJsonText("loot", null));
                    Assert.JsonEqual(Json.Parse("{\"pvp\":true,\"motd\":\"hi\",\"max\":64,\"loot\":{\"tier\":\"common\",\"drops\":[1,2]},\"bonus\":2}"), h.Client.All());
                    Assert.JsonEqual(Json.Parse("{\"pvp\":true,\"motd\":\"hi\",\"loot\":{\"tier\":\"common\",\"drops\":[1,2]},\"bonus\":1}"),
                        h.Client.ClientSafe(new Dictionary<string, object> { { "region", "ap-south" } }), "only shared flags, resolved for the player");
                }
            });

            Test("client: a change raises Changed with the keys, sorted; the getters serve the new payload", () =>
            {
                using (var h = new Harness())
                {
                    h.Transport.Serve("e2", Flags.Replace("\"value\":\"hi\"", "\"value\":\"hello\"").Replace("\"value\":64", "\"value\":65"));
                    h.Scheduler.RunNext();
                    Assert.Equal(1, h.Changes.Count, "one change event");
                    Assert.Equal("max,motd", string.Join(",", h.Changes[0].ToArray()));
                    Assert.Equal("hello", h.Client.GetString("motd", ""));
                }
            });

            Test("client: 429 waits out Retry-After (up to 10 % more), reports it, sends nothing before", () =>
            {
                using (var h = new Harness())
                {
                    h.Transport.Answer(429, "{\"statusCode\":429,\"error\":\"RATE_LIMITED\",\"message\":\"Too many requests\"}",
                        new Dictionary<string, string> { { "Retry-After", "37" } });
                    h.RandomValue = 0;
                    h.Scheduler.RunNext();
                    Assert.Equal(1, h.Errors.Count, "reported");
                    Assert.Equal(FlagstoreErrorKind.RateLimited, h.Errors[0].Kind);
                    Assert.Equal((int?)37, h.Errors[0].RetryAfterSeconds);
                    Assert.Equal((int?)429, h.Errors[0].Status);
                    Assert.Contains("Too many requests", h.Errors[0].Message, "the service's message");
                    Assert.Equal(37000.0, h.Scheduler.Delays[0], "the wait");
                    Assert.True(h.Client.GetBoolean("pvp", false), "still serving");
                    h.Scheduler.RunNext();
                    Assert.Equal(3, h.Transport.Count, "the next request after the wait");
                }
            });

            Test("client: 429 at start: not ready, and neither the poll nor the stream comes before Retry-After", () =>
            {
                var transport = new FakeTransport();
                transport.Serve("e1", Flags);
                transport.Answer(429, "", new Dictionary<string, string> { { "Retry-After", "10" } });
                var scheduler = new ManualScheduler();
                using (var client = new FlagstoreClient(new FlagstoreClientOptions
                {
                    BaseUrl = "http://flagstore.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler, Random = () => 0, Stream = true,
                }))
                {
                    scheduler.RunNext();
                    Assert.Equal(FlagstoreErrorKind.RateLimited, ReadyError(client).Kind, "Ready's error");
                    Assert.Equal(0, transport.StreamRequests.Count, "the stream waits too");
                    Assert.Equal(new List<double> { 10000, 10000 }, scheduler.Delays, "the poll and the stream, both after Retry-After");
                    scheduler.RunNext();
                    Assert.Equal(2, transport.Count, "requests");
                    Assert.True(client.GetBoolean("pvp", false), "served after the wait");
                    scheduler.RunNext();
                    Assert.Equal(1, transport.StreamRequests.Count, "the stream opened after the wait");
                    Assert.Equal(0, scheduler.Pending, "polling paused while it is open");
                }
            });

            Test("client: network errors and 5xx back off 1 s, 2 s, 4 s … keeping the last good payload; a success resets it", () =>
            {
                using (var h = new Harness())
                {
                    h.Transport.Answer(request => FakeTransport.Fail("connection refused"));
                    h.Transport.Answer(503, "{\"message\":\"down\"}");
                    h.Transport.Answer(500, "<html>oops</html>");
                    h.Scheduler.RunNext();
                    Assert.Equal(FlagstoreErrorKind.Network, h.Errors[0].Kind);
                    Assert.Contains("connection refused", h.Errors[0].Message, "the cause");
                    Assert.Equal(new List<double> { 1000 }, h.Scheduler.Delays);
                    h.Scheduler.RunNext();
                    Assert.Equal(FlagstoreErrorKind.Server, h.Errors[1].Kind);
                    Assert.Equal(new List<double> { 2000 }, h.Scheduler.Delays);
                    h.Scheduler.RunNext();
                    Assert.Equal(new List<double> { 4000 }, h.Scheduler.Delays);
                    Assert.True(h.Client.GetBoolean("pvp", false), "the last good payload through the outage");
                    h.Scheduler.RunNext();
                    Assert.Equal(new List<double> { 20000 }, h.Scheduler.Delays, "back to the interval");
                    Assert.Equal(3, h.Errors.Count, "errors");
                }
            });

            Test("client: an invalid payload keeps the last good one and backs off", () =>
            {
                using (var h = new Harness())
                {
                    h.Transport.Answer(200, "{\"etag\":\"x\",\"flags\":[{\"key\":\"pvp\",\"type\":\"boolean\",\"value\":\"yes\",\"runtime\":\"shared\"}]}");
                    h.Scheduler.RunNext();
                    Assert.Equal(FlagstoreErrorKind.InvalidPayload, h.Errors[0].Kind);
                    Assert.Contains("flag pvp's value is not a boolean", h.Errors[0].Message, "what is wrong");
                    Assert.True(h.Client.GetBoolean("pvp", false), "kept");
                    Assert.Equal(new List<double> { 1000 }, h.Scheduler.Delays);
                }
            });

            Test("client: 401 and 403 stop it for good and report; the getters keep the last payload", () =>
            {
                foreach (var status in new[] { 401, 403 })
                {
                    using (var h = new Harness())
                    {
                        h.Transport.Answer(status, "{\"statusCode\":" + status + ",\"message\":\"Missing or invalid API key\"}");
                        h.Scheduler.RunNext();
                        Assert.Equal(status == 401 ? FlagstoreErrorKind.Unauthorized : FlagstoreErrorKind.Forbidden, h.Errors[0].Kind);
                        Assert.True(h.Errors[0].IsFatal, "fatal");
                        Assert.Equal(0, h.Scheduler.Pending, "nothing scheduled");
                        Assert.True(h.Client.GetBoolean("pvp", false), "still serving");
                    }
                    var transport = new FakeTransport();
                    transport.Answer(status, "");
                    var scheduler = new ManualScheduler();
                    using (var client = new FlagstoreClient(new FlagstoreClientOptions { BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler }))
                    {
                        scheduler.RunNext();
                        Assert.Equal((int?)status, ReadyError(client).Status, "Ready's error at start");
                        Assert.Equal(0, scheduler.Pending, "nothing scheduled");
                        Assert.Equal(1, transport.Count, "one request");
                    }
                }
            });

            Test("client: a hung request fails as Timeout after RequestTimeoutMs, and is retried", () =>
            {
                var transport = new HangingTransport();
                var scheduler = new ManualScheduler();
                using (var client = new FlagstoreClient(new FlagstoreClientOptions
                {
                    BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler, RequestTimeoutMs = 50, Random = () => 0.5,
                }))
                {
                    scheduler.RunNext();
                    Eventually(() => client.Ready.IsCompleted, "Ready settles");
                    Assert.Equal(FlagstoreErrorKind.Timeout, ReadyError(client).Kind);
                    Assert.True(transport.Cancelled, "the transport's token was cancelled");
                    Eventually(() => scheduler.Pending == 1, "a retry is scheduled");
                    Assert.Equal(new List<double> { 1000 }, scheduler.Delays);
                }
            });

            Test("client: the cache file is written after a payload, and a restart without the service starts from it", () =>
            {
                var dir = Path.Combine(Path.GetTempPath(), "flagstore-cs-" + Guid.NewGuid().ToString("N"));
                Directory.CreateDirectory(dir);
                var path = Path.Combine(dir, "flags.json");
                try
                {
                    using (var h = new Harness(options => options.CacheFile = path))
                    {
                        Assert.True(File.Exists(path), "written");
                    }
                    var transport = new FakeTransport();
                    transport.Answer(request => FakeTransport.Fail("connection refused"));
                    var scheduler = new ManualScheduler();
                    var errors = new List<FlagstoreException>();
                    var client = new FlagstoreClient(new FlagstoreClientOptions
                    {
                        BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler, CacheFile = path, AutoStart = false, Random = () => 0.5,
                    });
                    client.Error += errors.Add;
                    using (client)
                    {
                        client.Start();
                        Assert.True(IsReady(client), "ready from the cache file");
                        Assert.Equal("hi", client.GetString("motd", ""));
                        Assert.Equal(FlagstoreErrorKind.Network, errors.Single().Kind);
                        Assert.Equal(new List<double> { 1000 }, scheduler.Delays, "it keeps retrying");
                        Assert.Equal("W/\"e1\"", Header(transport.Requests[0], "If-None-Match"), "asks with the cached etag");
                    }
                    File.WriteAllText(path, "not json");
                    transport = new FakeTransport();
                    transport.Serve("e1", Flags);
                    errors.Clear();
                    client = new FlagstoreClient(new FlagstoreClientOptions
                    {
                        BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = new ManualScheduler(), CacheFile = path, AutoStart = false,
                    });
                    client.Error += errors.Add;
                    using (client)
                    {
                        client.Start();
                        Assert.Equal(FlagstoreErrorKind.Cache, errors.Single().Kind);
                        Assert.True(IsReady(client), "ready from the service");
                        Assert.Equal("e1", CacheFile.Read(path).Etag, "the file is repaired");
                    }
                }
                finally
                {
                    Directory.Delete(dir, true);
                }
            });

            Test("client: without a cache file, a service that is down leaves it not ready, retrying; the first payload then changes every key", () =>
            {
                var transport = new FakeTransport();
                transport.Serve("e1", Flags);
                transport.Answer(request => FakeTransport.Fail("connection refused"));
                var scheduler = new ManualScheduler();
                var changes = new List<IList<string>>();
                var client = new FlagstoreClient(new FlagstoreClientOptions { BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler, AutoStart = false });
                client.Changed += changes.Add;
                using (client)
                {
                    client.Start();
                    Assert.Equal(FlagstoreErrorKind.Network, ReadyError(client).Kind);
                    scheduler.RunNext();
                    Assert.Equal("bonus,loot,max,motd,pvp", string.Join(",", changes.Single().ToArray()));
                }
            });

            Test("client: the stream pauses polling, a refetch event re-reads, its own etag does not; a drop resumes polling", () =>
            {
                using (var h = new Harness(options => options.Stream = true))
                {
                    Assert.Equal(1, h.Transport.Streams.Count, "a stream");
                    var stream = h.Transport.Streams[0];
                    Assert.Equal("http://flagstore.test/v1/flags/config/stream", stream.Request.Url);
                    Assert.Equal("e1", Header(stream.Request, "Last-Event-ID"));
                    Assert.Equal("text/event-stream", Header(stream.Request, "Accept"));
                    Assert.Equal(0, h.Scheduler.Pending, "no polling while the stream is up");
                    stream.Push(": keep-alive\n\nid: e1\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"e1\",\"lastModified\":1}\n\n");
                    Assert.Equal(1, h.Transport.Count, "its own etag: no read");
                    h.Transport.Serve("e2", Flags.Replace("\"value\":\"hi\"", "\"value\":\"streamed\""));
                    stream.Push("id: e2\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"e2\",\"lastModified\":2}\n");
                    stream.Push("\n");
                    Assert.Equal(2, h.Transport.Count, "a new etag: a read");
                    Assert.Equal("W/\"e1\"", Header(h.Transport.Last, "If-None-Match"));
                    Assert.Equal("streamed", h.Client.GetString("motd", ""));
                    Assert.Equal("motd", string.Join(",", h.Changes.Single().ToArray()));
                    stream.Push("data: {\"type\":\"somethingElse\"}\n\ndata: not json\n\n");
                    Assert.Equal(2, h.Transport.Count, "other events are ignored");
                    stream.Break();
                    Eventually(() => h.Errors.Count == 1, "the drop is reported");
                    Assert.Equal(FlagstoreErrorKind.Stream, h.Errors[0].Kind);
                    Eventually(() => h.Scheduler.Pending == 2, "polling resumes and a reconnect is scheduled");
                    Assert.Equal(new List<double> { 1000, 20000 }, h.Scheduler.Delays, "reconnect after 1 s, poll after 20 s");
                    h.Scheduler.RunNext();
                    Assert.Equal(2, h.Transport.Streams.Count, "reconnected");
                    Assert.Equal("e2", Header(h.Transport.Streams[1].Request, "Last-Event-ID"));
                    Assert.Equal(0, h.Scheduler.Pending, "polling paused again");
                }
            });

            Test("client: a stream the service ends comes back after its retry hint; a 401 on the stream stops everything", () =>
            {
                using (var h = new Harness(options => options.Stream = true))
                {
                    var stream = h.Transport.Streams[0];
                    stream.Push("retry: 3000\n\n");
                    stream.End();
                    Eventually(() => h.Scheduler.Pending == 2, "reconnect and poll scheduled");
                    Assert.Equal(0, h.Errors.Count, "a clean end is no error");
                    Assert.Equal(new List<double> { 4500, 20000 }, h.Scheduler.Delays, "the hint with jitter (random 0.5: 1.5 ×)");
                    h.Transport.AnswerStream(request => new TransportResponse(401, null, "{\"message\":\"Missing or invalid API key\"}"));
                    h.Scheduler.RunNext();
                    Eventually(() => h.Errors.Count == 1, "reported");
                    Assert.Equal(FlagstoreErrorKind.Unauthorized, h.Errors[0].Kind);
                    Assert.Equal(0, h.Scheduler.Pending, "stopped: no poll, no reconnect");
                    Assert.True(h.Client.GetBoolean("pvp", false), "still serving");
                }
            });

            Test("client: a stream refused with 429 waits out Retry-After; one that is not an event stream backs off", () =>
            {
                using (var h = new Harness(options => options.Stream = true, serve: true))
                {
                    var first = h.Transport.Streams[0];
                    h.Transport.AnswerStream(request => new TransportResponse(429, new Dictionary<string, string> { { "Retry-After", "30" } }, ""));
                    h.Transport.AnswerStream(request => new TransportResponse(200, new Dictionary<string, string> { { "Content-Type", "text/html" } }, ""));
                    first.Break();
                    Eventually(() => h.Scheduler.Pending == 2, "reconnect scheduled");
                    h.Scheduler.RunNext(); // the reconnect after 1 s: 429
                    Eventually(() => h.Errors.Count == 2, "the 429 reported");
                    Assert.Equal(FlagstoreErrorKind.RateLimited, h.Errors[1].Kind);
                    Assert.Equal(new List<double> { 20000, 31500 }, h.Scheduler.Delays, "poll, then the stream after Retry-After (+5 %)");
                    h.Scheduler.RunNext(); // the poll: held back until the Retry-After has passed
                    Assert.Equal(1, h.Transport.Count, "no request inside the Retry-After window");
                    h.Scheduler.RunNext();
                    h.Scheduler.RunNext();
                    Eventually(() => h.Errors.Count >= 3, "the HTML answer reported");
                    Assert.Contains("not text/event-stream", h.Errors[2].Message, "what");
                }
            });

            Test("client: Close before Ready faults Ready with Closed, cancels what is pending and sends nothing more", () =>
            {
                var transport = new HangingTransport();
                var scheduler = new ManualScheduler();
                var client = new FlagstoreClient(new FlagstoreClientOptions { BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler });
                scheduler.RunNext();
                client.Close();
                Eventually(() => client.Ready.IsCompleted, "Ready settles");
                Assert.Equal(FlagstoreErrorKind.Closed, ReadyError(client).Kind);
                Assert.True(transport.Cancelled, "the request was cancelled");
                Thread.Sleep(20);
                Assert.Equal(0, scheduler.Pending, "nothing scheduled");
                client.Close();
                using (var h = new Harness(options => options.Stream = true))
                {
                    h.Client.Dispose();
                    Assert.Equal(0, h.Scheduler.Pending, "nothing scheduled after Dispose");
                    Eventually(() => h.Transport.Streams[0].Token.IsCancellationRequested, "the stream is closed");
                }
            });

            Test("client: events go to the SynchronizationContext it was made on; a throwing handler breaks nothing", () =>
            {
                var context = new RecordingContext();
                using (var h = new Harness(options => options.EventContext = context))
                {
                    h.Client.Changed += keys => { throw new InvalidOperationException("a handler's bug"); };
                    h.Transport.Serve("e2", "[]");
                    h.Scheduler.RunNext();
                    Assert.Equal(0, h.Changes.Count, "not raised on the client's thread");
                    Assert.Equal(1, context.Posted.Count, "posted");
                    context.Posted[0]();
                    Assert.Equal(1, h.Changes.Count, "raised when the context runs it");
                    Assert.Equal(new List<double> { 20000 }, h.Scheduler.Delays, "the schedule goes on");
                }
            });

            Test("client: a transport that cannot stream is reported once, and the client polls", () =>
            {
                var transport = new PollOnlyTransport();
                transport.Inner.Serve("e1", Flags);
                var scheduler = new ManualScheduler();
                var errors = new List<FlagstoreException>();
                var client = new FlagstoreClient(new FlagstoreClientOptions
                {
                    BaseUrl = "http://x.test/v1", ApiKey = "k", Transport = transport, Scheduler = scheduler, Stream = true, AutoStart = false, Random = () => 0.5,
                });
                client.Error += errors.Add;
                using (client)
                {
                    client.Start();
                    Assert.True(IsReady(client), "ready");
                    Eventually(() => errors.Count == 1, "reported");
                    Assert.Equal(FlagstoreErrorKind.Stream, errors[0].Kind);
                    Assert.Contains("cannot stream", errors[0].Message, "what");
                    Assert.Equal(new List<double> { 20000 }, scheduler.Delays, "polling, no reconnect");
                    scheduler.RunNext();
                    Assert.Equal(new List<double> { 20000 }, scheduler.Delays, "still polling");
                    Assert.Equal(1, errors.Count, "reported once");
                }
            });

            Test("system scheduler: a real timer fires; a cleared one does not", () =>
            {
                var fired = new ManualResetEventSlim();
                var cleared = false;
                var handle = SystemScheduler.Instance.SetTimeout(() => cleared = true, 30);
                SystemScheduler.Instance.ClearTimeout(handle);
                SystemScheduler.Instance.SetTimeout(fired.Set, 10);
                GC.Collect();
                Assert.True(fired.Wait(2000), "fired");
                Thread.Sleep(50);
                Assert.True(!cleared, "the cleared timer did not fire");
                Assert.Near(SystemScheduler.Instance.Now(), (DateTime.UtcNow - new DateTime(1970, 1, 1)).TotalMilliseconds, 1000, "Now is Unix milliseconds");
            });

            Test("client: the constructor refuses a missing key or a base URL that is not http(s)", () =>
            {
                Assert.Throws<ArgumentException>(() => new FlagstoreClient("http://x.test/v1", ""), "no key");
                Assert.Throws<ArgumentException>(() => new FlagstoreClient("flags.example.com/v1", "k"), "no scheme");
                Assert.Throws<ArgumentException>(() => new FlagstoreClient("ftp://x.test/v1", "k"), "ftp");
            });
        }

        sealed class HangingTransport : ITransport
        {
            public volatile bool Cancelled;

            public Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation)
            {
                cancellation.Register(() => Cancelled = true);
                return new TaskCompletionSource<TransportResponse>().Task; // ignores its token: the client must not wait anyway
            }

            public Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation)
            {
                return SendAsync(request, cancellation);
            }
        }

        sealed class PollOnlyTransport : ITransport
        {
            public readonly FakeTransport Inner = new FakeTransport();

            public Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation)
            {
                return Inner.SendAsync(request, cancellation);
            }

            public Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation)
            {
                throw new NotSupportedException("no streaming here");
            }
        }

        sealed class RecordingContext : SynchronizationContext
        {
            public readonly List<Action> Posted = new List<Action>();

            public override void Post(SendOrPostCallback callback, object state)
            {
                lock (Posted) Posted.Add(() => callback(state));
            }
        }
    }
}
