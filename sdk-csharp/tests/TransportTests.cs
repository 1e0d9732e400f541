using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using static Flagstore.Tests.Runner;

namespace Flagstore.Tests
{
    /// <summary>HttpClientTransport over an HttpMessageHandler that answers from code: headers, bodies, streaming.</summary>
    public static class TransportTests
    {
        sealed class StubHandler : HttpMessageHandler
        {
            public Func<HttpRequestMessage, HttpResponseMessage> Answer;
            public HttpRequestMessage Last;

            protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellation)
            {
                Last = request;
                return Task.FromResult(Answer(request));
            }
        }

        /// <summary>A body that hands out one chunk per read, and then waits (or ends) as the test says.</summary>
        sealed class ChunkStream : Stream
        {
            readonly Queue<byte[]> chunks;
            readonly bool endAfter;
            public readonly TaskCompletionSource<int> Hold = new TaskCompletionSource<int>();

            public ChunkStream(IEnumerable<byte[]> chunks, bool endAfter)
            {
                this.chunks = new Queue<byte[]>(chunks);
                this.endAfter = endAfter;
            }

            public override int Read(byte[] buffer, int offset, int count)
            {
                return ReadAsync(buffer, offset, count, CancellationToken.None).Result;
            }

            public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellation)
            {
                lock (chunks)
                {
                    if (chunks.Count > 0)
                    {
                        var chunk = chunks.Dequeue();
                        Array.Copy(chunk, 0, buffer, offset, chunk.Length);
                        return Task.FromResult(chunk.Length);
                    }
                }
                if (endAfter) return Task.FromResult(0);
                cancellation.Register(() => Hold.TrySetCanceled());
                return Hold.Task;
            }

            public override bool CanRead { get { return true; } }
            public override bool CanSeek { get { return false; } }
            public override bool CanWrite { get { return false; } }
            public override long Length { get { throw new NotSupportedException(); } }
            public override long Position { get { throw new NotSupportedException(); } set { throw new NotSupportedException(); } }
            public override void Flush() { }
            public override long Seek(long offset, SeekOrigin origin) { throw new NotSupportedException(); }
            public override void SetLength(long value) { throw new NotSupportedException(); }
            public override void Write(byte[] buffer, int offset, int count) { throw new NotSupportedException(); }
        }

        static TransportRequest Request(params string[] headers)
        {
            var map = new Dictionary<string, string>();
            for (var i = 0; i < headers.Length; i += 2) map[headers[i]] = headers[i + 1];
            return new TransportRequest("http://flagstore.test/v1/flags/config", map);
        }

        public static void Register()
        {
            Test("HttpClientTransport: sends the client's headers, gives status, headers (any case) and body", () =>
            {
                var handler = new StubHandler
                {
                    Answer = request =>
                    {
                        var response = new HttpResponseMessage((HttpStatusCode)429) { Content = new StringContent("{\"message\":\"slow down\"}", Encoding.UTF8, "application/json") };
                        response.Headers.TryAddWithoutValidation("Retry-After", "12");
                        response.Headers.TryAddWithoutValidation("ETag", "W/\"abc\"");
                        return response;
                    },
                };
                var transport = new HttpClientTransport(new HttpClient(handler));
                var answer = transport.SendAsync(Request("Authorization", "Bearer k", "If-None-Match", "W/\"abc\""), CancellationToken.None).Result;
                Assert.Equal("Bearer k", string.Join(",", handler.Last.Headers.GetValues("Authorization")));
                Assert.Equal("W/\"abc\"", string.Join(",", handler.Last.Headers.GetValues("If-None-Match")));
                Assert.Equal(429, answer.Status);
                Assert.Equal("12", answer.Header("retry-after"));
                Assert.Equal("W/\"abc\"", answer.Header("ETAG"));
                Assert.Contains("application/json", answer.Header("Content-Type"), "content headers too");
                Assert.Equal("{\"message\":\"slow down\"}", answer.Body);
            });

            Test("HttpClientTransport: a stream's text arrives as it comes, a character split across reads whole", () =>
            {
                var bytes = Encoding.UTF8.GetBytes("data: spieler-ä 🎮\n\n");
                var split = Array.IndexOf(bytes, (byte)0xC3) + 1; // between the two bytes of ä
                var body = new ChunkStream(new[] { Slice(bytes, 0, split), Slice(bytes, split, 3), Slice(bytes, split + 3, bytes.Length - split - 3) }, true);
                var handler = new StubHandler
                {
                    Answer = request =>
                    {
                        var content = new StreamContent(body);
                        content.Headers.TryAddWithoutValidation("Content-Type", "text/event-stream");
                        return new HttpResponseMessage(HttpStatusCode.OK) { Content = content };
                    },
                };
                var texts = new List<string>();
                var transport = new HttpClientTransport(new HttpClient(handler));
                var head = transport.OpenStreamAsync(Request("Accept", "text/event-stream"), text => { lock (texts) texts.Add(text); }, CancellationToken.None).Result;
                Assert.Equal(200, head.Status);
                Assert.Equal("text/event-stream", head.Header("Content-Type"));
                Assert.True(head.Completion.Wait(5000), "the body ends");
                Assert.Equal("data: spieler-ä 🎮\n\n", string.Concat(texts));
                foreach (var text in texts) Assert.True(text.IndexOf('\uFFFD') < 0, "no replacement character in " + text);
            });

            Test("HttpClientTransport: a stream refused gives its body; a cancelled one ends", () =>
            {
                var handler = new StubHandler { Answer = request => new HttpResponseMessage(HttpStatusCode.Unauthorized) { Content = new StringContent("{\"message\":\"Missing or invalid API key\"}") } };
                var transport = new HttpClientTransport(new HttpClient(handler));
                var refused = transport.OpenStreamAsync(Request(), text => { }, CancellationToken.None).Result;
                Assert.Equal(401, refused.Status);
                Assert.Contains("Missing or invalid API key", refused.Body, "the body");
                Assert.True(refused.Completion.IsCompleted, "nothing to wait for");

                var body = new ChunkStream(new[] { Encoding.UTF8.GetBytes(": hello\n") }, false);
                handler.Answer = request => new HttpResponseMessage(HttpStatusCode.OK) { Content = new StreamContent(body) };
                var cancel = new CancellationTokenSource();
                var open = transport.OpenStreamAsync(Request(), text => { }, cancel.Token).Result;
                Assert.True(!open.Completion.Wait(100), "open until cancelled");
                cancel.Cancel();
                try
                {
                    open.Completion.Wait(5000);
                }
                catch (AggregateException)
                {
                }
                Assert.True(open.Completion.IsCanceled || open.Completion.IsFaulted, "ended by the cancellation");
            });
        }

        static byte[] Slice(byte[] bytes, int from, int count)
        {
            var slice = new byte[count];
            Array.Copy(bytes, from, slice, 0, count);
            return slice;
        }
    }
}
