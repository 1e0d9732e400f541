using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading.Tasks;

namespace Flagstore.Tests
{
    /// <summary>
    /// The SDK's test program: every test registered by the suites below runs in order, one line each, then
    /// "N passed, M failed"; the exit status is 1 when any failed. Arguments: the repository's root (for the shared
    /// fixtures), then optionally a word a test's name must contain. The scenarios run against the service named by
    /// FLAGSTORE_URL and FLAGSTORE_KEY, and are skipped (counted as failures unless FLAGSTORE_SKIP_SCENARIOS=1) without them.
    /// </summary>
    public static class Runner
    {
        sealed class Case
        {
            public string Name;
            public Func<Task> Body;
        }

        static readonly List<Case> Cases = new List<Case>();
        public static string Root { get; private set; }

        public static void Test(string name, Action body)
        {
            // On a pool thread, so that a test that hangs fails after the deadline instead of holding the run.
            Cases.Add(new Case { Name = name, Body = () => Task.Run(body) });
        }

        public static void TestAsync(string name, Func<Task> body)
        {
            Cases.Add(new Case { Name = name, Body = body });
        }

        public static int Main(string[] args)
        {
            Root = Path.GetFullPath(args.Length > 0 ? args[0] : Path.Combine("..", ".."));
            var filter = args.Length > 1 ? args[1] : null;
            CoreTests.Register();
            FixtureTests.Register();
            ClientTests.Register();
            TransportTests.Register();
            ScenarioTests.Register();
            int passed = 0, failed = 0;
            var watch = Stopwatch.StartNew();
            foreach (var test in Cases)
            {
                if (filter != null && test.Name.IndexOf(filter, StringComparison.OrdinalIgnoreCase) < 0) continue;
                var started = watch.ElapsedMilliseconds;
                try
                {
                    var run = test.Body();
                    if (!run.Wait(TimeSpan.FromSeconds(150))) throw new TimeoutException("the test did not finish within 150 s");
                    passed++;
                    Console.WriteLine("ok   " + test.Name + Took(watch.ElapsedMilliseconds - started));
                }
                catch (Exception error)
                {
                    failed++;
                    var inner = error is AggregateException && error.InnerException != null ? error.InnerException : error;
                    Console.WriteLine("FAIL " + test.Name + Took(watch.ElapsedMilliseconds - started));
                    Console.WriteLine("     " + inner.GetType().Name + ": " + inner.Message.Replace("\n", "\n     "));
                    if (!(inner is AssertionException)) Console.WriteLine("     " + (inner.StackTrace ?? "").Replace("\n", "\n     "));
                }
            }
            Console.WriteLine(passed + " passed, " + failed + " failed (" + watch.ElapsedMilliseconds + " ms)");
            return failed == 0 && passed > 0 ? 0 : 1;
        }

        static string Took(long ms)
        {
            return ms >= 200 ? " (" + ms + " ms)" : "";
        }
    }

    public sealed class AssertionException : Exception
    {
        public AssertionException(string message) : base(message) { }
    }

    public static class Assert
    {
        public static void True(bool condition, string what)
        {
            if (!condition) throw new AssertionException(what);
        }

        public static void Equal<T>(T expected, T actual, string what = null)
        {
            var expectedList = expected as System.Collections.IEnumerable;
            var actualList = actual as System.Collections.IEnumerable;
            if (expectedList != null && actualList != null && !(expected is string))
            {
                var a = expectedList.Cast<object>().ToList();
                var b = actualList.Cast<object>().ToList();
                if (!a.SequenceEqual(b))
                    throw new AssertionException((what == null ? "" : what + ": ") + "expected [" + string.Join(", ", a.Select(Show).ToArray()) + "], got [" + string.Join(", ", b.Select(Show).ToArray()) + "]");
                return;
            }
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
                throw new AssertionException((what == null ? "" : what + ": ") + "expected " + Show(expected) + ", got " + Show(actual));
        }

        public static void JsonEqual(object expected, object actual, string what = null)
        {
            if (!Json.SameJson(expected, actual))
                throw new AssertionException((what == null ? "" : what + ": ") + "expected " + Json.Write(expected) + ", got " + Json.Write(actual));
        }

        public static void Near(double expected, double actual, double tolerance, string what)
        {
            if (Math.Abs(expected - actual) > tolerance) throw new AssertionException(what + ": expected " + expected + " ± " + tolerance + ", got " + actual);
        }

        public static void Between(double low, double high, double actual, string what)
        {
            if (actual < low || actual > high) throw new AssertionException(what + ": expected between " + low + " and " + high + ", got " + actual);
        }

        public static TException Throws<TException>(Action body, string what) where TException : Exception
        {
            try
            {
                body();
            }
            catch (TException error)
            {
                return error;
            }
            catch (Exception error)
            {
                throw new AssertionException(what + ": expected " + typeof(TException).Name + ", got " + error.GetType().Name + ": " + error.Message);
            }
            throw new AssertionException(what + ": expected " + typeof(TException).Name + ", nothing was thrown");
        }

        public static void Contains(string needle, string haystack, string what)
        {
            if (haystack == null || haystack.IndexOf(needle, StringComparison.Ordinal) < 0)
                throw new AssertionException(what + ": expected it to contain \"" + needle + "\", got \"" + haystack + "\"");
        }

        static string Show(object value)
        {
            if (value == null) return "null";
            if (value is string) return "\"" + value + "\"";
            if (value is IEnumerable<string>) return "[" + string.Join(", ", new List<string>((IEnumerable<string>)value).ToArray()) + "]";
            return value.ToString();
        }
    }
}
