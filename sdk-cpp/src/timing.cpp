#include "flagstore/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace flagstore {

double pollDelay(double intervalSeconds, double random) { return intervalSeconds * 1000 * (0.9 + 0.2 * random); }

double backoffDelay(int failures, double random) {
  const double base = std::min(double(BACKOFF_MAX_MS), double(BACKOFF_MIN_MS) * std::pow(2.0, std::max(0, failures - 1)));
  return std::min(double(BACKOFF_MAX_MS), std::max(double(BACKOFF_MIN_MS), base * (0.8 + 0.4 * random)));
}

double retryAfterDelay(double retryAfterMs, double random) { return std::max(double(BACKOFF_MIN_MS), retryAfterMs) * (1 + 0.1 * random); }

double reconnectDelay(double retryMs, double random) { return retryMs * (1 + random); }

namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + std::int64_t(doe) - 719468;
}

int monthOf(const std::string& name) {
  static const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  std::string lower;
  for (char c : name) lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  for (int i = 0; i < 12; i++)
    if (lower == months[i]) return i + 1;
  return 0;
}

bool readTime(const std::string& text, int& h, int& mi, int& s) {
  return std::sscanf(text.c_str(), "%2d:%2d:%2d", &h, &mi, &s) == 3 && h < 24 && mi < 60 && s < 61;
}

}  // namespace

std::optional<std::int64_t> parseHttpDate(const std::string& input) {
  std::istringstream words(trim(input));
  std::vector<std::string> parts;
  for (std::string word; words >> word;) parts.push_back(word);
  int day = 0, month = 0, h = 0, mi = 0, s = 0;
  long year = 0;
  if (parts.size() == 6 && parts[5] == "GMT") {  // Sun, 06 Nov 1994 08:49:37 GMT
    day = std::atoi(parts[1].c_str());
    month = monthOf(parts[2]);
    year = std::atol(parts[3].c_str());
    if (!readTime(parts[4], h, mi, s)) return std::nullopt;
  } else if (parts.size() == 4 && parts[3] == "GMT") {  // Sunday, 06-Nov-94 08:49:37 GMT
    const auto& date = parts[1];
    if (date.size() != 9 || date[2] != '-' || date[6] != '-') return std::nullopt;
    day = std::atoi(date.substr(0, 2).c_str());
    month = monthOf(date.substr(3, 3));
    year = std::atol(date.substr(7, 2).c_str());
    year += year < 70 ? 2000 : 1900;
    if (!readTime(parts[2], h, mi, s)) return std::nullopt;
  } else if (parts.size() == 5) {  // Sun Nov  6 08:49:37 1994
    month = monthOf(parts[1]);
    day = std::atoi(parts[2].c_str());
    if (!readTime(parts[3], h, mi, s)) return std::nullopt;
    year = std::atol(parts[4].c_str());
  } else {
    return std::nullopt;
  }
  if (month == 0 || day < 1 || day > 31 || year < 1970) return std::nullopt;
  const std::int64_t days = daysFromCivil(year, unsigned(month), unsigned(day));
  return ((days * 24 + h) * 60 + mi) * 60000 + std::int64_t(s) * 1000;
}

std::optional<double> parseRetryAfter(const std::optional<std::string>& header, std::int64_t nowMs) {
  if (!header) return std::nullopt;
  const std::string value = trim(*header);
  if (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::stod(value) * 1000;
  }
  const auto date = parseHttpDate(value);
  if (!date) return std::nullopt;
  return double(std::max<std::int64_t>(0, *date - nowMs));
}

}  // namespace flagstore
