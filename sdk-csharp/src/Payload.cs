using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;

namespace Flagstore
{
    /// <summary>One flag of the config payload. Its values are the client's own: getters hand out copies.</summary>
    public sealed class Flag
    {
        public string Key { get; private set; }
        /// <summary>boolean, string, number or json; a type this SDK does not know is kept (All has it) but no getter matches it.</summary>
        public string Type { get; private set; }
        public object Value { get; private set; }
        /// <summary>shared: a server may relay it to players. server: it must stay on the server. Anything else counts as server.</summary>
        public string Runtime { get; private set; }
        /// <summary>Targeting rules, or null when the flag has none (never relay them to players).</summary>
        public IList<FlagRule> Rules { get; private set; }

        public Flag(string key, string type, object value, string runtime, IList<FlagRule> rules)
        {
            Key = key;
            Type = type;
            Value = value;
            Runtime = runtime;
            Rules = rules;
        }
    }

    /// <summary>The body of GET /flags/config, which is also what the cache file holds.</summary>
    public sealed class ConfigPayload
    {
        /// <summary>The bare hash; the ETag header is W/"etag".</summary>
        public string Etag { get; private set; }
        public string GeneratedAt { get; private set; }
        public double PollIntervalSeconds { get; private set; }
        public IList<Flag> Flags { get; private set; }

        public ConfigPayload(string etag, string generatedAt, double pollIntervalSeconds, IList<Flag> flags)
        {
            Etag = etag;
            GeneratedAt = generatedAt;
            PollIntervalSeconds = pollIntervalSeconds;
            Flags = new ReadOnlyCollection<Flag>(flags);
        }

        /// <summary>Checks a config body (from the service or the cache file); a payload with any malformed flag is refused whole.</summary>
        public static ConfigPayload Parse(string json)
        {
            return FromJson(Json.Parse(json));
        }

        /// <summary>Parse's check on an already parsed JSON value; throws FormatException saying what is wrong.</summary>
        public static ConfigPayload FromJson(object body)
        {
            var map = body as Dictionary<string, object>;
            if (map == null) throw new FormatException("the config payload is not an object");
            var etag = Get(map, "etag") as string;
            if (string.IsNullOrEmpty(etag)) throw new FormatException("the config payload has no etag");
            var flags = Get(map, "flags") as List<object>;
            if (flags == null) throw new FormatException("the config payload has no flags array");
            var parsed = new List<Flag>(flags.Count);
            var keys = new HashSet<string>(StringComparer.Ordinal);
            for (var index = 0; index < flags.Count; index++)
            {
                var flag = ParseFlag(flags[index], index);
                parsed.Add(flag);
                keys.Add(flag.Key);
            }
            if (keys.Count != parsed.Count) throw new FormatException("the config payload holds a key twice");
            var generatedAt = Get(map, "generatedAt") as string;
            var interval = Get(map, "pollIntervalSeconds");
            var seconds = interval is double && !double.IsNaN((double)interval) && !double.IsInfinity((double)interval) && (double)interval >= 1
                ? (double)interval
                : Timing.DefaultPollIntervalSeconds;
            return new ConfigPayload(etag, generatedAt ?? "", seconds, parsed);
        }

        static Flag ParseFlag(object item, int index)
        {
            var flag = item as Dictionary<string, object>;
            if (flag == null) throw new FormatException("flag #" + index + " is not an object");
            var key = Get(flag, "key") as string;
            if (string.IsNullOrEmpty(key)) throw new FormatException("flag #" + index + " has no key");
            var type = Get(flag, "type") as string;
            if (type == null) throw new FormatException("flag " + key + " has no type");
            var runtime = Get(flag, "runtime") as string;
            if (runtime == null) throw new FormatException("flag " + key + " has no runtime");
            if (!MatchesType(type, flag, "value")) throw new FormatException("flag " + key + "'s value is not a " + type);
            var value = flag["value"];
            if (!flag.ContainsKey("rules")) return new Flag(key, type, value, runtime, null);
            var rules = flag["rules"] as List<object>;
            if (rules == null) throw new FormatException("flag " + key + "'s rules are not a list");
            var parsed = new List<FlagRule>(rules.Count);
            for (var at = 0; at < rules.Count; at++) parsed.Add(ParseRule(key, type, rules[at], at));
            return new Flag(key, type, value, runtime, new ReadOnlyCollection<FlagRule>(parsed));
        }

        /// <summary>A rule as the evaluator needs it; an operator this SDK does not know is kept (it never holds).</summary>
        static FlagRule ParseRule(string key, string type, object item, int index)
        {
            var where = "flag " + key + "'s rule #" + index;
            var rule = item as Dictionary<string, object>;
            if (rule == null) throw new FormatException(where + " is not an object");
            var id = Get(rule, "id") as string;
            if (id == null) throw new FormatException(where + " has no id");
            var conditions = Get(rule, "conditions") as List<object>;
            if (conditions == null) throw new FormatException(where + " has no conditions");
            if (!MatchesType(type, rule, "value")) throw new FormatException(where + "'s value is not a " + type);
            var parsed = new List<RuleCondition>(conditions.Count);
            foreach (var entry in conditions)
            {
                var condition = entry as Dictionary<string, object>;
                if (condition == null) throw new FormatException(where + " has a condition that is not an object");
                var attribute = Get(condition, "attribute") as string;
                var op = Get(condition, "operator") as string;
                var values = Get(condition, "values") as List<object>;
                if (attribute == null || op == null || values == null)
                    throw new FormatException(where + " has a condition without attribute, operator or values");
                parsed.Add(new RuleCondition(attribute, op, new ReadOnlyCollection<object>(values)));
            }
            return new FlagRule(id, new ReadOnlyCollection<RuleCondition>(parsed), rule["value"]);
        }

        /// <summary>Whether map[field] may be served as a flag of type; a type this SDK does not know accepts any JSON value.</summary>
        static bool MatchesType(string type, Dictionary<string, object> map, string field)
        {
            object value;
            if (!map.TryGetValue(field, out value)) return false;
            return MatchesType(type, value);
        }

        public static bool MatchesType(string type, object value)
        {
            switch (type)
            {
                case "boolean": return value is bool;
                case "string": return value is string;
                case "number": return value is double && !double.IsNaN((double)value) && !double.IsInfinity((double)value);
                default: return true;
            }
        }

        static object Get(Dictionary<string, object> map, string key)
        {
            object value;
            return map.TryGetValue(key, out value) ? value : null;
        }

        /// <summary>The payload as JSON (what the cache file holds): the service's own shape, so either SDK reads the other's file.</summary>
        public string ToJson()
        {
            var flags = new List<object>(Flags.Count);
            foreach (var flag in Flags)
            {
                var entry = new Dictionary<string, object>();
                entry["key"] = flag.Key;
                entry["type"] = flag.Type;
                entry["value"] = flag.Value;
                entry["runtime"] = flag.Runtime;
                if (flag.Rules != null) entry["rules"] = RulesJson(flag.Rules);
                flags.Add(entry);
            }
            var map = new Dictionary<string, object>();
            map["etag"] = Etag;
            map["generatedAt"] = GeneratedAt;
            map["pollIntervalSeconds"] = PollIntervalSeconds;
            map["flags"] = flags;
            return Json.Write(map);
        }

        internal static List<object> RulesJson(IList<FlagRule> rules)
        {
            var list = new List<object>();
            if (rules == null) return list;
            foreach (var rule in rules)
            {
                var conditions = new List<object>();
                foreach (var condition in rule.Conditions)
                {
                    var c = new Dictionary<string, object>();
                    c["attribute"] = condition.Attribute;
                    c["operator"] = condition.Operator;
                    c["values"] = new List<object>(condition.Values);
                    conditions.Add(c);
                }
                var r = new Dictionary<string, object>();
                r["id"] = rule.Id;
                r["conditions"] = conditions;
                r["value"] = rule.Value;
                list.Add(r);
            }
            return list;
        }

        /// <summary>The keys whose type, value, runtime or rules differ between two payloads, or that only one has, in key order.</summary>
        public static List<string> ChangedKeys(IDictionary<string, Flag> before, IDictionary<string, Flag> after)
        {
            var changed = new List<string>();
            foreach (var entry in after)
            {
                Flag previous;
                var flag = entry.Value;
                if (!before.TryGetValue(entry.Key, out previous)
                    || previous.Type != flag.Type
                    || previous.Runtime != flag.Runtime
                    || !Json.SameJson(previous.Value, flag.Value)
                    || !Json.SameJson(RulesJson(previous.Rules), RulesJson(flag.Rules)))
                    changed.Add(entry.Key);
            }
            foreach (var key in before.Keys) if (!after.ContainsKey(key)) changed.Add(key);
            changed.Sort(StringComparer.Ordinal);
            return changed;
        }
    }
}
