using System;
using System.Collections.Generic;
using System.Text;

namespace Flagstore
{
    /// <summary>One dispatched server-sent event.</summary>
    public sealed class SseEvent
    {
        /// <summary>event:, or "message" when the event named none.</summary>
        public string Type { get; private set; }
        /// <summary>Its data: lines joined with a line feed.</summary>
        public string Data { get; private set; }
        /// <summary>The stream's last event id as of this event.</summary>
        public string LastEventId { get; private set; }

        public SseEvent(string type, string data, string lastEventId)
        {
            Type = type;
            Data = data;
            LastEventId = lastEventId;
        }
    }

    /// <summary>
    /// The text/event-stream parser of the HTML standard (9.2.6), fed text chunk by chunk (the transport decodes UTF-8
    /// and holds a character split across chunks): lines end with CRLF, LF or CR (a CRLF may be split across chunks),
    /// ":" starts a comment, a field's value loses one leading space, an empty line dispatches, an event without data
    /// is not dispatched, and what is left when the stream ends is dropped. A leading byte order mark is dropped.
    /// </summary>
    public sealed class SseParser
    {
        readonly Action<SseEvent> onEvent;
        readonly Action<double> onRetry;
        string pending = "";
        bool started;
        bool skipLineFeed;
        readonly List<string> dataLines = new List<string>();
        string eventType = "";
        string lastEventId = "";

        public SseParser(Action<SseEvent> onEvent, Action<double> onRetry)
        {
            this.onEvent = onEvent;
            this.onRetry = onRetry;
        }

        public void Push(string chunk)
        {
            var text = pending + chunk;
            var position = 0;
            if (!started && text.Length > 0)
            {
                started = true;
                if (text[0] == '\uFEFF') position = 1;
            }
            if (skipLineFeed && text.Length > position)
            {
                if (text[position] == '\n') position++;
                skipLineFeed = false;
            }
            for (;;)
            {
                var end = text.IndexOfAny(LineBreaks, position);
                if (end == -1) break;
                var line = text.Substring(position, end - position);
                if (text[end] == '\r' && end + 1 == text.Length)
                {
                    skipLineFeed = true;
                    position = end + 1;
                }
                else
                {
                    position = text[end] == '\r' && text[end + 1] == '\n' ? end + 2 : end + 1;
                }
                Line(line);
            }
            pending = text.Substring(position);
        }

        static readonly char[] LineBreaks = { '\r', '\n' };

        void Line(string line)
        {
            if (line.Length == 0) { Dispatch(); return; }
            if (line[0] == ':') return;
            var colon = line.IndexOf(':');
            var field = colon == -1 ? line : line.Substring(0, colon);
            var value = colon == -1 ? "" : line.Substring(colon + 1);
            if (value.StartsWith(" ", StringComparison.Ordinal)) value = value.Substring(1);
            switch (field)
            {
                case "event":
                    eventType = value;
                    break;
                case "data":
                    dataLines.Add(value);
                    break;
                case "id":
                    if (value.IndexOf('\0') < 0) lastEventId = value;
                    break;
                case "retry":
                    double delay;
                    if (value.Length > 0 && IsDigits(value) && double.TryParse(value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out delay) && onRetry != null) onRetry(delay);
                    break;
            }
        }

        static bool IsDigits(string value)
        {
            foreach (var c in value) if (c < '0' || c > '9') return false;
            return true;
        }

        void Dispatch()
        {
            var type = eventType.Length > 0 ? eventType : "message";
            eventType = "";
            if (dataLines.Count == 0) return;
            var data = string.Join("\n", dataLines.ToArray());
            dataLines.Clear();
            onEvent(new SseEvent(type, data, lastEventId));
        }
    }
}
