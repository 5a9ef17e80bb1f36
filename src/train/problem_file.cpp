// Problem files (rateopt/problem_file.hpp): TOML or JSON text to the problem's keys, every training
// option checked through the option table (train_options.hpp).
#include "rateopt/problem_file.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/io_util.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace rateopt {
namespace {

// The problem file's keys that are not training options.
constexpr std::array<std::string_view, 6> kProblemKeys{"minimize",    "maximize", "objective",
                                                       "constraints", "lambda",   "mm_steps"};

// A problem file's value as a training-option value (numbers, bools and strings).
TrainOptionValue option_value(const std::string& name, const std::string& key,
                              const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  throw ParseError(name, 0, 0,
                   fmt::format("key '{}': expected a number, bool or string, got {}", key,
                               io_detail::quoted(v.dump())));
}

std::string string_value(const std::string& name, const std::string& key, const nlohmann::json& v) {
  if (!v.is_string())
    throw ParseError(
        name, 0, 0,
        fmt::format("key '{}': expected a string, got {}", key, io_detail::quoted(v.dump())));
  return v.get<std::string>();
}

// Decodes the UTF-8 code point starting at text[pos] (a byte >= 0x80); advances pos past it.
// Throws ParseError for invalid UTF-8 (overlong forms, surrogates, truncated sequences).
char32_t decode_utf8(std::string_view text, std::size_t& pos, const std::string& name,
                     std::size_t line) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(pos);
  std::size_t len = 0;
  char32_t c = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    c = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    c = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    c = b0 & 0x07u;
  } else {
    throw ParseError(name, line, 0, "invalid UTF-8 (problem files are UTF-8 text)");
  }
  if (pos + len > text.size())
    throw ParseError(name, line, 0, "invalid UTF-8: the file ends inside a character");
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(pos + k) & 0xC0u) != 0x80u)
      throw ParseError(name, line, 0, "invalid UTF-8 (problem files are UTF-8 text)");
    c = (c << 6) | (byte(pos + k) & 0x3Fu);
  }
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF))
    throw ParseError(name, line, 0, "invalid UTF-8 (problem files are UTF-8 text)");
  pos += len;
  return c;
}

std::string toml_escape(char32_t c) {
  return c <= 0xFFFF ? fmt::format("\\u{:04X}", static_cast<std::uint32_t>(c))
                     : fmt::format("\\U{:08X}", static_cast<std::uint32_t>(c));
}

// The TOML text with ASCII only, the same document. toml++ 3.3 (Debian 12's) reaches
// __builtin_unreachable() -- undefined behaviour -- when its whitespace test meets some non-ASCII
// code points (U+00A1..U+0499 among them; upstream issue marzer/tomlplusplus#295, fixed by PR 305,
// found by fuzz_problem). So toml++ never sees one: inside a basic string a non-ASCII character
// becomes its \uXXXX escape, a literal string holding one becomes the equivalent basic string,
// comments drop theirs, and anywhere else (TOML allows it nowhere else) it is an error. Lines
// are kept, so toml++'s line numbers stay right.
std::string ascii_toml(std::string_view text, const std::string& name) {
  enum class State { kNormal, kComment, kBasic, kMlBasic, kLiteral, kMlLiteral };
  State state = State::kNormal;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t line = 1;
  const auto run_of = [&](std::size_t pos, char q) {
    std::size_t n = 0;
    while (pos + n < text.size() && text[pos + n] == q) ++n;
    return n;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char ch = text[pos];
    if (static_cast<unsigned char>(ch) >= 0x80) {
      const char32_t c = decode_utf8(text, pos, name, line);
      switch (state) {
        case State::kComment:
          break;  // dropped
        case State::kBasic:
        case State::kMlBasic:
        case State::kLiteral:
        case State::kMlLiteral:
          out += toml_escape(c);
          break;
        case State::kNormal:
          throw ParseError(name, line, 0,
                           fmt::format("non-ASCII character U+{:04X} outside a string or comment",
                                       static_cast<std::uint32_t>(c)));
      }
      continue;
    }
    if (ch == '\n') ++line;
    switch (state) {
      case State::kNormal:
        if (ch == '#') {
          state = State::kComment;
        } else if (ch == '"') {
          if (run_of(pos, '"') >= 3) {
            out += R"(""")";
            pos += 3;
            state = State::kMlBasic;
            continue;
          }
          state = State::kBasic;
        } else if (ch == '\'') {
          if (run_of(pos, '\'') >= 3) {
            out += R"(""")";
            pos += 3;
            state = State::kMlLiteral;
            continue;
          }
          out += '"';
          ++pos;
          state = State::kLiteral;
          continue;
        }
        out += ch;
        ++pos;
        break;
      case State::kComment:
        if (ch == '\n') state = State::kNormal;
        out += ch;
        ++pos;
        break;
      case State::kBasic:
      case State::kMlBasic:
        if (ch == '\\') {
          // An escape: the backslash and the next character as they are (a non-ASCII one there
          // is no valid escape).
          out += ch;
          ++pos;
          if (pos < text.size()) {
            if (static_cast<unsigned char>(text[pos]) >= 0x80)
              throw ParseError(name, line, 0,
                               "invalid escape: a backslash before a non-ASCII character");
            if (text[pos] == '\n') ++line;
            out += text[pos];
            ++pos;
          }
          break;
        }
        if (ch == '"') {
          const std::size_t n = state == State::kMlBasic ? run_of(pos, '"') : 1;
          if (state == State::kBasic || n >= 3) {
            out.append(n, '"');
            pos += n;
            state = State::kNormal;
            break;
          }
        }
        if (ch == '\n' && state == State::kBasic) state = State::kNormal;  // an error for toml++
        out += ch;
        ++pos;
        break;
      case State::kLiteral:
      case State::kMlLiteral:
        if (ch == '\'') {
          const std::size_t n = state == State::kMlLiteral ? run_of(pos, '\'') : 1;
          if (state == State::kLiteral || n >= 3) {
            if (n > 5) throw ParseError(name, line, 0, "too many quotes closing a literal string");
            out.append(n - (state == State::kLiteral ? 1 : 3), '\'');
            out += state == State::kLiteral ? "\"" : R"(""")";
            pos += n;
            state = State::kNormal;
            break;
          }
        }
        if (ch == '\\' || ch == '"') out += '\\';
        if (ch == '\n' && state == State::kLiteral) state = State::kNormal;  // an error for toml++
        out += ch;
        ++pos;
        break;
    }
  }
  return out;
}

nlohmann::json to_json(std::string_view text, ProblemFileFormat format, const std::string& name) {
  if (format == ProblemFileFormat::kJson) {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      // parse_error, and out_of_range for a number too large for a double (1e400): found by
      // fuzz_problem, it escaped as a nlohmann exception.
      throw ParseError(name, 0, 0, e.what());
    }
  }
  try {
    const toml::table t = toml::parse(ascii_toml(text, name), name);
    std::stringstream js;
    js << toml::json_formatter{t};
    return nlohmann::json::parse(js.str());
  } catch (const toml::parse_error& e) {
    throw ParseError(name, e.source().begin.line, e.source().begin.column,
                     std::string(e.description()));
  } catch (const nlohmann::json::exception& e) {
    // TOML values JSON cannot hold (inf, nan) leave the formatter as bare words.
    throw ParseError(name, 0, 0,
                     fmt::format("a value cannot be represented (inf or nan?): {}", e.what()));
  }
}

}  // namespace

ProblemFile parse_problem_file(std::string_view text, ProblemFileFormat format,
                               const std::string& name) {
  const nlohmann::json j = to_json(text, format, name);
  if (!j.is_object()) throw ParseError(name, 0, 0, "expected a table / object of problem keys");
  for (const auto& [k, v] : j.items()) {
    if (std::find(kProblemKeys.begin(), kProblemKeys.end(), k) != kProblemKeys.end() ||
        find_train_option(k) != nullptr)
      continue;
    std::string keys;
    for (std::string_view p : kProblemKeys) keys += fmt::format("{}, ", p);
    for (const TrainOptionInfo& i : train_option_table())
      keys += fmt::format("{}{}", i.key, &i == &train_option_table().back() ? "" : ", ");
    throw ParseError(name, 0, 0,
                     fmt::format("unknown key {} (keys: {})", io_detail::quoted(k, 80), keys));
  }
  ProblemFile out;
  if (j.contains("minimize")) out.minimize = string_value(name, "minimize", j["minimize"]);
  if (j.contains("objective")) out.minimize = string_value(name, "objective", j["objective"]);
  if (j.contains("maximize")) out.maximize = string_value(name, "maximize", j["maximize"]);
  if (j.contains("constraints")) {
    const auto& c = j["constraints"];
    if (c.is_string()) {
      out.constraints.push_back(c.get<std::string>());
    } else if (c.is_array()) {
      for (const auto& e : c) out.constraints.push_back(string_value(name, "constraints", e));
    } else {
      throw ParseError(name, 0, 0,
                       fmt::format("key 'constraints': expected a list of strings, got {}",
                                   io_detail::quoted(c.dump())));
    }
  }
  if (j.contains("lambda")) {
    const auto& v = j["lambda"];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
      throw ParseError(name, 0, 0,
                       fmt::format("key 'lambda': expected a finite number > 0, got {}",
                                   io_detail::quoted(v.dump())));
    out.lambda = v.get<double>();
  }
  if (j.contains("mm_steps")) {
    const auto& v = j["mm_steps"];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 ||
        v.get<std::int64_t>() > std::numeric_limits<int>::max() ||
        (v.is_number_unsigned() &&
         v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())))
      throw ParseError(name, 0, 0,
                       fmt::format("key 'mm_steps': expected an integer >= 1, got {}",
                                   io_detail::quoted(v.dump())));
    out.mm_steps = static_cast<int>(v.get<std::int64_t>());
  }
  if (j.contains("solver")) out.solver = string_value(name, "solver", j["solver"]);
  TrainOptions check;  // every value goes through the option's conversion and check
  for (const TrainOptionInfo& i : train_option_table()) {
    const std::string key(i.key);
    if (key == "solver" || !j.contains(key)) continue;
    TrainOptionValue value = option_value(name, key, j[key]);
    try {
      set_train_option(check, key, value);
    } catch (const InvalidArgument& e) {
      std::string_view what = e.what();
      if (const auto cut = what.find("] "); cut != std::string_view::npos)
        what.remove_prefix(cut + 2);
      throw ParseError(name, 0, 0, std::string(what));
    }
    out.options.emplace_back(key, std::move(value));
  }
  return out;
}

ProblemFile read_problem_file(const std::string& path) {
  const std::string text = read_text_file(path);
  const ProblemFileFormat format =
      io_detail::ends_with_ci(path, ".json") ? ProblemFileFormat::kJson : ProblemFileFormat::kToml;
  return parse_problem_file(text, format, path);
}

}  // namespace rateopt
