using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using static Flagstore.Tests.Runner;

namespace Flagstore.Tests
{
    /// <summary>The core, no I/O but the cache file's: JSON, payloads, targeting, timing decisions, the SSE parser.</summary>
    public static class CoreTests
    {
        public static void Register()
        {
            Test("the assembly references only mscorlib, System, System.Core and System.Net.Http", () =>
            {
                var names = typeof(FlagstoreClient).Assembly.GetReferencedAssemblies().Select(name => name.Name).OrderBy(name => name, StringComparer.Ordinal).ToArray();
                var allowed = new[] { "System", "System.Core", "System.Net.Http", "mscorlib" };
                foreach (var name in names) Assert.True(allowed.Contains(name), "Flagstore.dll references " + name + " (" + string.Join(", ", names) + ")");
                Assert.True(names.Contains("mscorlib"), "mscorlib is referenced");
                Assert.Equal("Flagstore", typeof(FlagstoreClient).Assembly.GetName().Name);
            });

            Test("JSON: reads every kind of value, escapes and surrogate pairs included", () =>
            {
                var value = (Dictionary<string, object>)Json.Parse(" {\"a\": [1, -2.5e3, true, false, null], \"b\": \"x\\n\\u00e4\\ud83c\\udfae\\\"\\/\", \"c\": {}} ");
                Assert.JsonEqual(Json.Parse("[1,-2500,true,false,null]"), value["a"]);
                Assert.Equal("x\nä🎮\"/", (string)value["b"]);
                Assert.Equal(0, ((Dictionary<string, object>)value["c"]).Count);
                Assert.True(((List<object>)value["a"])[0] is double, "numbers are doubles");
            });

            Test("JSON: refuses what is not JSON, naming where", () =>
            {
                foreach (var text in new[] { "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"a", "\"\\x\"", "{\"a\":1}x", "[1e999]", "'a'", "\"a\u0001\"" })
                    Assert.Throws<FormatException>(() => Json.Parse(text), "Json.Parse(" + text + ")");
                Assert.Contains("position 6", Assert.Throws<FormatException>(() => Json.Parse("[1, 2 3]"), "position").Message, "the message");
                var deep = new string('[', 300) + new string(']', 300);
                Assert.Throws<FormatException>(() => Json.Parse(deep), "300 levels");
            });

            Test("JSON: object key order is not significant, a later duplicate key wins", () =>
            {
                Assert.True(Json.SameJson(Json.Parse("{\"a\":1,\"b\":[1,{\"c\":2}]}"), Json.Parse("{\"b\":[1,{\"c\":2}],\"a\":1}")), "same");
                Assert.True(!Json.SameJson(Json.Parse("{\"a\":1}"), Json.Parse("{\"a\":1,\"b\":1}")), "different");
                Assert.True(!Json.SameJson(Json.Parse("[1,2]"), Json.Parse("[2,1]")), "array order counts");
                Assert.JsonEqual(2.0, ((Dictionary<string, object>)Json.Parse("{\"a\":1,\"a\":2}"))["a"], "duplicate");
            });

            Test("JSON: numbers are written as JavaScript writes them", () =>
            {
                var cases = new Dictionary<double, string>
                {
                    { 42, "42" }, { 4.5, "4.5" }, { -0.0, "0" }, { 100, "100" }, { 1e21, "1e+21" }, { 1e-7, "1e-7" }, { 0.000001, "0.000001" },
                    { 123456789012345680000.0, "123456789012345680000" }, { 0.1 + 0.2, "0.30000000000000004" }, { 1.5e-10, "1.5e-10" },
                    { 5e-324, "5e-324" }, { double.MaxValue, "1.7976931348623157e+308" }, { -2.5, "-2.5" }, { 74.89, "74.89" }, { 1.4, "1.4" },
                    { 9007199254740993.0, "9007199254740992" }, { 2.5e25, "2.5e+25" }, { 0.1, "0.1" }, { 1 / 3.0, "0.3333333333333333" },
                };
                foreach (var entry in cases) Assert.Equal(entry.Value, Json.FormatNumber(entry.Key), "FormatNumber(" + entry.Key.ToString("R") + ")");
                Assert.Equal("{\"a\":[1,\"x\\\"\\u0001\",null,true]}", Json.Write(new Dictionary<string, object> { { "a", new List<object> { 1, "x\"\u0001", null, true } } }));
            });

            Test("JSON: numbers read and written exactly as JavaScript does, where Mono's own Parse and \"R\" are one ulp off", () =>
            {
                // Each is what JSON.stringify writes for the double JSON.parse reads from it (checked against Node).
                foreach (var text in new[] { "7.92676344300616e-10", "-4.506105750784275e-187", "3.1339505768822772e-53", "83925627416761020000",
                    "0.0009674774965318797", "2.543617493802355e-189", "-6.445971303935797e+204", "-5.433295733090286e-309", "5e-324",
                    "2.2250738585072014e-308", "1.7976931348623157e+308", "0.1", "74.89", "1e+21", "123456789012345680000" })
                    Assert.Equal(text, Json.FormatNumber((double)Json.Parse(text)), "round trip of " + text);
                Assert.Equal(9007199254740992.0, (double)Json.Parse("9007199254740993"), "a tie goes to the even mantissa");
                Assert.Equal(9007199254740996.0, (double)Json.Parse("9007199254740995"), "a tie goes to the even mantissa (up)");
                Assert.Equal(0.0, (double)Json.Parse("2.4703282292062327e-324"), "below half the smallest subnormal");
                Assert.Equal(double.Epsilon, (double)Json.Parse("2.4703282292062328e-324"), "above half the smallest subnormal");
                Assert.Equal(0.3, (double)Json.Parse("0.30000000000000000000000000000000000000001"), "many digits");
                Assert.Equal(1e-300, (double)Json.Parse("1" + new string('0', 900) + "e-1200"), "more digits than kept");
                Assert.Throws<FormatException>(() => Json.Parse("1.7976931348623159e308"), "beyond the largest double");
            });

            Test("JSON: a copy is the caller's own", () =>
            {
                var original = Json.Parse("{\"a\":[1,{\"b\":2}]}");
                var copy = (Dictionary<string, object>)Json.Copy(original);
                ((List<object>)copy["a"]).Add(3.0);
                Assert.JsonEqual(Json.Parse("{\"a\":[1,{\"b\":2}]}"), original, "the original is unchanged");
            });

            Test("payload: parses flags, rules, defaults for generatedAt and pollIntervalSeconds", () =>
            {
                var payload = ConfigPayload.Parse("{\"etag\":\"abc\",\"flags\":[{\"key\":\"k\",\"type\":\"number\",\"value\":2,\"runtime\":\"shared\",\"rules\":[{\"id\":\"r\",\"conditions\":[{\"attribute\":\"a\",\"operator\":\"in\",\"values\":[\"x\"]}],\"value\":3}]}]}");
                Assert.Equal("abc", payload.Etag);
                Assert.Equal("", payload.GeneratedAt);
                Assert.Equal(20.0, payload.PollIntervalSeconds);
                Assert.Equal(1, payload.Flags[0].Rules.Count);
                Assert.Equal(5.0, ConfigPayload.Parse("{\"etag\":\"a\",\"pollIntervalSeconds\":5,\"flags\":[]}").PollIntervalSeconds);
                Assert.Equal(20.0, ConfigPayload.Parse("{\"etag\":\"a\",\"pollIntervalSeconds\":0.5,\"flags\":[]}").PollIntervalSeconds);
                Assert.Equal(20.0, ConfigPayload.Parse("{\"etag\":\"a\",\"pollIntervalSeconds\":\"5\",\"flags\":[]}").PollIntervalSeconds);
            });

            Test("payload: a malformed flag refuses the whole payload, saying which", () =>
            {
                var cases = new Dictionary<string, string>
                {
                    { "[]", "not an object" },
                    { "{\"flags\":[]}", "no etag" },
                    { "{\"etag\":\"\",\"flags\":[]}", "no etag" },
                    { "{\"etag\":\"e\"}", "no flags array" },
                    { "{\"etag\":\"e\",\"flags\":[1]}", "flag #0 is not an object" },
                    { "{\"etag\":\"e\",\"flags\":[{\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"}]}", "flag #0 has no key" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"value\":true,\"runtime\":\"shared\"}]}", "flag k has no type" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"boolean\",\"value\":true}]}", "flag k has no runtime" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"boolean\",\"value\":\"true\",\"runtime\":\"shared\"}]}", "flag k's value is not a boolean" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"json\",\"runtime\":\"shared\"}]}", "flag k's value is not a json" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"a\",\"runtime\":\"shared\",\"rules\":null}]}", "flag k's rules are not a list" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"a\",\"runtime\":\"shared\",\"rules\":[{\"id\":\"r\",\"conditions\":[],\"value\":1}]}]}", "flag k's rule #0's value is not a string" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"a\",\"runtime\":\"shared\",\"rules\":[{\"id\":\"r\",\"conditions\":[{\"attribute\":\"a\",\"operator\":\"in\"}],\"value\":\"b\"}]}]}", "without attribute, operator or values" },
                    { "{\"etag\":\"e\",\"flags\":[{\"key\":\"k\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"},{\"key\":\"k\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"}]}", "holds a key twice" },
                };
                foreach (var entry in cases)
                    Assert.Contains(entry.Value, Assert.Throws<FormatException>(() => ConfigPayload.Parse(entry.Key), entry.Key).Message, entry.Key);
            });

            Test("payload: the keys that changed, in key order, rules and key order of json values included", () =>
            {
                Func<string, Dictionary<string, Flag>> map = flags =>
                    ConfigPayload.Parse(FakeTransport.Payload("e", flags)).Flags.ToDictionary(flag => flag.Key, StringComparer.Ordinal);
                var before = map("[{\"key\":\"b\",\"type\":\"json\",\"value\":{\"x\":1,\"y\":2},\"runtime\":\"shared\"},{\"key\":\"a\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"},{\"key\":\"gone\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"},{\"key\":\"r\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"}]");
                var after = map("[{\"key\":\"b\",\"type\":\"json\",\"value\":{\"y\":2,\"x\":1},\"runtime\":\"shared\"},{\"key\":\"a\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"server\"},{\"key\":\"new\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\"},{\"key\":\"r\",\"type\":\"boolean\",\"value\":true,\"runtime\":\"shared\",\"rules\":[{\"id\":\"x\",\"conditions\":[],\"value\":false}]}]");
                Assert.Equal("a,gone,new,r", string.Join(",", ConfigPayload.ChangedKeys(before, after).ToArray()));
            });

            Test("payload: written as the service's shape and read back the same", () =>
            {
                var text = FakeTransport.Payload("e9", "[{\"key\":\"k\",\"type\":\"json\",\"value\":{\"a\":[1,2.5,\"x\"]},\"runtime\":\"server\",\"rules\":[{\"id\":\"r\",\"conditions\":[{\"attribute\":\"p\",\"operator\":\"percentage\",\"values\":[0,10]}],\"value\":null}]}]", 7);
                var payload = ConfigPayload.Parse(text);
                Assert.JsonEqual(Json.Parse(text), Json.Parse(payload.ToJson()));
            });

            Test("timing: poll delays are the interval ±10 %", () =>
            {
                Assert.Equal(18000.0, Timing.PollDelay(20, 0));
                Assert.Near(22000, Timing.PollDelay(20, 0.999999), 1, "the top");
                Assert.Equal(20000.0, Timing.PollDelay(20, 0.5));
            });

            Test("timing: backoff doubles from 1 s to 5 min, ±20 %, never outside", () =>
            {
                Assert.Equal(1000.0, Timing.BackoffDelay(1, 0.5));
                Assert.Equal(2000.0, Timing.BackoffDelay(2, 0.5));
                Assert.Equal(4000.0, Timing.BackoffDelay(3, 0.5));
                Assert.Equal(1000.0, Timing.BackoffDelay(1, 0), "never under 1 s");
                Assert.Equal(1600.0, Timing.BackoffDelay(2, 0));
                Assert.Equal(256000.0, Timing.BackoffDelay(9, 0.5));
                Assert.Equal(300000.0, Timing.BackoffDelay(10, 0.5));
                Assert.Equal(300000.0, Timing.BackoffDelay(50, 0.999), "never over 5 min");
                Assert.Equal(240000.0, Timing.BackoffDelay(50, 0));
            });

            Test("timing: Retry-After as seconds or an HTTP date; waits at least that, up to 10 % more", () =>
            {
                var now = 1767225600000.0; // Thu, 01 Jan 2026 00:00:00 GMT
                Assert.Equal((double?)7000, Timing.ParseRetryAfter("7", now));
                Assert.Equal((double?)7000, Timing.ParseRetryAfter(" 7 ", now));
                Assert.Equal((double?)30000, Timing.ParseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now));
                Assert.Equal((double?)0, Timing.ParseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now));
                Assert.Equal((double?)null, Timing.ParseRetryAfter(null, now));
                Assert.Equal((double?)null, Timing.ParseRetryAfter("soon", now));
                Assert.Equal((double?)null, Timing.ParseRetryAfter("-3", now));
                Assert.Equal(7000.0, Timing.RetryAfterDelay(7000, 0));
                Assert.Near(7700, Timing.RetryAfterDelay(7000, 0.99999), 1, "10 % more at most");
                Assert.Equal(1000.0, Timing.RetryAfterDelay(0, 0), "Retry-After: 0 still waits a second");
                Assert.Equal("W/\"abc\"", Timing.IfNoneMatch("abc"));
            });

            Test("targeting: semantic versions by SemVer 2.0.0 precedence", () =>
            {
                Func<string, string, int> compare = (a, b) => SemanticVersion.Compare(SemanticVersion.Parse(a), SemanticVersion.Parse(b));
                Assert.True(compare("1.4", "1.4.0") == 0, "1.4 is 1.4.0");
                Assert.True(compare("1.10.0", "1.9.9") > 0, "numeric parts compare as numbers");
                Assert.True(compare("1.0.0-alpha", "1.0.0") < 0, "a pre-release comes before its release");
                Assert.True(compare("1.0.0-alpha", "1.0.0-alpha.1") < 0, "a longer pre-release comes after");
                Assert.True(compare("1.0.0-alpha.beta", "1.0.0-beta") < 0, "ASCII order");
                Assert.True(compare("1.0.0-beta.2", "1.0.0-beta.11") < 0, "numeric identifiers as numbers");
                Assert.True(compare("1.0.0-1", "1.0.0-a") < 0, "numeric below alphanumeric");
                Assert.True(compare("1.0.0+build.1", "1.0.0+build.2") == 0, "build metadata ignored");
                foreach (var text in new[] { "v1.4", "1.04", "1.0.0-01", "", "1.", "1.2.3.4", "1.4\n", "١.٤", "99999999999999999999.0.0", new string('1', 257) })
                    Assert.True(SemanticVersion.Parse(text) == null, "'" + text + "' is not a version");
                Assert.True(SemanticVersion.Parse("9007199254740991.0.0") != null, "the largest safe integer is a version part");
            });

            Test("targeting: context values of any .NET number type, bool or string, as the vectors' JSON ones", () =>
            {
                var rules = ConfigPayload.Parse(FakeTransport.Payload("e", "[{\"key\":\"loot-table\",\"type\":\"number\",\"value\":0,\"runtime\":\"shared\",\"rules\":[" +
                    "{\"id\":\"slot\",\"conditions\":[{\"attribute\":\"playerId\",\"operator\":\"percentage\",\"values\":[57.63,57.64]}],\"value\":1}," +
                    "{\"id\":\"level\",\"conditions\":[{\"attribute\":\"level\",\"operator\":\"gte\",\"values\":[10]}],\"value\":2}]}]")).Flags[0];
                foreach (var id in new object[] { 42, 42L, 42.0, 42.0f, (short)42, (byte)42, 42m, 42u, "42" })
                    Assert.Equal("slot", Targeting.Evaluate(rules, new Dictionary<string, object> { { "playerId", id } }).Variant, id.GetType().Name + " 42");
                foreach (var level in new object[] { 10, 10.5f, 11L, 1e3 })
                    Assert.Equal("level", Targeting.Evaluate(rules, new Dictionary<string, object> { { "level", level } }).Variant, level.GetType().Name);
                foreach (var level in new object[] { "10", true, null, new List<object> { 10 }, double.NaN })
                    Assert.Equal("default", Targeting.Evaluate(rules, new Dictionary<string, object> { { "level", level } }).Variant, level == null ? "null" : level.ToString());
                Assert.Equal("0.1", Targeting.StringForm(0.1f), "a float by its shortest text");
                Assert.Equal("true", Targeting.StringForm(true));
                Assert.Equal(null, Targeting.StringForm(double.PositiveInfinity));
            });

            Test("targeting: 100,000 ids put between 9.7 % and 10.3 % into [0, 10]", () =>
            {
                var inside = 0;
                for (var i = 0; i < 100000; i++) if (Targeting.BucketOf("rollout", "player-" + i) < 10) inside++;
                Assert.Between(9700, 10300, inside, "ids in [0, 10)");
            });

            Test("SSE: events, comments, CRLF split across chunks, multi-line data, id, retry, BOM", () =>
            {
                var events = new List<SseEvent>();
                var retries = new List<double>();
                var parser = new SseParser(events.Add, retries.Add);
                parser.Push("\uFEFF: hello\r");
                parser.Push("\nid: e1\r\nevent: message\r\ndata: {\"type\":\"refetchEvaluation\",\r");
                parser.Push("\ndata: \"etag\":\"e1\"}\r\n\r\nretry: 5000\n\nretry: x\n\ndata:no-space\n");
                parser.Push("\ndata\n\nevent: other\ndata: o\n\nid: bad\0id\ndata: last\n\ndata: dropped at the end");
                Assert.Equal(5, events.Count, "events");
                Assert.Equal("{\"type\":\"refetchEvaluation\",\n\"etag\":\"e1\"}", events[0].Data);
                Assert.Equal("message", events[0].Type);
                Assert.Equal("e1", events[0].LastEventId);
                Assert.Equal("no-space", events[1].Data);
                Assert.Equal("", events[2].Data, "a bare data line is an empty data line");
                Assert.Equal("other", events[3].Type);
                Assert.Equal("o", events[3].Data);
                Assert.Equal("last", events[4].Data);
                Assert.Equal("e1", events[4].LastEventId, "an id with NUL is ignored");
                Assert.Equal("5000", string.Join(",", retries.Select(r => r.ToString()).ToArray()));
            });

            Test("cache file: written whole (no temporary file left), read back, absent is null, garbage throws", () =>
            {
                var dir = Path.Combine(Path.GetTempPath(), "flagstore-cs-" + Guid.NewGuid().ToString("N"));
                Directory.CreateDirectory(dir);
                try
                {
                    var path = Path.Combine(dir, "flags.json");
                    Assert.True(CacheFile.Read(path) == null, "absent: null");
                    Assert.True(CacheFile.Read(Path.Combine(dir, "no", "such.json")) == null, "absent folder: null");
                    CacheFile.Write(path, ConfigPayload.Parse(FakeTransport.Payload("e1", "[{\"key\":\"a\",\"type\":\"string\",\"value\":\"ä\",\"runtime\":\"shared\"}]")));
                    CacheFile.Write(path, ConfigPayload.Parse(FakeTransport.Payload("e2", "[{\"key\":\"a\",\"type\":\"string\",\"value\":\"ö\",\"runtime\":\"shared\"}]")));
                    var read = CacheFile.Read(path);
                    Assert.Equal("e2", read.Etag);
                    Assert.Equal("ö", (string)read.Flags[0].Value);
                    Assert.Equal(1, Directory.GetFiles(dir).Length, "files in the folder");
                    if (Environment.OSVersion.Platform == PlatformID.Unix)
                    {
                        var stat = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("stat", "-c %a \"" + path + "\"")
                        {
                            UseShellExecute = false,
                            RedirectStandardOutput = true,
                        });
                        var mode = stat.StandardOutput.ReadToEnd().Trim();
                        stat.WaitForExit();
                        Assert.Equal("600", mode, "the file is the owner's alone");
                    }
                    File.WriteAllText(path, "{\"etag\":");
                    Assert.Throws<FormatException>(() => CacheFile.Read(path), "a torn file");
                }
                finally
                {
                    Directory.Delete(dir, true);
                }
            });
        }
    }
}
