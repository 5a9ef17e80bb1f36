// Small helpers shared by the C++ tests.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

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

}  // namespace rateopt::test
