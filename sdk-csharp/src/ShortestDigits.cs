using System;
using System.Collections.Generic;

namespace Flagstore
{
    /// <summary>
    /// The shortest decimal digits that read back as a given double, the closest to it when several are as short (and
    /// the even one on a tie): what JavaScript's Number::toString gives (ECMA-262 6.1.6.1.20), so a number's string
    /// form (bucket input, JSON text) is the service's. Burger and Dybvig's free-format algorithm on exact integers:
    /// Mono's own "R" and "E16" formatting is not correctly rounded for every double, and no BigInteger is allowed
    /// here (System.Numerics is not among the SDK's references).
    /// </summary>
    static class ShortestDigits
    {
        /// <summary>For a finite v &gt; 0: digits d1…dn and n such that v is 0.d1…dn × 10^exponent.</summary>
        public static string Of(double v, out int exponent)
        {
            var bits = BitConverter.DoubleToInt64Bits(v);
            var biased = (int)((bits >> 52) & 0x7FF);
            var fraction = bits & 0xFFFFFFFFFFFFFL;
            ulong f;
            int e;
            if (biased == 0)
            {
                f = (ulong)fraction;
                e = -1074;
            }
            else
            {
                f = (ulong)fraction | (1UL << 52);
                e = biased - 1075;
            }
            // A midpoint reads back as v when v's mantissa is even (round half to even).
            var inclusive = (f & 1) == 0;
            var lowerCloser = fraction == 0 && biased > 1; // the gap below v is half the gap above it
            Natural r, s, plus, minus;
            if (e >= 0)
            {
                if (!lowerCloser)
                {
                    r = Natural.Of(f).ShiftLeft(e + 1);
                    s = Natural.Of(2);
                    plus = Natural.Of(1).ShiftLeft(e);
                    minus = plus;
                }
                else
                {
                    r = Natural.Of(f).ShiftLeft(e + 2);
                    s = Natural.Of(4);
                    plus = Natural.Of(1).ShiftLeft(e + 1);
                    minus = Natural.Of(1).ShiftLeft(e);
                }
            }
            else
            {
                if (!lowerCloser)
                {
                    r = Natural.Of(f).ShiftLeft(1);
                    s = Natural.Of(1).ShiftLeft(1 - e);
                    plus = Natural.Of(1);
                    minus = plus;
                }
                else
                {
                    r = Natural.Of(f).ShiftLeft(2);
                    s = Natural.Of(1).ShiftLeft(2 - e);
                    plus = Natural.Of(2);
                    minus = Natural.Of(1);
                }
            }
            var k = (int)Math.Ceiling(Math.Log10(v) - 1e-10);
            if (k >= 0) s = s.MultiplyPow10(k);
            else
            {
                r = r.MultiplyPow10(-k);
                plus = plus.MultiplyPow10(-k);
                minus = minus.MultiplyPow10(-k);
            }
            // Fix the estimate: the smallest k with (r + plus) / s below 1 (or at most 1 when inclusive).
            for (;;)
            {
                var high = Natural.Compare(r.Add(plus), s);
                if (inclusive ? high >= 0 : high > 0)
                {
                    s = s.Multiply(10);
                    k++;
                    continue;
                }
                var lower = Natural.Compare(r.Add(plus).Multiply(10), s);
                if (inclusive ? lower < 0 : lower <= 0)
                {
                    r = r.Multiply(10);
                    plus = plus.Multiply(10);
                    minus = minus.Multiply(10);
                    k--;
                    continue;
                }
                break;
            }
            exponent = k;
            var digits = new List<char>(17);
            for (;;)
            {
                r = r.Multiply(10);
                plus = plus.Multiply(10);
                minus = minus.Multiply(10);
                var d = 0;
                while (Natural.Compare(r, s) >= 0)
                {
                    r = r.Subtract(s);
                    d++;
                }
                var low = Natural.Compare(r, minus);
                var top = Natural.Compare(r.Add(plus), s);
                var tc1 = inclusive ? low <= 0 : low < 0;
                var tc2 = inclusive ? top >= 0 : top > 0;
                if (!tc1 && !tc2)
                {
                    digits.Add((char)('0' + d));
                    continue;
                }
                if (tc1 && tc2)
                {
                    var half = Natural.Compare(r.Multiply(2), s);
                    if (half > 0 || (half == 0 && d % 2 == 1)) d++;
                }
                else if (tc2) d++;
                digits.Add((char)('0' + d));
                break;
            }
            return new string(digits.ToArray());
        }
    }

    /// <summary>A natural number, little-endian 32-bit limbs, immutable.</summary>
    sealed class Natural
    {
        readonly uint[] limbs;

        Natural(uint[] limbs)
        {
            var length = limbs.Length;
            while (length > 0 && limbs[length - 1] == 0) length--;
            if (length != limbs.Length) Array.Resize(ref limbs, length);
            this.limbs = limbs;
        }

        public static Natural Parse(string digits)
    {
        var result = Of(0);
        var at = 0;
        while (at < digits.Length)
        {
            var take = Math.Min(9, digits.Length - at);
            var chunk = uint.Parse(digits.Substring(at, take), System.Globalization.CultureInfo.InvariantCulture);
            result = result.MultiplyPow10(take).Add(Of(chunk));
            at += take;
        }
        return result;
    }

    public static Natural Of(ulong value)
        {
            return new Natural(new[] { (uint)value, (uint)(value >> 32) });
        }

        public Natural ShiftLeft(int bits)
        {
            var words = bits / 32;
            var shift = bits % 32;
            var result = new uint[limbs.Length + words + 1];
            for (var i = 0; i < limbs.Length; i++)
            {
                var value = (ulong)limbs[i] << shift;
                result[i + words] |= (uint)value;
                result[i + words + 1] |= (uint)(value >> 32);
            }
            return new Natural(result);
        }

        public Natural Multiply(uint factor)
        {
            var result = new uint[limbs.Length + 1];
            ulong carry = 0;
            for (var i = 0; i < limbs.Length; i++)
            {
                var value = (ulong)limbs[i] * factor + carry;
                result[i] = (uint)value;
                carry = value >> 32;
            }
            result[limbs.Length] = (uint)carry;
            return new Natural(result);
        }

        public Natural MultiplyPow10(int power)
        {
            var result = this;
            for (; power >= 9; power -= 9) result = result.Multiply(1000000000);
            for (; power > 0; power--) result = result.Multiply(10);
            return result;
        }

        public Natural Add(Natural other)
        {
            var length = Math.Max(limbs.Length, other.limbs.Length);
            var result = new uint[length + 1];
            ulong carry = 0;
            for (var i = 0; i < length; i++)
            {
                var value = carry + (i < limbs.Length ? limbs[i] : 0UL) + (i < other.limbs.Length ? other.limbs[i] : 0UL);
                result[i] = (uint)value;
                carry = value >> 32;
            }
            result[length] = (uint)carry;
            return new Natural(result);
        }

        /// <summary>this − other, for this ≥ other.</summary>
        public Natural Subtract(Natural other)
        {
            var result = new uint[limbs.Length];
            long borrow = 0;
            for (var i = 0; i < limbs.Length; i++)
            {
                var value = (long)limbs[i] - (i < other.limbs.Length ? other.limbs[i] : 0L) - borrow;
                borrow = value < 0 ? 1 : 0;
                result[i] = (uint)(value + (borrow << 32));
            }
            return new Natural(result);
        }

        public static int Compare(Natural a, Natural b)
        {
            if (a.limbs.Length != b.limbs.Length) return a.limbs.Length < b.limbs.Length ? -1 : 1;
            for (var i = a.limbs.Length - 1; i >= 0; i--)
                if (a.limbs[i] != b.limbs[i]) return a.limbs[i] < b.limbs[i] ? -1 : 1;
            return 0;
        }
    }

    /// <summary>
    /// Decimal text to the nearest double (ties to even), as JavaScript reads it. Mono's double.Parse is off by one ulp
    /// for some 16- and 17-digit numbers, so its answer is only the starting point: it is corrected by comparing the
    /// exact decimal value with the midpoints to its neighbours.
    /// </summary>
    static class DecimalParse
    {
        const int MaxDigits = 800;
        static readonly double[] Powers = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

        /// <summary>text is a JSON number (already checked); false when it is beyond the largest double.</summary>
        public static bool TryParse(string text, out double result)
        {
            var negative = text[0] == '-';
            var digits = new System.Text.StringBuilder();
            var exponent = 0;
            var i = negative ? 1 : 0;
            var sticky = false;
            var seenPoint = false;
            for (; i < text.Length && text[i] != 'e' && text[i] != 'E'; i++)
            {
                var c = text[i];
                if (c == '.') { seenPoint = true; continue; }
                if (digits.Length == 0 && c == '0') { if (seenPoint) exponent--; continue; }
                if (digits.Length < MaxDigits)
                {
                    digits.Append(c);
                    if (seenPoint) exponent--;
                }
                else
                {
                    if (c != '0') sticky = true;
                    if (!seenPoint) exponent++;
                }
            }
            if (i < text.Length)
            {
                long written;
                if (!long.TryParse(text.Substring(i + 1), System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out written))
                    written = text[i + 1] == '-' ? -100000 : 100000;
                exponent = (int)Math.Max(-100000, Math.Min(100000, exponent + written));
            }
            if (sticky)
            {
                digits.Append('1');
                exponent--;
            }
            var mantissa = digits.ToString().TrimEnd('0');
            exponent += digits.Length - mantissa.Length; // the trailing zeros trimmed
            if (mantissa.Length == 0)
            {
                result = negative ? -0.0 : 0.0;
                return true;
            }
            // value = mantissa × 10^exponent
            if (mantissa.Length + exponent > 310)
            {
                result = 0;
                return false;
            }
            if (mantissa.Length + exponent < -330)
            {
                result = negative ? -0.0 : 0.0;
                return true;
            }
            double value;
            if (mantissa.Length <= 15 && Math.Abs(exponent) <= 22)
            {
                // Both exact as doubles: one correctly rounded operation.
                var whole = (double)long.Parse(mantissa, System.Globalization.CultureInfo.InvariantCulture);
                value = exponent >= 0 ? whole * Powers[exponent] : whole / Powers[-exponent];
            }
            else
            {
                if (!double.TryParse(mantissa + "e" + exponent, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture, out value)
                    || double.IsInfinity(value))
                    value = double.MaxValue;
                var exact = Natural.Parse(mantissa);
                for (var step = 0; step < 64; step++)
                {
                    var bits = BitConverter.DoubleToInt64Bits(value);
                    ulong m;
                    int e;
                    Decompose(bits, out m, out e);
                    var up = Compare(exact, exponent, Natural.Of(2 * m + 1), e - 1);
                    if (up > 0 || (up == 0 && (m & 1) == 1))
                    {
                        if (bits == 0x7FEFFFFFFFFFFFFFL) { result = 0; return false; }
                        value = BitConverter.Int64BitsToDouble(bits + 1);
                        continue;
                    }
                    if (bits > 0)
                    {
                        var boundary = m == 1UL << 52 && e > -1074;
                        var down = boundary
                            ? Compare(exact, exponent, Natural.Of(4 * m - 1), e - 2)
                            : Compare(exact, exponent, Natural.Of(2 * m - 1), e - 1);
                        if (down < 0 || (down == 0 && (m & 1) == 1))
                        {
                            value = BitConverter.Int64BitsToDouble(bits - 1);
                            continue;
                        }
                    }
                    break;
                }
            }
            result = negative ? -value : value;
            return true;
        }

        static void Decompose(long bits, out ulong m, out int e)
        {
            var biased = (int)((bits >> 52) & 0x7FF);
            var fraction = (ulong)(bits & 0xFFFFFFFFFFFFFL);
            if (biased == 0)
            {
                m = fraction;
                e = -1074;
            }
            else
            {
                m = fraction | (1UL << 52);
                e = biased - 1075;
            }
        }

        /// <summary>The sign of d × 10^decimalExponent − b × 2^binaryExponent, exactly.</summary>
        static int Compare(Natural d, int decimalExponent, Natural b, int binaryExponent)
        {
            var left = d.MultiplyPow10(Math.Max(decimalExponent, 0)).ShiftLeft(Math.Max(-binaryExponent, 0));
            var right = b.ShiftLeft(Math.Max(binaryExponent, 0)).MultiplyPow10(Math.Max(-decimalExponent, 0));
            return Natural.Compare(left, right);
        }
    }
}
