// The group shorthands of the expression language (docs/expressions.md, "Every group of a
// column"): parity(RATE, COLUMN), max_over(RATE, COLUMN) and min_over(RATE, COLUMN), rewritten
// into plain expressions over the values the column takes in the data, before parsing.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.hpp"
#include "rateopt/dataset.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace rateopt {

namespace {

constexpr std::string_view kShorthands[] = {"parity", "max_over", "min_over"};

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A column name or value as the slice grammar reads it back: as is when it holds only letters,
// digits and '_', '-', '.', '+' or inner spaces; else "quoted" with '"' and '\\' escaped.
std::string plain_or_quoted(std::string_view v) {
  const bool plain = !v.empty() && v.front() != ' ' && v.back() != ' ' &&
                     std::all_of(v.begin(), v.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                              c == '.' || c == '+' || c == ' ';
                     });
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Index just past the quoted text starting at s[i] (a quote), honouring '\' escapes.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
  const char q = s[i++];
  while (i < s.size() && s[i] != q) i += s[i] == '\\' ? 2 : 1;
  return std::min(i + 1, s.size());
}

[[noreturn]] void fail(std::string_view text, std::string_view call, const std::string& what) {
  throw ParseError("", 0, 0, fmt::format("{}: {} (in '{}')", call, what, text));
}

// RATE of a shorthand: name[:param][@dataset][[slice]]. Returns the text before the slice, the
// inside of the slice (empty when none) and the dataset name (empty: the first dataset).
struct RateText {
  std::string head, slice, dataset;
};
RateText parse_rate(std::string_view text, std::string_view call, std::string_view rate) {
  RateText r;
  std::size_t i = 0;
  const auto bad = [&] {
    fail(text, call,
         fmt::format("its first argument '{}' must be one rate, e.g. ppr, tpr@valid or "
                     "fbeta:2[age=30]",
                     rate));
  };
  if (rate.empty() || !is_ident_start(rate[0])) bad();
  while (i < rate.size() && is_ident_char(rate[i])) ++i;
  if (i < rate.size() && rate[i] == ':') {
    ++i;
    const std::size_t start = i;
    while (i < rate.size() && (std::isalnum(static_cast<unsigned char>(rate[i])) ||
                               rate[i] == '.' || rate[i] == '+' || rate[i] == '-'))
      ++i;
    if (i == start) bad();
  }
  if (i < rate.size() && rate[i] == '@') {
    const std::size_t start = ++i;
    while (i < rate.size() && is_ident_char(rate[i])) ++i;
    if (i == start) bad();
    r.dataset = std::string(rate.substr(start, i - start));
  }
  r.head = std::string(rate.substr(0, i));
  if (i < rate.size()) {
    if (rate[i] != '[' || rate.back() != ']') bad();
    r.slice = std::string(trim(rate.substr(i + 1, rate.size() - i - 2)));
    if (r.slice.empty()) bad();
  }
  return r;
}

// COLUMN of a shorthand: an identifier or a quoted name.
std::string parse_column(std::string_view text, std::string_view call, std::string_view col) {
  if (col.size() >= 2 && (col.front() == '"' || col.front() == '\'') && col.back() == col.front()) {
    std::string out;
    for (std::size_t i = 1; i + 1 < col.size(); ++i) {
      if (col[i] == '\\' && i + 2 < col.size()) ++i;
      out += col[i];
    }
    if (!out.empty()) return out;
  } else if (!col.empty() && is_ident_start(col[0]) &&
             std::all_of(col.begin(), col.end(), is_ident_char)) {
    return std::string(col);
  }
  fail(text, call,
       fmt::format("its second argument '{}' must be a column name (quote names with other "
                   "characters)",
                   col));
}

// parity written pairwise (training, intervals) over at most this many values: 499,500 pairs;
// post-processing over 1,000 groups took 227 s of CPU time and 3.9 GB
// (docs/results/postprocess-groups.md), and the cost grows with the square of the values.
constexpr std::size_t kMaxParityValues = 1000;
constexpr std::size_t kMaxParityPairs = kMaxParityValues * (kMaxParityValues - 1) / 2;

std::string expand_call(std::string_view text, std::string_view call, std::string_view rate_arg,
                        std::string_view column_arg, const ColumnLevels& levels,
                        ParityForm parity) {
  const RateText rate = parse_rate(text, call, rate_arg);
  const std::string column = parse_column(text, call, column_arg);
  const std::vector<std::string> values = levels(rate.dataset, column);
  const std::size_t need = call == "parity" ? 2 : 1;
  if (values.size() < need)
    throw InvalidArgument(fmt::format(
        "{}({}, {}): column '{}' takes {} value(s) in {}; {} needs at least {} (in "
        "'{}')",
        call, rate_arg, column_arg, column, values.size(),
        rate.dataset.empty() ? std::string("the data") : "dataset '" + rate.dataset + "'", call,
        need, text));
  std::vector<std::string> rates;
  rates.reserve(values.size());
  for (const std::string& v : values)
    rates.push_back(fmt::format("{}[{}{}={}]", rate.head,
                                rate.slice.empty() ? "" : rate.slice + ", ",
                                plain_or_quoted(column), plain_or_quoted(v)));
  std::string out = call == "min_over" ? "min(" : "max(";
  bool first = true;
  const auto add = [&](const std::string& s) {
    out += first ? "" : ", ";
    out += s;
    first = false;
  };
  if (call == "parity" &&
      (parity == ParityForm::kSpread ||
       (parity == ParityForm::kTraining && rates.size() > kPairwiseParityValues))) {
    const std::string list = fmt::format("{}", fmt::join(rates, ", "));
    return fmt::format("(max({}) - min({}))", list, list);
  }
  if (call == "parity") {
    const std::size_t k = rates.size();
    if (k * (k - 1) / 2 > kMaxParityPairs)
      throw InvalidArgument(fmt::format(
          "{}({}, {}): column '{}' takes {} values; to train on parity (or give it --ci "
          "intervals) each pair of values is a constraint, {} pairs, more than the {} ({} "
          "values) this can serve; bound every group's rate instead: max_over({}, {}) <= A and "
          "min_over({}, {}) >= B with A - B <= the bound (2 x {} constraints), or merge the "
          "values into fewer groups (rateopt eval evaluates parity over any number of values; "
          "in '{}')",
          call, rate_arg, column_arg, column, k, k * (k - 1) / 2, kMaxParityPairs, kMaxParityValues,
          rate_arg, column_arg, rate_arg, column_arg, k, text));
    for (std::size_t a = 0; a < rates.size(); ++a)
      for (std::size_t b = a + 1; b < rates.size(); ++b)
        add(fmt::format("abs({} - {})", rates[a], rates[b]));
  } else {
    for (const std::string& r : rates) add(r);
  }
  return out + ")";
}

}  // namespace

std::string expand_group_shorthands(std::string_view text, const ColumnLevels& levels,
                                    ParityForm parity) {
  std::string out;
  std::size_t i = 0;
  int bracket = 0;  // inside a slice: names there are columns and values, never calls
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const std::size_t end = skip_quoted(text, i);
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '[') ++bracket;
    if (c == ']' && bracket > 0) --bracket;
    if (bracket == 0 && is_ident_start(c) && (i == 0 || !is_ident_char(text[i - 1]))) {
      std::size_t j = i;
      while (j < text.size() && is_ident_char(text[j])) ++j;
      const std::string_view name = text.substr(i, j - i);
      std::size_t k = j;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      const bool shorthand =
          std::find(std::begin(kShorthands), std::end(kShorthands), name) != std::end(kShorthands);
      if (shorthand && k < text.size() && text[k] == '(') {
        // The arguments: split at commas outside parentheses, brackets and quotes.
        std::vector<std::string_view> args;
        std::size_t start = k + 1, p = k + 1;
        int depth = 0;
        bool closed = false;
        while (p < text.size()) {
          const char d = text[p];
          if (d == '"' || d == '\'') {
            p = skip_quoted(text, p);
            continue;
          }
          if (d == '(' || d == '[') ++depth;
          if ((d == ')' || d == ']') && depth > 0) {
            --depth;
          } else if (d == ')' && depth == 0) {
            args.push_back(trim(text.substr(start, p - start)));
            closed = true;
            break;
          } else if (d == ',' && depth == 0) {
            args.push_back(trim(text.substr(start, p - start)));
            start = p + 1;
          }
          ++p;
        }
        if (!closed) fail(text, name, "missing ')'");
        if (args.size() != 2)
          fail(text, name,
               fmt::format("takes two arguments, a rate and a column (e.g. {}(ppr, sex)), got {}",
                           name, args.size()));
        out += expand_call(text, name, args[0], args[1], levels, parity);
        i = p + 1;
        continue;
      }
      out.append(name);
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::string expand_group_shorthands(std::string_view text, std::span<const NamedData> data,
                                    ParityForm parity) {
  return expand_group_shorthands(
      text,
      [&](std::string_view dataset, std::string_view column) -> std::vector<std::string> {
        const NamedData* d = data.empty() ? nullptr : data.data();
        if (!dataset.empty()) {
          d = nullptr;
          for (const NamedData& nd : data)
            if (nd.name == dataset) d = &nd;
          if (d == nullptr) throw NotFound(fmt::format("no dataset named '{}'", dataset));
        }
        RATEOPT_CHECK(d != nullptr && d->data != nullptr, "no data to expand '{}' over", column);
        // Over several ranks (mpirun): the levels of every rank's rows, as one process would see
        // them (rateopt/distributed.hpp).
        if (is_distributed()) return union_over_ranks(column_levels(*d->data, column));
        return column_levels(*d->data, column);
      },
      parity);
}

std::vector<std::string> slice_columns(std::string_view text) {
  std::vector<std::string> columns;
  const auto add = [&](std::string_view column) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end())
      columns.emplace_back(column);
  };
  // The shorthands' columns as they are met; two stand-in values make the text parse.
  const ColumnLevels record = [&](std::string_view, std::string_view column) {
    add(column);
    return std::vector<std::string>{"a", "b"};
  };
  const Expression expr = Expression::parse(expand_group_shorthands(text, record));
  for (const RateRef& rate : expr.rates())
    for (const Condition& c : rate.slice.conditions) add(c.column);
  return columns;
}

std::vector<std::string> column_levels(const Dataset& data, std::string_view column) {
  const Column& c = data.column(column);  // NotFound lists the columns
  std::vector<char> seen(c.levels.size(), 0);
  for (std::int32_t code : c.codes)
    if (code >= 0) seen[static_cast<std::size_t>(code)] = 1;
  std::vector<std::string> out;
  for (std::size_t l = 0; l < c.levels.size(); ++l)
    if (seen[l]) out.push_back(c.levels[l]);
  return out;
}

std::string tighten_constraint(std::string_view text, double margin) {
  RATEOPT_CHECK(std::isfinite(margin) && margin >= 0, "margin is {}, expected a finite value >= 0",
                margin);
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote != 0) {
      if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '(' || ch == '[') {
      ++depth;
    } else if (ch == ')' || ch == ']') {
      --depth;
    } else if (depth == 0 && (ch == '<' || ch == '>' || ch == '=')) {
      const bool two = i + 1 < text.size() && text[i + 1] == '=';
      RATEOPT_CHECK(ch != '=',
                    "'{}' is an equality: it cannot be made stricter (write it as two "
                    "inequalities)",
                    text);
      const std::string_view lhs = text.substr(0, i);
      const std::string_view rhs = text.substr(i + (two ? 2 : 1));
      return fmt::format("{} {} ({}) {} {}", lhs, ch == '<' ? "<=" : ">=", rhs,
                         ch == '<' ? '-' : '+', margin);
    }
  }
  throw InvalidArgument(
      fmt::format("'{}' is not a constraint (expected lhs <= rhs or lhs >= rhs)", text));
}

}  // namespace rateopt
