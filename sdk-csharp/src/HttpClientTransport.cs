using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore
{
    /// <summary>The transport for .NET servers (and Unity projects on the .NET 4.x or Standard 2.1 profile): System.Net.Http.</summary>
    public sealed class HttpClientTransport : ITransport, IDisposable
    {
        readonly HttpClient client;
        readonly bool ownsClient;

        /// <summary>With no client, one of its own (no timeout of its own: the Flagstore client has its deadlines).</summary>
        public HttpClientTransport(HttpClient client = null)
        {
            ownsClient = client == null;
            this.client = client ?? new HttpClient { Timeout = System.Threading.Timeout.InfiniteTimeSpan };
        }

        public async Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellation)
        {
            using (var message = Message(request))
            using (var response = await client.SendAsync(message, HttpCompletionOption.ResponseContentRead, cancellation).ConfigureAwait(false))
            {
                var body = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                return new TransportResponse((int)response.StatusCode, HeadersOf(response), body);
            }
        }

        public async Task<TransportResponse> OpenStreamAsync(TransportRequest request, Action<string> onText, CancellationToken cancellation)
        {
            var message = Message(request);
            HttpResponseMessage response;
            try
            {
                response = await client.SendAsync(message, HttpCompletionOption.ResponseHeadersRead, cancellation).ConfigureAwait(false);
            }
            catch
            {
                message.Dispose();
                throw;
            }
            var status = (int)response.StatusCode;
            if (status != 200)
            {
                using (message)
                using (response)
                {
                    var body = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                    return new TransportResponse(status, HeadersOf(response), body);
                }
            }
            var stream = await response.Content.ReadAsStreamAsync().ConfigureAwait(false);
            var completion = Pump(stream, onText, cancellation, message, response);
            return new TransportResponse(status, HeadersOf(response), "", completion);
        }

        static async Task Pump(Stream stream, Action<string> onText, CancellationToken cancellation, HttpRequestMessage message, HttpResponseMessage response)
        {
            // A read that ignores the token still ends: disposing the response closes the connection under it.
            using (cancellation.Register(() => response.Dispose()))
            using (message)
            using (response)
            {
                var decoder = new UTF8Encoding(false).GetDecoder();
                var bytes = new byte[8192];
                var chars = new char[8192 + 4];
                for (;;)
                {
                    cancellation.ThrowIfCancellationRequested();
                    int read;
                    try
                    {
                        read = await stream.ReadAsync(bytes, 0, bytes.Length, cancellation).ConfigureAwait(false);
                    }
                    catch (ObjectDisposedException)
                    {
                        cancellation.ThrowIfCancellationRequested();
                        throw;
                    }
                    if (read == 0) return;
                    var count = decoder.GetChars(bytes, 0, read, chars, 0, false);
                    if (count > 0) onText(new string(chars, 0, count));
                }
            }
        }

        static HttpRequestMessage Message(TransportRequest request)
        {
            var message = new HttpRequestMessage(HttpMethod.Get, request.Url);
            foreach (var header in request.Headers) message.Headers.TryAddWithoutValidation(header.Key, header.Value);
            return message;
        }

        static Dictionary<string, string> HeadersOf(HttpResponseMessage response)
        {
            var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            Add(headers, response.Headers);
            if (response.Content != null) Add(headers, response.Content.Headers);
            return headers;
        }

        static void Add(Dictionary<string, string> headers, HttpHeaders from)
        {
            foreach (var header in from) headers[header.Key] = string.Join(", ", new List<string>(header.Value).ToArray());
        }

        public void Dispose()
        {
            if (ownsClient) client.Dispose();
        }
    }
}
