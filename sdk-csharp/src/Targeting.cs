using System;
using System.Collections.Generic;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.RegularExpressions;

namespace Flagstore
{
    public sealed class RuleCondition
    {
        public string Attribute { get; private set; }
        /// <summary>in, notIn, gte, lt, semverGte, semverLt, percentage; an operator this SDK does not know never holds.</summary>
        public string Operator { get; private set; }
        /// <summary>JSON values (strings and numbers), as the service sent them.</summary>
        public IList<object> Values { get; private set; }

        public RuleCondition(string attribute, string op, IList<object> values)
        {
            Attribute = attribute;
            Operator = op;
            Values = values;
        }
    }

    public sealed class FlagRule
    {
        public string Id { get; private set; }
        public IList<RuleCondition> Conditions { get; private set; }
        public object Value { get; private set; }

        public FlagRule(string id, IList<RuleCondition> conditions, object value)
        {
            Id = id;
            Conditions = conditions;
            Value = value;
        }
    }

    public sealed class Evaluation
    {
        public object Value { get; private set; }
        /// <summary>STATIC, TARGETING_MATCH, SPLIT or DEFAULT.</summary>
        public string Reason { get; private set; }
        /// <summary>The matching rule's id, or "default".</summary>
        public string Variant { get; private set; }

        public Evaluation(object value, string reason, string variant)
        {
            Value = value;
            Reason = reason;
            Variant = variant;
        }
    }

    /// <summary>
    /// Targeting, evaluated on the game server: the same answers as the service's evaluator and the TypeScript SDK,
    /// held to them by the shared test vectors (test/fixtures/targeting-vectors.json). The first rule whose conditions
    /// all hold gives its value; none holding, the flag's own value.
    /// </summary>
    public static class Targeting
    {
        public static Evaluation Evaluate(string flagKey, object value, IList<FlagRule> rules, IDictionary<string, object> context)
        {
            if (rules == null || rules.Count == 0) return new Evaluation(value, "STATIC", "default");
            foreach (var rule in rules)
            {
                var holds = true;
                foreach (var condition in rule.Conditions)
                {
                    if (!ConditionHolds(flagKey, condition, context)) { holds = false; break; }
                }
                if (!holds) continue;
                var split = false;
                foreach (var condition in rule.Conditions) if (condition.Operator == "percentage") split = true;
                return new Evaluation(rule.Value, split ? "SPLIT" : "TARGETING_MATCH", rule.Id);
            }
            return new Evaluation(value, "DEFAULT", "default");
        }

        public static Evaluation Evaluate(Flag flag, IDictionary<string, object> context)
        {
            return Evaluate(flag.Key, flag.Value, flag.Rules, context);
        }

        static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

        /// <summary>One hasher per thread: a HashAlgorithm is not thread-safe, and making one per call costs more than hashing.</summary>
        [ThreadStatic]
        static SHA256 hasher;

        /// <summary>SHA-256 of the UTF-8 "flagKey:value", first 4 bytes as an unsigned big-endian integer, modulo 10,000, / 100.</summary>
        public static double BucketOf(string flagKey, string value)
        {
            var sha = hasher ?? (hasher = SHA256.Create());
            var digest = sha.ComputeHash(Utf8.GetBytes(flagKey + ":" + value));
            var number = ((uint)digest[0] << 24) | ((uint)digest[1] << 16) | ((uint)digest[2] << 8) | digest[3];
            return (number % 10000) / 100.0;
        }

        static bool ConditionHolds(string flagKey, RuleCondition condition, IDictionary<string, object> context)
        {
            object actual = null;
            if (context != null) context.TryGetValue(condition.Attribute, out actual);
            var values = condition.Values;
            var first = values.Count > 0 ? values[0] : null;
            var second = values.Count > 1 ? values[1] : null;
            double number, bound, upper;
            switch (condition.Operator)
            {
                case "in":
                {
                    var text = StringForm(actual);
                    return text != null && Includes(values, text);
                }
                case "notIn":
                {
                    var text = StringForm(actual);
                    return text == null || !Includes(values, text);
                }
                case "gte":
                    return Json.TryNumber(actual, out number) && IsJsonNumber(first, out bound) && number >= bound;
                case "lt":
                    return Json.TryNumber(actual, out number) && IsJsonNumber(first, out bound) && number < bound;
                case "semverGte":
                case "semverLt":
                {
                    var version = SemanticVersion.Parse(actual as string);
                    var limit = SemanticVersion.Parse(first as string);
                    if (version == null || limit == null) return false;
                    var order = SemanticVersion.Compare(version, limit);
                    return condition.Operator == "semverGte" ? order >= 0 : order < 0;
                }
                case "percentage":
                {
                    var text = StringForm(actual);
                    if (text == null || !IsJsonNumber(first, out bound) || !IsJsonNumber(second, out upper)) return false;
                    var bucket = BucketOf(flagKey, text);
                    return bound <= bucket && bucket < upper;
                }
                default:
                    return false;
            }
        }

        /// <summary>A rule's bound: a number of the payload (a double from the JSON reader, or any .NET number).</summary>
        static bool IsJsonNumber(object value, out double number)
        {
            return Json.TryNumber(value, out number);
        }

        static bool Includes(IList<object> values, string text)
        {
            foreach (var value in values)
            {
                var candidate = value as string;
                if (candidate != null && string.Equals(candidate, text, StringComparison.Ordinal)) return true;
            }
            return false;
        }

        /// <summary>A string as is, a number as JSON writes it, true or false; null for anything else (missing, null, a list).</summary>
        public static string StringForm(object value)
        {
            if (value == null) return null;
            var text = value as string;
            if (text != null) return text;
            if (value is bool) return (bool)value ? "true" : "false";
            double number;
            if (Json.TryNumber(value, out number))
                return double.IsNaN(number) || double.IsInfinity(number) ? null : Json.FormatNumber(number);
            return null;
        }
    }

    /// <summary>
    /// Semantic Versioning 2.0.0 precedence (semver.org, section 11), a missing minor or patch counted as 0: 1.4 is
    /// 1.4.0. Build metadata (+…) is ignored. Anything else, v1.4 or 1.04 included, is not a version.
    /// </summary>
    public sealed class SemanticVersion
    {
        static readonly Regex Pattern = new Regex(
            "^(0|[1-9][0-9]*)(?:\\.(0|[1-9][0-9]*))?(?:\\.(0|[1-9][0-9]*))?(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$",
            RegexOptions.CultureInvariant);
        const double MaxSafeInteger = 9007199254740991;

        readonly double[] core;
        readonly string[] prerelease;

        SemanticVersion(double[] core, string[] prerelease)
        {
            this.core = core;
            this.prerelease = prerelease;
        }

        /// <summary>The version text names, or null when it is not one.</summary>
        public static SemanticVersion Parse(string text)
        {
            if (text == null || text.Length > 256) return null;
            var match = Pattern.Match(text);
            // .NET's $ also matches before a final line feed; JavaScript's does not.
            if (!match.Success || text.EndsWith("\n", StringComparison.Ordinal)) return null;
            var prerelease = match.Groups[4].Success ? match.Groups[4].Value.Split('.') : new string[0];
            foreach (var id in prerelease) if (IsNumeric(id) && id.Length > 1 && id[0] == '0') return null;
            var core = new double[3];
            for (var i = 0; i < 3; i++)
            {
                var group = match.Groups[i + 1];
                core[i] = group.Success ? double.Parse(group.Value, CultureInfo.InvariantCulture) : 0;
                if (core[i] > MaxSafeInteger) return null;
            }
            return new SemanticVersion(core, prerelease);
        }

        /// <summary>Negative when a &lt; b, 0 when they have the same precedence, positive when a &gt; b.</summary>
        public static int Compare(SemanticVersion a, SemanticVersion b)
        {
            for (var i = 0; i < 3; i++) if (a.core[i] != b.core[i]) return a.core[i] < b.core[i] ? -1 : 1;
            // A pre-release has lower precedence than its release.
            if (a.prerelease.Length == 0 || b.prerelease.Length == 0) return b.prerelease.Length - a.prerelease.Length;
            for (var i = 0; i < Math.Min(a.prerelease.Length, b.prerelease.Length); i++)
            {
                var order = CompareIdentifiers(a.prerelease[i], b.prerelease[i]);
                if (order != 0) return order;
            }
            return a.prerelease.Length - b.prerelease.Length;
        }

        /// <summary>Numeric identifiers compare as numbers and below alphanumeric ones; alphanumeric ones in ASCII order.</summary>
        static int CompareIdentifiers(string a, string b)
        {
            var aNumeric = IsNumeric(a);
            var bNumeric = IsNumeric(b);
            if (aNumeric && bNumeric) return a.Length != b.Length ? a.Length - b.Length : Math.Sign(string.CompareOrdinal(a, b));
            if (aNumeric != bNumeric) return aNumeric ? -1 : 1;
            return Math.Sign(string.CompareOrdinal(a, b));
        }

        static bool IsNumeric(string id)
        {
            if (id.Length == 0) return false;
            foreach (var c in id) if (c < '0' || c > '9') return false;
            return true;
        }
    }

    /// <summary>What a server hands out: every flag's value for a context, or only the shared ones (the relay filter).</summary>
    public static class Relay
    {
        /// <summary>Every flag's value for the context, server ones included: for the server's own use, never for players.</summary>
        public static Dictionary<string, object> All(IEnumerable<Flag> flags, IDictionary<string, object> context)
        {
            return Values(flags, context, false);
        }

        /// <summary>
        /// Only the flags whose runtime is "shared" (any other runtime counts as server), resolved for the context (a
        /// player's targetingKey and attributes): what a server may relay to that player. Never the rules themselves.
        /// </summary>
        public static Dictionary<string, object> ClientSafe(IEnumerable<Flag> flags, IDictionary<string, object> context)
        {
            return Values(flags, context, true);
        }

        static Dictionary<string, object> Values(IEnumerable<Flag> flags, IDictionary<string, object> context, bool sharedOnly)
        {
            var result = new Dictionary<string, object>();
            foreach (var flag in flags)
            {
                if (sharedOnly && flag.Runtime != "shared") continue;
                result[flag.Key] = Json.Copy(Targeting.Evaluate(flag, context).Value);
            }
            return result;
        }
    }
}
