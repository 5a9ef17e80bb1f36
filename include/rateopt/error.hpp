// File: rateopt/error.hpp
// The error model (STYLE R6). Bad input and contract violations throw one of the exception types
// below; algorithmic outcomes (infeasible, max iterations) are statuses in result structs instead.
//
// Every message starts with a stable id in brackets that tests and front ends can match on:
//   [rateopt.invalid_argument]  an argument has a wrong value, size or shape
//   [rateopt.parse_error]       a file or expression does not follow its grammar (file:line:col)
//   [rateopt.io_error]          a file cannot be opened or read
//   [rateopt.write_error]       an output cannot be written (disk full, permissions, closed pipe)
//   [rateopt.not_found]         an unknown column, group value, metric or dataset name
//
// Example:
//   try { auto ds = rateopt::read_dataset("x.csv", {}); }
//   catch (const rateopt::ParseError& e) { std::cerr << e.what() << " at line " << e.line(); }
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace rateopt {

// Base of every error rateopt throws that is not an argument error.
class Error : public std::runtime_error {
 public:
  Error(std::string id, const std::string& message);
  // Stable id, e.g. "rateopt.parse_error".
  [[nodiscard]] const std::string& id() const noexcept { return id_; }

 private:
  std::string id_;
};

// An argument has a wrong value, size or shape. Derives from std::invalid_argument so that
// pybind11 maps it to ValueError.
class InvalidArgument : public std::invalid_argument {
 public:
  explicit InvalidArgument(const std::string& message);
};

// A file (or an expression string) does not follow its grammar. `file` is empty for strings;
// `line` and `column` are 1-based, 0 when unknown.
class ParseError : public Error {
 public:
  ParseError(std::string file, std::size_t line, std::size_t column, const std::string& what);
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] std::size_t line() const noexcept { return line_; }
  [[nodiscard]] std::size_t column() const noexcept { return column_; }
  // The message without the id prefix and location.
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  std::string file_;
  std::size_t line_;
  std::size_t column_;
  std::string detail_;
};

// A file cannot be opened or read (missing, permission, corrupt gzip stream).
class IoError : public Error {
 public:
  explicit IoError(const std::string& message);

 protected:
  IoError(std::string id, const std::string& message);
};

// An output cannot be written: the disk is full, the folder is not writable, the pipe is closed.
// Outputs are written atomically (write_file_atomic, io.hpp), so the target keeps its old content.
class WriteError : public IoError {
 public:
  explicit WriteError(const std::string& message);
};

// A name does not resolve: unknown column, group value, metric, function or dataset.
class NotFound : public Error {
 public:
  explicit NotFound(const std::string& message);
};

}  // namespace rateopt
