using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Flagstore
{
    /// <summary>
    /// The SDK's own JSON (no dependency): a value is <c>null</c>, <c>bool</c>, <c>double</c>, <c>string</c>,
    /// <c>List&lt;object&gt;</c> or <c>Dictionary&lt;string, object&gt;</c>. Numbers are doubles, as in JSON's
    /// JavaScript origin; object key order is not significant (a later duplicate key wins, as in JSON.parse).
    /// </summary>
    public static class Json
    {
        /// <summary>Nesting deeper than this is refused instead of overflowing the stack.</summary>
        public const int MaxDepth = 256;

        /// <summary>Parses one JSON text; throws <see cref="FormatException"/> naming the position of the first error.</summary>
        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            var reader = new Reader(text);
            reader.SkipSpace();
            var value = reader.ReadValue(0);
            reader.SkipSpace();
            if (!reader.AtEnd) throw reader.Error("unexpected text after the value");
            return value;
        }

        /// <summary>JSON text for a value: the types above, any other number type, and IDictionary/IEnumerable of them.</summary>
        public static string Write(object value)
        {
            var builder = new StringBuilder();
            WriteValue(builder, value, 0);
            return builder.ToString();
        }

        /// <summary>A deep copy, so that what a caller receives is its own (the client's payload is never changed).</summary>
        public static object Copy(object value)
        {
            var map = value as Dictionary<string, object>;
            if (map != null)
            {
                var copy = new Dictionary<string, object>(map.Count);
                foreach (var entry in map) copy[entry.Key] = Copy(entry.Value);
                return copy;
            }
            var list = value as List<object>;
            if (list != null)
            {
                var copy = new List<object>(list.Count);
                foreach (var item in list) copy.Add(Copy(item));
                return copy;
            }
            return value;
        }

        /// <summary>Whether two JSON values are equal: numbers by value, objects whatever their key order.</summary>
        public static bool SameJson(object a, object b)
        {
            if (a == null || b == null) return a == null && b == null;
            double x, y;
            if (TryNumber(a, out x)) return TryNumber(b, out y) && x == y;
            var s = a as string;
            if (s != null) return b is string && string.Equals(s, (string)b, StringComparison.Ordinal);
            if (a is bool) return b is bool && (bool)a == (bool)b;
            var mapA = a as IDictionary<string, object>;
            if (mapA != null)
            {
                var mapB = b as IDictionary<string, object>;
                if (mapB == null || mapA.Count != mapB.Count) return false;
                foreach (var entry in mapA)
                {
                    object other;
                    if (!mapB.TryGetValue(entry.Key, out other) || !SameJson(entry.Value, other)) return false;
                }
                return true;
            }
            var listA = a as IList<object>;
            if (listA != null)
            {
                var listB = b as IList<object>;
                if (listB == null || listA.Count != listB.Count) return false;
                for (var i = 0; i < listA.Count; i++) if (!SameJson(listA[i], listB[i])) return false;
                return true;
            }
            return a.Equals(b);
        }

        /// <summary>Any .NET number as a double (a float through its shortest text, so 0.1f is 0.1); false for anything else.</summary>
        public static bool TryNumber(object value, out double number)
        {
            number = 0;
            if (value == null) return false;
            if (value is double) { number = (double)value; return true; }
            if (value is float) { number = FromFloat((float)value); return true; }
            if (value is int) { number = (int)value; return true; }
            if (value is long) { number = (long)value; return true; }
            if (value is decimal) { number = (double)(decimal)value; return true; }
            if (value is short) { number = (short)value; return true; }
            if (value is byte) { number = (byte)value; return true; }
            if (value is uint) { number = (uint)value; return true; }
            if (value is ulong) { number = (ulong)value; return true; }
            if (value is ushort) { number = (ushort)value; return true; }
            if (value is sbyte) { number = (sbyte)value; return true; }
            return false;
        }

        /// <summary>A float as the double its shortest text names (0.1f is 0.1, not 0.100000001490116): what a player's value means.</summary>
        static double FromFloat(float value)
        {
            if (float.IsNaN(value) || float.IsInfinity(value) || value == 0) return value;
            for (var precision = 1; precision <= 9; precision++)
            {
                double candidate;
                var text = value.ToString("E" + (precision - 1), CultureInfo.InvariantCulture);
                if (DecimalParse.TryParse(text.Replace("E+", "e").Replace("E", "e"), out candidate) && (float)candidate == value) return candidate;
            }
            return value;
        }

        /// <summary>
        /// A number as JavaScript's Number.prototype.toString (and so JSON.stringify) writes it: the shortest digits that
        /// read back as the same double, plain from 1e-6 up to 1e21, exponent form (<c>1e+21</c>, <c>1.5e-7</c>) outside.
        /// </summary>
        public static string FormatNumber(double value)
        {
            if (double.IsNaN(value) || double.IsInfinity(value)) throw new ArgumentException("JSON has no NaN or Infinity");
            if (value == 0) return "0";
            if (value < 0) return "-" + FormatNumber(-value);
            int n; // value = 0.digits × 10^n
            string digits;
            if (value < 9007199254740992 && Math.Floor(value) == value)
            {
                digits = ((long)value).ToString(CultureInfo.InvariantCulture);
                n = digits.Length;
                digits = digits.TrimEnd('0');
            }
            else digits = ShortestDigits.Of(value, out n);
            var k = digits.Length;
            if (k <= n && n <= 21) return digits + new string('0', n - k);
            if (0 < n && n <= 21) return digits.Substring(0, n) + "." + digits.Substring(n);
            if (-6 < n && n <= 0) return "0." + new string('0', -n) + digits;
            var sign = n - 1 < 0 ? "-" : "+";
            var mantissa = k == 1 ? digits : digits.Substring(0, 1) + "." + digits.Substring(1);
            return mantissa + "e" + sign + Math.Abs(n - 1).ToString(CultureInfo.InvariantCulture);
        }

        static void WriteValue(StringBuilder builder, object value, int depth)
        {
            if (depth > MaxDepth) throw new ArgumentException("the value nests deeper than " + MaxDepth + " levels");
            double number;
            if (value == null) { builder.Append("null"); return; }
            var text = value as string;
            if (text != null) { WriteString(builder, text); return; }
            if (value is bool) { builder.Append((bool)value ? "true" : "false"); return; }
            if (TryNumber(value, out number))
            {
                builder.Append(double.IsNaN(number) || double.IsInfinity(number) ? "null" : FormatNumber(number));
                return;
            }
            var map = value as System.Collections.IDictionary;
            if (map != null)
            {
                builder.Append('{');
                var first = true;
                foreach (System.Collections.DictionaryEntry entry in map)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, Convert.ToString(entry.Key, CultureInfo.InvariantCulture));
                    builder.Append(':');
                    WriteValue(builder, entry.Value, depth + 1);
                }
                builder.Append('}');
                return;
            }
            var genericMap = value as IEnumerable<KeyValuePair<string, object>>;
            if (genericMap != null)
            {
                builder.Append('{');
                var first = true;
                foreach (var entry in genericMap)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, entry.Key);
                    builder.Append(':');
                    WriteValue(builder, entry.Value, depth + 1);
                }
                builder.Append('}');
                return;
            }
            var list = value as System.Collections.IEnumerable;
            if (list != null)
            {
                builder.Append('[');
                var first = true;
                foreach (var item in list)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteValue(builder, item, depth + 1);
                }
                builder.Append(']');
                return;
            }
            throw new ArgumentException("a " + value.GetType().Name + " is not a JSON value");
        }

        static void WriteString(StringBuilder builder, string text)
        {
            builder.Append('"');
            foreach (var c in text)
            {
                switch (c)
                {
                    case '"': builder.Append("\\\""); break;
                    case '\\': builder.Append("\\\\"); break;
                    case '\n': builder.Append("\\n"); break;
                    case '\r': builder.Append("\\r"); break;
                    case '\t': builder.Append("\\t"); break;
                    case '\b': builder.Append("\\b"); break;
                    case '\f': builder.Append("\\f"); break;
                    default:
                        if (c < 0x20) builder.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else builder.Append(c);
                        break;
                }
            }
            builder.Append('"');
        }

        sealed class Reader
        {
            readonly string text;
            int position;

            public Reader(string text)
            {
                this.text = text;
            }

            public bool AtEnd { get { return position >= text.Length; } }

            public FormatException Error(string what)
            {
                return new FormatException("JSON: " + what + " at position " + position);
            }

            public void SkipSpace()
            {
                while (position < text.Length)
                {
                    var c = text[position];
                    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
                    position++;
                }
            }

            public object ReadValue(int depth)
            {
                if (depth > MaxDepth) throw Error("nesting deeper than " + MaxDepth + " levels");
                if (AtEnd) throw Error("unexpected end");
                var c = text[position];
                switch (c)
                {
                    case '{': return ReadObject(depth);
                    case '[': return ReadArray(depth);
                    case '"': return ReadString();
                    case 't': Expect("true"); return true;
                    case 'f': Expect("false"); return false;
                    case 'n': Expect("null"); return null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return ReadNumber();
                        throw Error("unexpected character '" + c + "'");
                }
            }

            void Expect(string word)
            {
                if (string.CompareOrdinal(text, position, word, 0, word.Length) != 0) throw Error("expected " + word);
                position += word.Length;
            }

            Dictionary<string, object> ReadObject(int depth)
            {
                var map = new Dictionary<string, object>(StringComparer.Ordinal);
                position++;
                SkipSpace();
                if (!AtEnd && text[position] == '}') { position++; return map; }
                for (;;)
                {
                    SkipSpace();
                    if (AtEnd || text[position] != '"') throw Error("expected a key");
                    var key = ReadString();
                    SkipSpace();
                    if (AtEnd || text[position] != ':') throw Error("expected ':'");
                    position++;
                    SkipSpace();
                    map[key] = ReadValue(depth + 1);
                    SkipSpace();
                    if (AtEnd) throw Error("unexpected end");
                    if (text[position] == ',') { position++; continue; }
                    if (text[position] == '}') { position++; return map; }
                    throw Error("expected ',' or '}'");
                }
            }

            List<object> ReadArray(int depth)
            {
                var list = new List<object>();
                position++;
                SkipSpace();
                if (!AtEnd && text[position] == ']') { position++; return list; }
                for (;;)
                {
                    SkipSpace();
                    list.Add(ReadValue(depth + 1));
                    SkipSpace();
                    if (AtEnd) throw Error("unexpected end");
                    if (text[position] == ',') { position++; continue; }
                    if (text[position] == ']') { position++; return list; }
                    throw Error("expected ',' or ']'");
                }
            }

            string ReadString()
            {
                position++;
                StringBuilder builder = null;
                var start = position;
                for (;;)
                {
                    if (AtEnd) throw Error("unterminated string");
                    var c = text[position];
                    if (c == '"')
                    {
                        var tail = text.Substring(start, position - start);
                        position++;
                        return builder == null ? tail : builder.Append(tail).ToString();
                    }
                    if (c < 0x20) throw Error("control character in a string");
                    if (c != '\\') { position++; continue; }
                    if (builder == null) builder = new StringBuilder();
                    builder.Append(text, start, position - start);
                    position++;
                    if (AtEnd) throw Error("unterminated escape");
                    var escape = text[position++];
                    switch (escape)
                    {
                        case '"': builder.Append('"'); break;
                        case '\\': builder.Append('\\'); break;
                        case '/': builder.Append('/'); break;
                        case 'b': builder.Append('\b'); break;
                        case 'f': builder.Append('\f'); break;
                        case 'n': builder.Append('\n'); break;
                        case 'r': builder.Append('\r'); break;
                        case 't': builder.Append('\t'); break;
                        case 'u':
                            if (position + 4 > text.Length) throw Error("short \\u escape");
                            int code;
                            if (!int.TryParse(text.Substring(position, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out code))
                                throw Error("bad \\u escape");
                            builder.Append((char)code);
                            position += 4;
                            break;
                        default:
                            throw Error("bad escape \\" + escape);
                    }
                    start = position;
                }
            }

            double ReadNumber()
            {
                var start = position;
                if (text[position] == '-') position++;
                if (AtEnd) throw Error("bad number");
                if (text[position] == '0') position++;
                else if (text[position] >= '1' && text[position] <= '9') SkipDigits();
                else throw Error("bad number");
                if (!AtEnd && text[position] == '.')
                {
                    position++;
                    if (AtEnd || !IsDigit(text[position])) throw Error("bad number");
                    SkipDigits();
                }
                if (!AtEnd && (text[position] == 'e' || text[position] == 'E'))
                {
                    position++;
                    if (!AtEnd && (text[position] == '+' || text[position] == '-')) position++;
                    if (AtEnd || !IsDigit(text[position])) throw Error("bad number");
                    SkipDigits();
                }
                double value;
                if (!DecimalParse.TryParse(text.Substring(start, position - start), out value)) throw Error("number out of range");
                return value;
            }

            void SkipDigits()
            {
                while (!AtEnd && IsDigit(text[position])) position++;
            }

            static bool IsDigit(char c)
            {
                return c >= '0' && c <= '9';
            }
        }
    }
}
