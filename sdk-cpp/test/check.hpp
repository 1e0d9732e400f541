#pragma once
// A small test runner (no test framework among Debian's build dependencies): TEST(name) { CHECK(...); }, and each
// test program prints `N passed, M failed` and exits non-zero on a failure.
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace check {

struct Case {
  std::string name;
  std::function<void()> body;
};

inline std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

struct Failure : std::exception {
  std::string message;
  explicit Failure(std::string text) : message(std::move(text)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

struct Register {
  Register(const char* name, std::function<void()> body) { cases().push_back({name, std::move(body)}); }
};

template <typename T>
std::string show(const T& value) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>) {
    out << (value ? "true" : "false");
  } else {
    out << value;
  }
  return out.str();
}

/** Runs the tests whose name contains the first argument (all without one). */
inline int run(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0;
  for (const auto& test : cases()) {
    if (!filter.empty() && test.name.find(filter) == std::string::npos) continue;
    try {
      test.body();
      passed++;
      std::cout << "ok   " << test.name << "\n";
    } catch (const std::exception& error) {
      failed++;
      std::cout << "FAIL " << test.name << "\n     " << error.what() << "\n";
    }
  }
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace check

#define CHECK_CONCAT2(a, b) a##b
#define CHECK_CONCAT(a, b) CHECK_CONCAT2(a, b)
#define TEST(name)                                                                                  \
  static void CHECK_CONCAT(test_body_, __LINE__)();                                                 \
  static check::Register CHECK_CONCAT(test_register_, __LINE__)(name, CHECK_CONCAT(test_body_, __LINE__)); \
  static void CHECK_CONCAT(test_body_, __LINE__)()

#define CHECK(condition)                                                                                  \
  do {                                                                                                    \
    if (!(condition)) throw check::Failure(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " #condition); \
  } while (0)

#define CHECK_EQ(actual, expected)                                                                                   \
  do {                                                                                                               \
    const auto check_a = (actual);                                                                                  \
    const auto check_e = (expected);                                                                                \
    if (!(check_a == check_e))                                                                                       \
      throw check::Failure(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " #actual " is " + check::show(check_a) + \
                           ", expected " + check::show(check_e));                                                    \
  } while (0)

#define CHECK_THROWS(expression)                                                                             \
  do {                                                                                                       \
    bool check_threw = false;                                                                                \
    try {                                                                                                    \
      (void)(expression);                                                                                    \
    } catch (...) {                                                                                          \
      check_threw = true;                                                                                    \
    }                                                                                                        \
    if (!check_threw) throw check::Failure(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " #expression " did not throw"); \
  } while (0)

#define CHECK_MAIN \
  int main(int argc, char** argv) { return check::run(argc, argv); }
