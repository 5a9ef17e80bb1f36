// Small helpers shared by the C++ tests.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

#include "rateopt/error.hpp"

namespace rateopt::test {

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `f`, expects an exception of type E and returns its message (a test failure otherwise).
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

// Runs `fn` and expects InvalidArgument whose message contains `needle` (a test failure
// otherwise; an exception of another type propagates).
template <typename Fn>
void expect_invalid(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected InvalidArgument mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace rateopt::test
