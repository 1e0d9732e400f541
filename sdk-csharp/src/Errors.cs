using System;
using System.Collections.Generic;

namespace Flagstore
{
    /// <summary>
    /// What went wrong, as the Error event and a faulted Ready report it (the TypeScript SDK's kinds).
    /// Unauthorized (401) and Forbidden (403): the key is wrong, revoked or lacks FLAGS_READ; the client stops for good.
    /// RateLimited (429): no request before RetryAfterSeconds. Server (5xx), Http (other statuses), Network, Timeout,
    /// InvalidPayload: the client keeps the last good payload and retries with backoff. Stream: the change stream
    /// dropped or was refused (the client polls meanwhile). Cache: the cache file could not be read or written.
    /// Closed: Close() came before Ready.
    /// </summary>
    public enum FlagstoreErrorKind
    {
        Unauthorized,
        Forbidden,
        RateLimited,
        Server,
        Http,
        Network,
        Timeout,
        InvalidPayload,
        Stream,
        Cache,
        Closed,
    }

    public sealed class FlagstoreException : Exception
    {
        public FlagstoreErrorKind Kind { get; private set; }
        /// <summary>The HTTP status the service answered, when it answered.</summary>
        public int? Status { get; private set; }
        /// <summary>From Retry-After on a 429.</summary>
        public int? RetryAfterSeconds { get; private set; }

        public FlagstoreException(FlagstoreErrorKind kind, string message, int? status = null, int? retryAfterSeconds = null, Exception cause = null)
            : base(message, cause)
        {
            Kind = kind;
            Status = status;
            RetryAfterSeconds = retryAfterSeconds;
        }

        /// <summary>401 and 403: retrying cannot help, so the client stops.</summary>
        public bool IsFatal
        {
            get { return Kind == FlagstoreErrorKind.Unauthorized || Kind == FlagstoreErrorKind.Forbidden; }
        }

        /// <summary>The error for an HTTP answer that is not the one expected; body is the service's {statusCode, error, message}.</summary>
        public static FlagstoreException FromStatus(string what, int status, string body, int? retryAfterSeconds)
        {
            var message = what + " answered " + status + ServiceMessage(body);
            if (status == 401) return new FlagstoreException(FlagstoreErrorKind.Unauthorized, message, status);
            if (status == 403) return new FlagstoreException(FlagstoreErrorKind.Forbidden, message, status);
            if (status == 429) return new FlagstoreException(FlagstoreErrorKind.RateLimited, message, status, retryAfterSeconds);
            if (status >= 500) return new FlagstoreException(FlagstoreErrorKind.Server, message, status);
            return new FlagstoreException(FlagstoreErrorKind.Http, message, status);
        }

        /// <summary>A failure that is not an HTTP answer (refused connection, DNS, reset, a throwing transport).</summary>
        public static FlagstoreException FromFailure(Exception error, string what)
        {
            var known = error as FlagstoreException;
            if (known != null) return known;
            var aggregate = error as AggregateException;
            if (aggregate != null && aggregate.InnerExceptions.Count == 1) return FromFailure(aggregate.InnerException, what);
            return new FlagstoreException(FlagstoreErrorKind.Network, what + " failed: " + Describe(error), null, null, error);
        }

        static string Describe(Exception error)
        {
            var message = error.Message;
            var inner = error.InnerException;
            while (inner != null)
            {
                if (!string.IsNullOrEmpty(inner.Message) && message.IndexOf(inner.Message, StringComparison.Ordinal) < 0)
                    message += " (" + inner.Message + ")";
                inner = inner.InnerException;
            }
            return message;
        }

        static string ServiceMessage(string body)
        {
            if (string.IsNullOrEmpty(body)) return "";
            try
            {
                var parsed = Json.Parse(body) as Dictionary<string, object>;
                object message;
                if (parsed == null || !parsed.TryGetValue("message", out message)) return "";
                var text = message as string;
                if (text != null) return ": " + text;
                var list = message as List<object>;
                if (list != null)
                {
                    var parts = new List<string>();
                    foreach (var item in list) parts.Add(item == null ? "null" : item.ToString());
                    return ": " + string.Join("; ", parts.ToArray());
                }
            }
            catch (FormatException)
            {
                // Not the service's JSON (a proxy's HTML page, say): the status says enough.
            }
            return "";
        }
    }
}
