using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text.RegularExpressions;
using System.Threading;

namespace Flagstore
{
    /// <summary>
    /// Every deliberate wait of the client (the poll interval, backoff, Retry-After, stream reconnects) goes through a
    /// scheduler, so a test, or a game loop with its own clock, decides when time passes. Watchdogs on a hung connection
    /// (RequestTimeoutMs, StreamSilenceTimeoutMs) are not waits the client chooses and use real timers.
    /// </summary>
    public interface IScheduler
    {
        /// <summary>Runs callback once after delayMs; the handle cancels it.</summary>
        object SetTimeout(Action callback, double delayMs);
        void ClearTimeout(object handle);
        /// <summary>Milliseconds since the Unix epoch: what Retry-After is measured against.</summary>
        double Now();
    }

    /// <summary>System.Threading timers (callbacks on the thread pool) and the system clock.</summary>
    public sealed class SystemScheduler : IScheduler
    {
        public static readonly SystemScheduler Instance = new SystemScheduler();
        static readonly DateTime Epoch = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc);

        public object SetTimeout(Action callback, double delayMs)
        {
            var due = (long)Math.Max(0, Math.Min(delayMs, int.MaxValue));
            Timer timer = null;
            timer = new Timer(state =>
            {
                if (!Timers.Release(timer)) return;
                callback();
            }, null, Timeout.Infinite, Timeout.Infinite);
            Timers.Hold(timer);
            timer.Change(due, Timeout.Infinite);
            return timer;
        }

        public void ClearTimeout(object handle)
        {
            var timer = handle as Timer;
            if (timer != null) Timers.Release(timer);
        }

        public double Now()
        {
            return (DateTime.UtcNow - Epoch).TotalMilliseconds;
        }
    }

    /// <summary>
    /// Timers waiting to fire, held here: a System.Threading.Timer nothing refers to may be collected before it fires.
    /// </summary>
    static class Timers
    {
        static readonly HashSet<Timer> Live = new HashSet<Timer>();

        public static void Hold(Timer timer)
        {
            lock (Live) Live.Add(timer);
        }

        /// <summary>Disposes the timer; false when it was released already (cleared, or fired).</summary>
        public static bool Release(Timer timer)
        {
            bool held;
            lock (Live) held = Live.Remove(timer);
            timer.Dispose();
            return held;
        }
    }

    /// <summary>The client's timing decisions, pure functions of their inputs (random in [0, 1)).</summary>
    public static class Timing
    {
        public const double DefaultPollIntervalSeconds = 20;
        public const double BackoffMinMs = 1000;
        public const double BackoffMaxMs = 5 * 60000;

        /// <summary>The payload's pollIntervalSeconds, ±10 %, so servers started together do not poll together.</summary>
        public static double PollDelay(double intervalSeconds, double random)
        {
            return intervalSeconds * 1000 * (0.9 + 0.2 * random);
        }

        /// <summary>1 s, 2 s, 4 s … for the 1st, 2nd, 3rd … failure in a row, ±20 %, never outside 1 s … 5 min.</summary>
        public static double BackoffDelay(int failures, double random)
        {
            var basis = Math.Min(BackoffMaxMs, BackoffMinMs * Math.Pow(2, Math.Max(0, failures - 1)));
            return Math.Min(BackoffMaxMs, Math.Max(BackoffMinMs, basis * (0.8 + 0.4 * random)));
        }

        /// <summary>Retry-After's wait, then up to 10 % more: never earlier than the service asked, and not all at once.</summary>
        public static double RetryAfterDelay(double retryAfterMs, double random)
        {
            return Math.Max(BackoffMinMs, retryAfterMs) * (1 + 0.1 * random);
        }

        /// <summary>A stream the service ended with a retry: hint is reopened after that hint, up to twice as long.</summary>
        public static double ReconnectDelay(double retryMs, double random)
        {
            return retryMs * (1 + random);
        }

        static readonly Regex Digits = new Regex("^[0-9]+$");

        /// <summary>Retry-After in milliseconds: delay-seconds or an HTTP-date (RFC 9110 10.2.3); null when absent or unreadable.</summary>
        public static double? ParseRetryAfter(string header, double nowMs)
        {
            if (header == null) return null;
            var value = header.Trim();
            if (Digits.IsMatch(value))
            {
                double seconds;
                if (double.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out seconds)) return seconds * 1000;
                return null;
            }
            DateTimeOffset date;
            if (!DateTimeOffset.TryParse(value, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out date)) return null;
            var ms = (date.UtcDateTime - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).TotalMilliseconds;
            return Math.Max(0, ms - nowMs);
        }

        /// <summary>The If-None-Match for a payload's etag: the service's validator is weak, sent back exactly as served.</summary>
        public static string IfNoneMatch(string etag)
        {
            return "W/\"" + etag + "\"";
        }
    }
}
