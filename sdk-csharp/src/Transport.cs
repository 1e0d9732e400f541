using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore
{
    /// <summary>A GET the client asks its transport to make.</summary>
    public sealed class TransportRequest
    {
        public string Url { get; private set; }
        /// <summary>Authorization, Accept, and If-None-Match or Last-Event-ID when the client has an etag.</summary>
        public IDictionary<string, string> Headers { get; private set; }

        public TransportRequest(string url, IDictionary<string, string> headers)
        {
            Url = url;
            Headers = headers;
        }
    }

    /// <summary>What a transport got back.</summary>
    public sealed class TransportResponse
    {
        static readonly Task Done = Task.FromResult(true);

        public int Status { get; private set; }
        /// <summary>Response headers, names case-insensitive; a header sent several times has its values joined with ", ".</summary>
        public IDictionary<string, string> Headers { get; private set; }
        /// <summary>The whole body, for SendAsync and for a stream that did not open (a status other than 200); else "".</summary>
        public string Body { get; private set; }
        /// <summary>For an open stream: completes when the body ends, faults when it breaks. Otherwise already complete.</summary>
        public Task Completion { get; private set; }

        public TransportResponse(int status, IDictionary<string, string> headers, string body, Task completion = null)
        {
            Status = status;
            var copy = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            if (headers != null) foreach (var entry in headers) copy[entry.Key] = entry.Value;
            Headers = copy;
            Body = body ?? "";
            Completion = completion ?? Done;
        }

        /// <summary>A header's value, or null.</summary>
        public string Header(string name)
        {
            string value;
            return Headers.TryGetValue(name, out value) ? value : null;
        }
    }

    /// <summary>
    /// How the client reaches the service: HttpClientTransport on .NET servers, a UnityWebRequest one in a Unity
    /// project (see the README), a fake in tests. The client calls it from timer threads; it must be safe to call from
    /// any thread (a transport bound to one thread posts its work there).
    /// </summary>
    public interface ITransport
    {
        /// <summary>A GET whose body is read whole. A cancelled token ends it (the client also stops waiting on its own).</summary>
        Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation);

        /// <summary>
        /// A long-lived GET (the change stream). Completes once the answer's head is in: with a status other than 200 the
        /// body is read whole into Body; with 200 the body's text is handed to onText as it arrives (decoded as UTF-8,
        /// a character split across reads held back) until Completion completes (the body ended) or faults (it broke).
        /// A cancelled token ends the stream. A transport that cannot stream throws NotSupportedException: the client
        /// then polls.
        /// </summary>
        Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation);
    }
}
