using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using static Flagstore.Tests.Runner;

namespace Flagstore.Tests
{
    /// <summary>
    /// test/fixtures/sdk/SCENARIOS.md against a real service: FLAGSTORE_URL (ending in /v1), FLAGSTORE_KEY (FLAGS_READ and
    /// FLAGS_WRITE, an organization with a subscription), and optionally FLAGSTORE_ADMIN_TOKEN, as
    /// scripts/with-flagstore.mjs sets them.
    /// </summary>
    public static class ScenarioTests
    {
        static readonly string Url = (Environment.GetEnvironmentVariable("FLAGSTORE_URL") ?? "").TrimEnd('/');
        static readonly string Key = Environment.GetEnvironmentVariable("FLAGSTORE_KEY");
        static readonly string AdminToken = Environment.GetEnvironmentVariable("FLAGSTORE_ADMIN_TOKEN");
        static readonly HttpClient Http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };

        public static void Register()
        {
            if (Environment.GetEnvironmentVariable("FLAGSTORE_SKIP_SCENARIOS") == "1") return;
            if (Url == "" || string.IsNullOrEmpty(Key))
            {
                Test("scenarios: FLAGSTORE_URL and FLAGSTORE_KEY are set (run under scripts/with-flagstore.mjs)", () =>
                {
                    throw new AssertionException("FLAGSTORE_URL and FLAGSTORE_KEY are not set: run `node scripts/with-flagstore.mjs sdk-csharp/test.sh`, or set FLAGSTORE_SKIP_SCENARIOS=1 for the unit tests alone");
                });
                return;
            }
            Test("scenario 1: ready with a 200, then the next poll sends If-None-Match and gets a 304", Ready200Then304);
            // Revoking needs the admin API; without FLAGSTORE_ADMIN_TOKEN the unknown key below takes the same path.
            if (AdminToken != null) Test("scenario 3: a key revoked and replaced: 401/403 stops the client and reports", KeyRevokedAndReplaced);
            Test("scenario 3: an unknown key (answered as a revoked one): not ready, 401 reported, one request and no more", UnknownKeyStops);
            Test("scenario 4: a cache file is used when the service is down", CacheFileWhenDown);
            Test("scenario 5: the stream's change is applied within a second", StreamChangeWithinASecond);
            Test("scenario 6: the relay filter (ClientSafe) on real flags", RelayFilter);
            Test("the README's first example reads a flag from the service and writes its cache file", ReadmeExample);
            // Last: without an admin token it spends FLAGSTORE_KEY's config budget.
            Test("scenario 2: Retry-After obeyed on 429", RetryAfterObeyed);
        }

        // ---- the scenarios ----

        static void Ready200Then304()
        {
            var k = UniqueKey("s1");
            var flag = CreateFlag(Key, k, "boolean", true, "shared");
            try
            {
                var transport = new RecordingTransport();
                var scheduler = new ManualScheduler();
                var changes = new List<IList<string>>();
                using (var client = NewClient(Key, transport, scheduler))
                {
                    client.Changed += changes.Add;
                    client.Start();
                    WaitReady(client);
                    Assert.True(client.GetBoolean(k, false), "serves K");
                    var first = transport.Exchanges.Single();
                    Assert.Equal(null, first.IfNoneMatch, "no If-None-Match on the first poll");
                    Assert.Equal(200, first.Status);
                    Assert.Equal(1, scheduler.Pending, "the next poll is scheduled");
                    scheduler.RunNext();
                    Eventually(() => transport.Exchanges.Count == 2, "the second poll is answered");
                    var second = transport.Exchanges[1];
                    Assert.Equal("W/\"" + first.BodyEtag + "\"", second.IfNoneMatch, "If-None-Match");
                    Assert.Equal(first.EtagHeader, second.IfNoneMatch, "the ETag header of the first answer");
                    Assert.Equal(304, second.Status);
                    Eventually(() => scheduler.Pending == 1, "the poll after");
                    Assert.True(client.GetBoolean(k, false), "unchanged");
                    Assert.Equal(0, changes.Count, "no change callback");
                }
            }
            finally
            {
                DeleteFlag(Key, flag);
            }
        }

        static void RetryAfterObeyed()
        {
            var key = Key;
            if (AdminToken != null) key = NewOrganization("sdk-csharp-s2", new[] { "FLAGS_READ" }).Item2;
            // Spend the key's budget: 20 requests at a time until one answers 429.
            int? retryAfter = null;
            var limitedAt = default(DateTime);
            for (var sent = 0; sent < 1400 && retryAfter == null; sent += 20)
            {
                var batch = Enumerable.Range(0, 20).Select(i => Get(Url + "/flags/config", key)).ToArray();
                Task.WaitAll(batch);
                foreach (var response in batch.Select(task => task.Result))
                {
                    if ((int)response.StatusCode == 429 && retryAfter == null)
                    {
                        limitedAt = DateTime.UtcNow;
                        retryAfter = (int)response.Headers.RetryAfter.Delta.Value.TotalSeconds;
                    }
                    response.Dispose();
                }
            }
            Assert.True(retryAfter != null, "the budget is spent within 1400 requests");
            var windowEnds = limitedAt.AddSeconds(retryAfter.Value);

            var transport = new RecordingTransport();
            var scheduler = new ManualScheduler();
            var errors = new List<FlagstoreException>();
            using (var client = NewClient(key, transport, scheduler))
            {
                client.Error += error => { lock (errors) errors.Add(error); };
                client.Start();
                Eventually(() => client.Ready.IsCompleted, "the first answer");
                Assert.True(client.Ready.IsFaulted, "not ready on a 429");
                var error429 = errors.Single();
                Assert.Equal(FlagstoreErrorKind.RateLimited, error429.Kind);
                Assert.Equal((int?)429, error429.Status);
                Assert.True(error429.RetryAfterSeconds >= 1, "it carries the Retry-After");
                Eventually(() => scheduler.Pending == 1, "the retry is scheduled");
                var delay = scheduler.Delays[0];
                var leftMs = (windowEnds - DateTime.UtcNow).TotalMilliseconds;
                Assert.True(delay >= error429.RetryAfterSeconds.Value * 1000.0, "the wait (" + delay + " ms) is at least Retry-After (" + error429.RetryAfterSeconds + " s)");
                Assert.True(delay >= leftMs - 1000, "the wait (" + delay + " ms) reaches the window's end (" + leftMs + " ms away, Retry-After has whole seconds)");
                Assert.Equal(1, transport.Exchanges.Count, "no request during the wait");
                // The window is the service's own: let real time reach its end, then the client's wait elapses.
                var rest = windowEnds - DateTime.UtcNow;
                if (rest > TimeSpan.Zero) Thread.Sleep(rest + TimeSpan.FromMilliseconds(300));
                scheduler.RunNext();
                Eventually(() => transport.Exchanges.Count == 2, "the request after the wait");
                Assert.Equal(200, transport.Exchanges[1].Status, "answered 200 after the window");
                Eventually(() => client.Ready.IsCompleted && scheduler.Pending == 1, "served");
                Assert.Equal(1, errors.Count, "no more errors");
            }
        }

        static string UnknownKey()
        {
            var random = new byte[32];
            using (var rng = System.Security.Cryptography.RandomNumberGenerator.Create()) rng.GetBytes(random);
            return "fsk_" + Convert.ToBase64String(random).Replace('+', '-').Replace('/', '_').TrimEnd('=').Substring(0, 43);
        }

        static void UnknownKeyStops()
        {
            // The service answers a revoked and an unknown key alike: the same path as a revoked key seen at start-up.
            var transport = new RecordingTransport();
            var errors = new List<FlagstoreException>();
            using (var client = NewClient(UnknownKey(), transport, SystemScheduler.Instance, stream: true))
            {
                client.Error += error => { lock (errors) errors.Add(error); };
                client.Start();
                Eventually(() => client.Ready.IsCompleted, "the first answer");
                Assert.True(client.Ready.IsFaulted, "not ready");
                var refusal = (FlagstoreException)client.Ready.Exception.InnerException;
                Assert.Equal(FlagstoreErrorKind.Unauthorized, refusal.Kind);
                Assert.Equal((int?)401, refusal.Status);
                Eventually(() => { lock (errors) return errors.Count == 1; }, "reported");
                Assert.Equal(FlagstoreErrorKind.Unauthorized, errors[0].Kind);
                Thread.Sleep(3000);
                Assert.Equal(1, transport.Count, "one request, none in the 3 s after it");
                Assert.Equal(1, errors.Count, "one error");
            }
        }

        static void KeyRevokedAndReplaced()
        {
            var organization = NewOrganization("sdk-csharp-s3", new[] { "FLAGS_READ", "FLAGS_WRITE" });
            var orgId = organization.Item1;
            var k = UniqueKey("s3");
            CreateFlag(organization.Item2, k, "string", "served", "shared");
            var a = Admin("POST", "/organizations/" + orgId + "/api-keys", new Dictionary<string, object> { { "name", "a" }, { "permissions", new List<object> { "FLAGS_READ" } } });
            var transportA = new RecordingTransport();
            var errorsA = new List<FlagstoreException>();
            using (var client = NewClient((string)a["key"], transportA, SystemScheduler.Instance, stream: true))
            {
                client.Error += error => { lock (errorsA) errorsA.Add(error); };
                client.Start();
                WaitReady(client);
                Assert.Equal("served", client.GetString(k, ""));
                Eventually(() => transportA.StreamStatuses.Contains(200), "the stream is open");
                Admin("DELETE", "/organizations/" + orgId + "/api-keys/" + a["id"], null);
                var revokedAnswer = Send("GET", "/flags/config", (string)a["key"], null);
                var unknownAnswer = Send("GET", "/flags/config", UnknownKey(), null);
                Assert.Equal(401, revokedAnswer.Item1, "the revoked key's answer");
                Assert.Equal(unknownAnswer.Item2, revokedAnswer.Item2, "a revoked key is answered as an unknown one");
                Eventually(() => { lock (errorsA) return errorsA.Any(error => error.Kind == FlagstoreErrorKind.Unauthorized); }, "the 401 is reported", 10);
                var unauthorized = errorsA.First(error => error.Kind == FlagstoreErrorKind.Unauthorized);
                Assert.Equal((int?)401, unauthorized.Status);
                var count = transportA.Count;
                Thread.Sleep(3000);
                Assert.Equal(count, transportA.Count, "no request in the 3 s after the 401");
                Assert.Equal("served", client.GetString(k, ""), "the getters serve the last good payload");
            }

            var b = Admin("POST", "/organizations/" + orgId + "/api-keys", new Dictionary<string, object> { { "name", "b" }, { "permissions", new List<object> { "FLAGS_READ" } } });
            using (var client = NewClient((string)b["key"], new RecordingTransport(), SystemScheduler.Instance, stream: true))
            {
                client.Start();
                WaitReady(client);
                Assert.Equal("served", client.GetString(k, ""), "the replaced key serves K");
            }

            var storage = Admin("POST", "/organizations/" + orgId + "/api-keys", new Dictionary<string, object> { { "name", "s" }, { "permissions", new List<object> { "STORAGE_READ" } } });
            var transportS = new RecordingTransport();
            using (var client = NewClient((string)storage["key"], transportS, SystemScheduler.Instance, stream: true))
            {
                client.Start();
                Eventually(() => client.Ready.IsCompleted, "the first answer");
                var error = (FlagstoreException)client.Ready.Exception.InnerException;
                Assert.Equal(FlagstoreErrorKind.Forbidden, error.Kind);
                Assert.Equal((int?)403, error.Status);
                Thread.Sleep(1000);
                Assert.Equal(1, transportS.Count, "stopped after the 403");
            }
        }

        static void CacheFileWhenDown()
        {
            var k1 = UniqueKey("s4a");
            var k2 = UniqueKey("s4b");
            var nested = Json.Parse("{\"tiers\":{\"rare\":[1,2,{\"boss\":null}]},\"name\":\"ä\"}");
            var flag1 = CreateFlag(Key, k1, "string", "cached", "shared");
            var flag2 = CreateFlag(Key, k2, "json", nested, "server");
            var dir = Path.Combine(Path.GetTempPath(), "flagstore-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            var cache = Path.Combine(dir, "flags.json");
            try
            {
                using (var client = NewClient(Key, new RecordingTransport(), SystemScheduler.Instance, cacheFile: cache))
                {
                    client.Start();
                    WaitReady(client);
                    Assert.Equal("cached", client.GetString(k1, ""));
                    Assert.JsonEqual(nested, client.GetJson(k2, null));
                }
                Assert.True(File.Exists(cache), "the cache file is written when Close returns");

                var down = DownUrl();
                var scheduler = new ManualScheduler();
                var errors = new List<FlagstoreException>();
                using (var client = NewClient(Key, new HttpClientTransport(), scheduler, cacheFile: cache, url: down))
                {
                    client.Error += error => { lock (errors) errors.Add(error); };
                    client.Start();
                    WaitReady(client);
                    Assert.Equal("cached", client.GetString(k1, ""));
                    Assert.JsonEqual(nested, client.GetJson(k2, null));
                    var all = client.All();
                    var safe = client.ClientSafe();
                    Assert.JsonEqual("cached", all[k1], "all() has K1");
                    Assert.JsonEqual(nested, all[k2], "all() has K2");
                    Assert.JsonEqual("cached", safe[k1], "clientSafe() has K1");
                    Assert.True(!safe.ContainsKey(k2), "clientSafe() has no server flag");
                    Eventually(() => { lock (errors) return errors.Count == 1; }, "the network error is reported");
                    Assert.Equal(FlagstoreErrorKind.Network, errors[0].Kind);
                    Eventually(() => scheduler.Pending == 1, "it keeps retrying");
                    Assert.Between(800, 1200, scheduler.Delays[0], "with backoff");
                    scheduler.RunNext();
                    Eventually(() => { lock (errors) return errors.Count == 2; }, "the retry fails too");
                    Eventually(() => scheduler.Pending == 1, "and is retried later");
                    Assert.Between(1600, 2400, scheduler.Delays[0], "the backoff grows");
                }

                foreach (var missing in new[] { null, Path.Combine(dir, "missing.json") })
                {
                    using (var client = NewClient(Key, new HttpClientTransport(), new ManualScheduler(), cacheFile: missing, url: down))
                    {
                        client.Start();
                        Eventually(() => client.Ready.IsCompleted, "the first answer");
                        Assert.True(client.Ready.IsFaulted, "not ready without a cache file");
                        Assert.Equal(FlagstoreErrorKind.Network, ((FlagstoreException)client.Ready.Exception.InnerException).Kind);
                    }
                }
            }
            finally
            {
                Directory.Delete(dir, true);
                DeleteFlag(Key, flag1);
                DeleteFlag(Key, flag2);
            }
        }

        static void StreamChangeWithinASecond()
        {
            var k = UniqueKey("s5");
            var flag = CreateFlag(Key, k, "number", 1, "shared");
            try
            {
                var transport = new RecordingTransport();
                var changes = new List<IList<string>>();
                using (var client = NewClient(Key, transport, SystemScheduler.Instance, stream: true))
                {
                    client.Changed += keys => { lock (changes) changes.Add(keys); };
                    client.Start();
                    WaitReady(client);
                    Assert.Equal(1.0, client.GetNumber(k, 0));
                    Eventually(() => transport.StreamStatuses.Contains(200), "the stream is open");
                    Thread.Sleep(200); // the stream's first event (the current etag) has been read
                    var patched = Send("PATCH", "/flags/" + flag, Key, new Dictionary<string, object> { { "type", "number" }, { "value", 2 } });
                    var watch = Stopwatch.StartNew();
                    Assert.Equal(200, patched.Item1, "PATCH " + patched.Item2);
                    while (client.GetNumber(k, 0) != 2.0 || !HasKey(changes, k))
                    {
                        if (watch.ElapsedMilliseconds > 1000) throw new AssertionException("not within 1 s of the PATCH: value " + client.GetNumber(k, 0) + ", changes " + changes.Count);
                        Thread.Sleep(20);
                    }
                    Console.WriteLine("     (applied " + watch.ElapsedMilliseconds + " ms after the PATCH's answer)");
                    Assert.True(transport.Exchanges.Count(e => e.Status == 200) >= 2, "re-read on the stream's event");
                }
            }
            finally
            {
                DeleteFlag(Key, flag);
            }
        }

        static bool HasKey(List<IList<string>> changes, string key)
        {
            lock (changes) return changes.Any(keys => keys.Contains(key));
        }

        static void RelayFilter()
        {
            var s1 = UniqueKey("s6a");
            var s2 = UniqueKey("s6b");
            var v1 = UniqueKey("s6c");
            var s3 = UniqueKey("s6d");
            var v2 = UniqueKey("s6e");
            var s2Value = Json.Parse("{\"tiers\":{\"rare\":[1,2]},\"name\":\"ä\"}");
            var rule = new Func<double, object>(value => Json.Parse("[{\"id\":\"eu\",\"conditions\":[{\"attribute\":\"region\",\"operator\":\"in\",\"values\":[\"eu-west\"]}],\"value\":" + Json.FormatNumber(value) + "}]"));
            var ids = new List<string>
            {
                CreateFlag(Key, s1, "boolean", true, "shared"),
                CreateFlag(Key, s2, "json", s2Value, "shared"),
                CreateFlag(Key, v1, "string", "secret", "server"),
                CreateFlag(Key, s3, "number", 1, "shared", rule(2)),
                CreateFlag(Key, v2, "number", 5, "server", rule(6)),
            };
            try
            {
                using (var client = NewClient(Key, new RecordingTransport(), new ManualScheduler()))
                {
                    client.Start();
                    WaitReady(client);
                    var mine = new[] { s1, s2, v1, s3, v2 };
                    Func<Dictionary<string, object>, Dictionary<string, object>> restrict = values =>
                        values.Where(entry => mine.Contains(entry.Key)).ToDictionary(entry => entry.Key, entry => entry.Value);
                    var expected = new Dictionary<string, object> { { s1, true }, { s2, s2Value }, { s3, 1.0 } };
                    Assert.JsonEqual(expected, restrict(client.ClientSafe()), "clientSafe()");
                    var eu = new Dictionary<string, object> { { "region", "eu-west" } };
                    expected[s3] = 2.0;
                    Assert.JsonEqual(expected, restrict(client.ClientSafe(eu)), "clientSafe(eu-west)");
                    Assert.JsonEqual(new Dictionary<string, object> { { s1, true }, { s2, s2Value }, { v1, "secret" }, { s3, 2.0 }, { v2, 6.0 } },
                        restrict(client.All(eu)), "all(eu-west)");
                    var text = Json.Write(client.ClientSafe(eu));
                    Assert.True(text.IndexOf(v1, StringComparison.Ordinal) < 0 && text.IndexOf(v2, StringComparison.Ordinal) < 0, "no server key in what a player gets");
                    Assert.True(text.IndexOf("conditions", StringComparison.Ordinal) < 0 && text.IndexOf("\"eu\"", StringComparison.Ordinal) < 0, "no rule in what a player gets");
                }
            }
            finally
            {
                foreach (var id in ids) DeleteFlag(Key, id);
            }
        }

        static void ReadmeExample()
        {
            var exe = Path.Combine(AppDomain.CurrentDomain.BaseDirectory, "ReadmeExample.exe");
            Assert.True(File.Exists(exe), exe + " is built (build.sh)");
            var dir = Path.Combine(Path.GetTempPath(), "flagstore-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                var start = new ProcessStartInfo("mono", "\"" + exe + "\"")
                {
                    UseShellExecute = false,
                    RedirectStandardOutput = true,
                    RedirectStandardError = true,
                    WorkingDirectory = dir,
                };
                start.EnvironmentVariables["FLAGSTORE_URL"] = Url;
                start.EnvironmentVariables["FLAGSTORE_KEY"] = Key;
                using (var process = Process.Start(start))
                {
                    var output = process.StandardOutput.ReadToEndAsync();
                    var errors = process.StandardError.ReadToEndAsync();
                    Assert.True(process.WaitForExit(30000), "it ends");
                    Assert.Equal(0, process.ExitCode, "exit status (" + errors.Result + ")");
                    Assert.True(System.Text.RegularExpressions.Regex.IsMatch(output.Result, "^max-players: [0-9.]+\\s*$"), "its output: " + output.Result);
                }
                Assert.True(CacheFile.Read(Path.Combine(dir, "flags.json")) != null, "flags.json holds the service's payload");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        // ---- helpers ----

        static FlagstoreClient NewClient(string key, ITransport transport, IScheduler scheduler, bool stream = false, string cacheFile = null, string url = null)
        {
            return new FlagstoreClient(new FlagstoreClientOptions
            {
                BaseUrl = url ?? Url,
                ApiKey = key,
                Transport = transport,
                Scheduler = scheduler,
                Stream = stream,
                CacheFile = cacheFile,
                AutoStart = false,
            });
        }

        static void WaitReady(FlagstoreClient client)
        {
            if (!client.Ready.Wait(TimeSpan.FromSeconds(15))) throw new AssertionException("not ready within 15 s");
        }

        static void Eventually(Func<bool> condition, string what, int seconds = 5)
        {
            var watch = Stopwatch.StartNew();
            while (!condition())
            {
                if (watch.ElapsedMilliseconds > seconds * 1000) throw new AssertionException("not within " + seconds + " s: " + what);
                Thread.Sleep(20);
            }
        }

        static string UniqueKey(string scenario)
        {
            return "sdk-csharp-" + scenario + "-" + Guid.NewGuid().ToString("N").Substring(0, 10);
        }

        /// <summary>A base URL where nothing listens: a port opened and closed again.</summary>
        static string DownUrl()
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            var port = ((IPEndPoint)listener.LocalEndpoint).Port;
            listener.Stop();
            return "http://127.0.0.1:" + port + "/v1";
        }

        static Task<HttpResponseMessage> Get(string url, string key)
        {
            var request = new HttpRequestMessage(HttpMethod.Get, url);
            request.Headers.TryAddWithoutValidation("Authorization", "Bearer " + key);
            return Http.SendAsync(request);
        }

        static Tuple<int, string> Send(string method, string path, string bearer, object body)
        {
            var request = new HttpRequestMessage(new HttpMethod(method), Url + path);
            request.Headers.TryAddWithoutValidation("Authorization", "Bearer " + bearer);
            if (body != null) request.Content = new StringContent(Json.Write(body), Encoding.UTF8, "application/json");
            using (var response = Http.SendAsync(request).Result)
                return Tuple.Create((int)response.StatusCode, response.Content.ReadAsStringAsync().Result);
        }

        /// <summary>Creates a flag with the key (FLAGS_WRITE) and returns its id.</summary>
        static string CreateFlag(string key, string flagKey, string type, object value, string runtime, object rules = null)
        {
            var body = new Dictionary<string, object> { { "key", flagKey }, { "name", flagKey }, { "type", type }, { "value", value }, { "runtime", runtime } };
            if (rules != null) body["rules"] = rules;
            var answer = Send("POST", "/flags", key, body);
            if (answer.Item1 != 201) throw new AssertionException("POST /flags answered " + answer.Item1 + ": " + answer.Item2);
            return (string)((Dictionary<string, object>)Json.Parse(answer.Item2))["id"];
        }

        static void DeleteFlag(string key, string id)
        {
            try
            {
                Send("DELETE", "/flags/" + id, key, null);
            }
            catch (Exception)
            {
                // Clean-up is best effort: the keys are unique.
            }
        }

        static Dictionary<string, object> Admin(string method, string path, object body)
        {
            var answer = Send(method, "/admin" + path, AdminToken, body);
            if (answer.Item1 >= 300) throw new AssertionException(method + " /admin" + path + " answered " + answer.Item1 + ": " + answer.Item2);
            return answer.Item2.Length == 0 ? null : (Dictionary<string, object>)Json.Parse(answer.Item2);
        }

        /// <summary>An organization with a subscription and a key with these permissions: (organization id, key).</summary>
        static Tuple<string, string> NewOrganization(string name, string[] permissions)
        {
            var organization = Admin("POST", "/organizations", new Dictionary<string, object> { { "name", name } });
            var id = (string)organization["id"];
            Admin("POST", "/organizations/" + id + "/subscriptions", new Dictionary<string, object> { { "plan", "pro" } });
            var key = Admin("POST", "/organizations/" + id + "/api-keys",
                new Dictionary<string, object> { { "name", name }, { "permissions", permissions.Cast<object>().ToList() } });
            return Tuple.Create(id, (string)key["key"]);
        }

        /// <summary>The real transport, recording each config request's If-None-Match and answer, and each stream's status.</summary>
        sealed class RecordingTransport : ITransport
        {
            public sealed class Exchange
            {
                public string IfNoneMatch;
                public int Status;
                public string EtagHeader;
                public string BodyEtag;
            }

            readonly HttpClientTransport inner = new HttpClientTransport();
            readonly List<Exchange> exchanges = new List<Exchange>();
            readonly List<int> streamStatuses = new List<int>();
            int count;

            /// <summary>Requests sent, config and stream alike (answered or not).</summary>
            public int Count
            {
                get { return Volatile.Read(ref count); }
            }

            public List<Exchange> Exchanges
            {
                get { lock (exchanges) return new List<Exchange>(exchanges); }
            }

            public List<int> StreamStatuses
            {
                get { lock (streamStatuses) return new List<int>(streamStatuses); }
            }

            public async Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation)
            {
                Interlocked.Increment(ref count);
                var response = await inner.SendAsync(request, cancellation).ConfigureAwait(false);
                string ifNoneMatch;
                request.Headers.TryGetValue("If-None-Match", out ifNoneMatch);
                string bodyEtag = null;
                if (response.Status == 200)
                {
                    try { bodyEtag = ((Dictionary<string, object>)Json.Parse(response.Body))["etag"] as string; } catch (Exception) { }
                }
                lock (exchanges) exchanges.Add(new Exchange { IfNoneMatch = ifNoneMatch, Status = response.Status, EtagHeader = response.Header("ETag"), BodyEtag = bodyEtag });
                return response;
            }

            public async Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation)
            {
                Interlocked.Increment(ref count);
                var response = await inner.OpenStreamAsync(request, onText, cancellation).ConfigureAwait(false);
                lock (streamStatuses) streamStatuses.Add(response.Status);
                return response;
            }
        }
    }
}
