using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using static Flagstore.Tests.Runner;

namespace Flagstore.Tests
{
    /// <summary>The shared fixtures: test/fixtures/targeting-vectors.json and test/fixtures/sdk/ (expected.json, payloads/).</summary>
    public static class FixtureTests
    {
        static string Fixtures
        {
            get { return Path.Combine(Root, "test", "fixtures"); }
        }

        static Dictionary<string, object> Read(string path)
        {
            return (Dictionary<string, object>)Json.Parse(File.ReadAllText(path, Encoding.UTF8));
        }

        static Dictionary<string, object> Map(object value)
        {
            return value as Dictionary<string, object>;
        }

        public static void Register()
        {
            Test("vectors: every bucket of targeting-vectors.json", () =>
            {
                var vectors = Read(Path.Combine(Fixtures, "targeting-vectors.json"));
                var buckets = (List<object>)vectors["buckets"];
                Assert.True(buckets.Count >= 10, "at least ten buckets");
                foreach (Dictionary<string, object> vector in buckets)
                {
                    var key = (string)vector["flagKey"];
                    var value = (string)vector["value"];
                    Assert.Equal((double)vector["bucket"], Targeting.BucketOf(key, value), "bucket(" + key + ", " + value + ")");
                }
            });

            Test("vectors: every evaluation of targeting-vectors.json (value, reason, variant)", () =>
            {
                var vectors = Read(Path.Combine(Fixtures, "targeting-vectors.json"));
                var flags = new Dictionary<string, Flag>();
                foreach (Dictionary<string, object> entry in (List<object>)vectors["flags"])
                {
                    // The vectors' flags are create bodies: give them a runtime and read them as a payload would carry them.
                    entry["runtime"] = "shared";
                    var payload = ConfigPayload.FromJson(new Dictionary<string, object> { { "etag", "v" }, { "flags", new List<object> { entry } } });
                    flags[payload.Flags[0].Key] = payload.Flags[0];
                }
                var evaluations = (List<object>)vectors["evaluations"];
                Assert.True(evaluations.Count >= 50, "the evaluations are there");
                var failures = new List<string>();
                foreach (Dictionary<string, object> vector in evaluations)
                {
                    var flag = flags[(string)vector["flag"]];
                    var context = Map(vector["context"]);
                    var expected = Map(vector["expected"]);
                    var got = Targeting.Evaluate(flag, context);
                    var gotJson = new Dictionary<string, object> { { "value", got.Value }, { "reason", got.Reason }, { "variant", got.Variant } };
                    if (!Json.SameJson(expected, gotJson))
                        failures.Add(flag.Key + " with " + Json.Write(context) + ": expected " + Json.Write(expected) + ", got " + Json.Write(gotJson));
                }
                Assert.True(failures.Count == 0, string.Join("\n", failures.ToArray()));
            });

            Test("payload fixtures: every case of test/fixtures/sdk/expected.json through a client", () =>
            {
                var folder = Path.Combine(Fixtures, "sdk");
                var expected = Read(Path.Combine(folder, "expected.json"));
                var cases = (List<object>)expected["cases"];
                Assert.True(cases.Count > 0, "cases");
                var failures = new List<string>();
                foreach (Dictionary<string, object> fixture in cases)
                {
                    try
                    {
                        RunCase(folder, fixture);
                    }
                    catch (Exception error)
                    {
                        failures.Add(fixture["name"] + ": " + (error.InnerException ?? error).Message);
                    }
                }
                Assert.True(failures.Count == 0, string.Join("\n", failures.ToArray()));
            });
        }

        static void RunCase(string folder, Dictionary<string, object> fixture)
        {
            // The body exactly as served: the file's bytes, decoded as UTF-8 as any transport would.
            var body = Encoding.UTF8.GetString(File.ReadAllBytes(Path.Combine(folder, (string)fixture["payload"])));
            var accepted = (bool)fixture["accepted"];
            object contextValue;
            fixture.TryGetValue("clientContext", out contextValue);

            var transport = new FakeTransport(body) { Etag = fixture.ContainsKey("etag") ? (string)fixture["etag"] : "none" };
            var scheduler = new ManualScheduler();
            var errors = new List<FlagstoreException>();
            var client = new FlagstoreClient(new FlagstoreClientOptions
            {
                BaseUrl = "http://flagstore.test/v1",
                ApiKey = "fsk_test",
                Context = Map(contextValue),
                Transport = transport,
                Scheduler = scheduler,
                Random = () => 0.5,
            });
            client.Error += errors.Add;
            using (client)
            {
                scheduler.RunNext();
                if (!accepted)
                {
                    Assert.True(client.Ready.IsFaulted, "not ready");
                    var error = (FlagstoreException)client.Ready.Exception.InnerException;
                    Assert.Equal(FlagstoreErrorKind.InvalidPayload, error.Kind, "the error's kind");
                    Assert.Equal(1, errors.Count, "errors reported");
                    Assert.True(scheduler.Pending == 1, "it keeps polling");
                    // A client that already had a good payload keeps serving it, and reports the error.
                    var held = new FakeTransport();
                    held.Serve("good", "[{\"key\":\"good\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"}]");
                    var keeperScheduler = new ManualScheduler();
                    var keeper = new FlagstoreClient(new FlagstoreClientOptions
                    {
                        BaseUrl = "http://flagstore.test/v1", ApiKey = "fsk_test", Transport = held, Scheduler = keeperScheduler, Random = () => 0.5,
                    });
                    var keeperErrors = new List<FlagstoreException>();
                    keeper.Error += keeperErrors.Add;
                    using (keeper)
                    {
                        keeperScheduler.RunNext();
                        Assert.True(keeper.Ready.Status == System.Threading.Tasks.TaskStatus.RanToCompletion, "the keeper is ready");
                        held.Etag = "bad";
                        held.Body = body;
                        keeperScheduler.RunNext();
                        Assert.Equal(2, held.Count, "the keeper's requests");
                        Assert.True(keeper.GetBoolean("good", false), "the last good payload is served");
                        Assert.Equal(1, keeperErrors.Count, "the refused payload is reported");
                        Assert.Equal(FlagstoreErrorKind.InvalidPayload, keeperErrors[0].Kind);
                    }
                    return;
                }

                Assert.True(client.Ready.Status == System.Threading.Tasks.TaskStatus.RanToCompletion,
                    "ready" + (client.Ready.IsFaulted ? ": " + client.Ready.Exception.InnerException.Message : ""));
                Assert.Equal(0, errors.Count, "errors");
                Assert.Equal((string)fixture["etag"], client.Etag, "etag");
                var interval = (double)fixture["pollIntervalSeconds"];
                Assert.Equal(1, scheduler.Pending, "one poll scheduled");
                Assert.Between(interval * 900, interval * 1100, scheduler.Delays[0], "the poll delay");

                object list;
                if (fixture.TryGetValue("getters", out list))
                {
                    foreach (Dictionary<string, object> getter in (List<object>)list)
                    {
                        object callContext;
                        getter.TryGetValue("context", out callContext);
                        var got = Get(client, (string)getter["get"], (string)getter["key"], getter["fallback"], Map(callContext));
                        Assert.JsonEqual(getter["expect"], got, getter["get"] + " " + getter["key"] + (callContext == null ? "" : " with " + Json.Write(callContext)));
                    }
                }
                foreach (var name in new[] { "all", "clientSafe" })
                {
                    if (!fixture.TryGetValue(name, out list)) continue;
                    foreach (Dictionary<string, object> check in (List<object>)list)
                    {
                        object callContext;
                        check.TryGetValue("context", out callContext);
                        var got = name == "all" ? client.All(Map(callContext)) : client.ClientSafe(Map(callContext));
                        Assert.JsonEqual(check["expect"], got, name + (callContext == null ? "()" : "(" + Json.Write(callContext) + ")"));
                    }
                }

                scheduler.RunNext();
                Assert.Equal(2, transport.Count, "requests");
                string ifNoneMatch;
                transport.Last.Headers.TryGetValue("If-None-Match", out ifNoneMatch);
                Assert.Equal((string)fixture["ifNoneMatch"], ifNoneMatch, "the next poll's If-None-Match");
            }
        }

        static object Get(FlagstoreClient client, string type, string key, object fallback, IDictionary<string, object> context)
        {
            switch (type)
            {
                case "boolean": return client.GetBoolean(key, (bool)fallback, context);
                case "string": return client.GetString(key, (string)fallback, context);
                case "number": return client.GetNumber(key, (double)fallback, context);
                case "json": return client.GetJson(key, fallback, context);
                default: throw new AssertionException("no getter " + type);
            }
        }
    }
}
