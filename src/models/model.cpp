// Linear scorers, the (stochastic) mixture classifier and its versioned JSON format.
// See rateopt/model.hpp and docs/models.md.
#include "rateopt/model.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "common/parallel.hpp"
#include "common/random.hpp"
#include "io/io_util.hpp"
#include "rateopt/io.hpp"

namespace rateopt {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kFormatName = "rateopt.model";
constexpr double kMixtureTolerance = 1e-9;
// Largest |weight| or |bias| a model may hold: larger finite values (1e308) overflow w . x.
constexpr double kMaxWeight = 1e100;
constexpr std::size_t kScoreChunk = 1024;  // rows per parallel task when scoring
// Rows per block of Classifier::predict_positive: the doubles it holds at a time (512 KiB).
constexpr std::size_t kPredictBlock = 65536;

// Checks that x can be scored by a model with `num_weights` weights: fewer columns are fine
// (missing columns count as zero); more columns only for CSR with the extra columns empty.
void check_columns(const FeatureMatrix& x, std::size_t num_weights, std::size_t begin_row,
                   std::size_t end_row) {
  if (x.cols() <= num_weights) return;
  RATEOPT_CHECK(x.is_sparse(), "the dense feature matrix has {} columns, the model has {} weights",
                x.cols(), num_weights);
  const CsrView v = x.csr_view();
  for (std::size_t i = begin_row; i < end_row; ++i) {
    const auto last = v.indptr[i + 1];
    if (last > v.indptr[i]) {
      const auto j = static_cast<std::size_t>(v.indices[static_cast<std::size_t>(last - 1)]);
      RATEOPT_CHECK(j < num_weights,
                    "row {} has a value in column {}, but the model has only {} weights", i, j,
                    num_weights);
    }
  }
}

double apply_link(Link link, double s) {
  switch (link) {
    case Link::kLogistic:
      if (s >= 0) return 1.0 / (1.0 + std::exp(-s));
      return std::exp(s) / (1.0 + std::exp(s));
    case Link::kThreshold:
      return s > 0 ? 1.0 : 0.0;
    case Link::kRamp:
      return std::clamp((1.0 + s) / 2.0, 0.0, 1.0);
  }
  return 0.0;
}

std::optional<Link> parse_link(std::string_view name) {
  return detail::parse(detail::kLinkNames, name);
}

// Uniform in [0, 1): the draw of row `row` under `seed`.
double uniform01(std::uint64_t seed, std::uint64_t row) {
  return detail::unit_uniform(detail::mix64(seed, row));
}

// Runs fn(begin, end) over chunks of rows in parallel.
template <typename Fn>
void for_row_chunks(std::size_t rows, int n_threads, Fn&& fn) {
  const std::size_t chunks = (rows + kScoreChunk - 1) / kScoreChunk;
  detail::parallel_for(chunks, n_threads, [&](std::size_t c) {
    const std::size_t begin = c * kScoreChunk;
    fn(begin, std::min(rows, begin + kScoreChunk));
  });
}

// Scores under lm of rows [first, first + out.size()) of x: out[k] is row first + k's.
void score_rows(const LinearModel& lm, const FeatureMatrix& x, std::size_t first,
                std::span<double> out, int n_threads) {
  check_columns(x, lm.weights.size(), first, first + out.size());
  const std::span<const double> w(lm.weights);
  const auto used = w.first(std::min(x.cols(), w.size()));
  for_row_chunks(out.size(), n_threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) out[k] = x.row_dot(first + k, used) + lm.bias;
  });
}

// Scores under any scorer of rows [first, first + out.size()) of x.
void score_rows(const ScoreModel& scorer, const FeatureMatrix& x, std::size_t first,
                std::span<double> out, int n_threads) {
  if (scorer.is_linear())
    score_rows(scorer.linear(), x, first, out, n_threads);
  else
    scorer.trees()->scores(x, first, out, n_threads);
}

// A score that is not a number (w . x overflowing to inf - inf) is an error, never a silent 0
// or a "nan" in the output. out[k] is row first + k's.
void throw_if_nan(std::span<const double> out, std::size_t first = 0) {
  for (std::size_t k = 0; k < out.size(); ++k)
    if (std::isnan(out[k]))
      throw InvalidArgument(fmt::format(
          "row {}: the model's score is not a number (the weights times the features overflow a "
          "double; check the feature scaling)",
          first + k));
}

// The group rules' first inconsistency (Classifier kind "group_threshold"), or nothing.
std::optional<std::string> find_group_problem(const Classifier& c) {
  if (c.group_rules.empty()) {
    if (!c.group_columns.empty())
      return fmt::format("'group_columns' has {} columns but 'groups' is empty",
                         c.group_columns.size());
    return std::nullopt;
  }
  if (c.components.size() != 1)
    return fmt::format("a classifier with group rules has {} components, expected one (the score)",
                       c.components.size());
  std::set<std::vector<std::string>> keys;
  for (std::size_t g = 0; g < c.group_rules.size(); ++g) {
    const GroupRule& r = c.group_rules[g];
    if (r.key.size() != c.group_columns.size())
      return fmt::format("'groups[{}].key' has {} values, expected one per group column ({})", g,
                         r.key.size(), c.group_columns.size());
    if (!keys.insert(r.key).second)
      return fmt::format("'groups[{}].key' [{}] repeats an earlier group", g,
                         fmt::join(r.key, ", "));
    if (r.thresholds.empty() || r.weights.size() != r.thresholds.size())
      return fmt::format(
          "'groups[{}]' has {} thresholds and {} weights, expected as many (at least one)", g,
          r.thresholds.size(), r.weights.size());
    double sum = 0;
    for (std::size_t j = 0; j < r.thresholds.size(); ++j) {
      if (!std::isfinite(r.thresholds[j]) || (j > 0 && !(r.thresholds[j] > r.thresholds[j - 1])))
        return fmt::format("'groups[{}].thresholds[{}]' is {}, expected finite and increasing", g,
                           j, r.thresholds[j]);
      if (!std::isfinite(r.weights[j]) || r.weights[j] < 0)
        return fmt::format("'groups[{}].weights[{}]' is {}, expected a finite value >= 0", g, j,
                           r.weights[j]);
      sum += r.weights[j];
    }
    if (std::abs(sum - 1.0) > kMixtureTolerance)
      return fmt::format("'groups[{}].weights' sums to {:.17g}, expected 1 (within {})", g, sum,
                         kMixtureTolerance);
  }
  return std::nullopt;
}

// Returns the first inconsistency of c, or nothing.
std::optional<std::string> find_problem(const Classifier& c) {
  if (c.components.empty()) return std::string("'components' is empty, expected at least one");
  if (c.mixture.size() != c.components.size())
    return fmt::format("'mixture' has {} entries, expected one per component ({})",
                       c.mixture.size(), c.components.size());
  double sum = 0;
  for (std::size_t m = 0; m < c.mixture.size(); ++m) {
    if (!std::isfinite(c.mixture[m]) || c.mixture[m] < 0)
      return fmt::format("'mixture[{}]' is {}, expected a finite value >= 0", m, c.mixture[m]);
    sum += c.mixture[m];
  }
  if (std::abs(sum - 1.0) > kMixtureTolerance)
    return fmt::format("'mixture' sums to {:.17g}, expected 1 (within {})", sum, kMixtureTolerance);
  if (c.best >= c.components.size())
    return fmt::format("'best' is {}, expected an index in [0, {})", c.best, c.components.size());
  const std::size_t d = c.components.front().num_features();
  if (c.encoding.num_features != 0 && c.encoding.num_features != d)
    return fmt::format("'components[0]' reads {} features, the encoding has {} features", d,
                       c.encoding.num_features);
  for (std::size_t m = 0; m < c.components.size(); ++m) {
    if (!c.components[m].is_linear()) {
      if (c.components[m].num_features() != d)
        return fmt::format("'components[{}]' reads {} features, expected {}", m,
                           c.components[m].num_features(), d);
      continue;
    }
    const LinearModel& lm = c.components[m].linear();
    if (lm.weights.size() != d)
      return fmt::format("'components[{}].weights' has {} entries, expected {}", m,
                         lm.weights.size(), d);
    for (std::size_t j = 0; j < d; ++j)
      if (!(std::fabs(lm.weights[j]) <= kMaxWeight))
        return fmt::format(
            "'components[{}].weights[{}]' is {}, expected a finite value of at "
            "most {:g} in magnitude",
            m, j, lm.weights[j], kMaxWeight);
    if (!(std::fabs(lm.bias) <= kMaxWeight))
      return fmt::format(
          "'components[{}].bias' is {}, expected a finite value of at most {:g} in "
          "magnitude",
          m, lm.bias, kMaxWeight);
  }
  return find_group_problem(c);
}

// Parses an embedded JSON object (options, report); throws InvalidArgument naming `what`.
Json parse_embedded(const std::string& text, std::string_view what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  RATEOPT_CHECK(j.is_object(), "the classifier's {} is not a JSON object: '{}'", what, text);
  return j;
}

// ---- reading ------------------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) {}

  // Throws ParseError naming the file and the JSON field (none for whole-model problems).
  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    if (field.empty()) detail::throw_parse_error(name_, 0, 0, "invalid model: {}", what);
    detail::throw_parse_error(name_, 0, 0, "model field '{}': {}", field, what);
  }

  const Json& at(const Json& object, const char* key, const std::string& path) const {
    auto it = object.find(key);
    if (it == object.end()) fail(path, "missing");
    return *it;
  }

  [[nodiscard]] std::string string(const Json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, fmt::format("expected a string, found {}", j.type_name()));
    return j.get<std::string>();
  }

  [[nodiscard]] double number(const Json& j, const std::string& path) const {
    if (!j.is_number()) fail(path, fmt::format("expected a number, found {}", j.type_name()));
    return j.get<double>();
  }

  [[nodiscard]] std::uint64_t index(const Json& j, const std::string& path) const {
    if (!j.is_number_unsigned())
      fail(path, fmt::format("expected a non-negative integer, found {}", j.dump()));
    return j.get<std::uint64_t>();
  }

  [[nodiscard]] std::vector<double> numbers(const Json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, fmt::format("expected an array, found {}", j.type_name()));
    std::vector<double> out;
    out.reserve(j.size());
    for (std::size_t k = 0; k < j.size(); ++k)
      out.push_back(number(j[k], fmt::format("{}[{}]", path, k)));
    return out;
  }

  [[nodiscard]] const Json& object(const Json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, fmt::format("expected an object, found {}", j.type_name()));
    return j;
  }

 private:
  const std::string& name_;
};

}  // namespace

// ---- LinearModel --------------------------------------------------------------------------------

double LinearModel::score(const FeatureMatrix& x, std::size_t i) const {
  RATEOPT_CHECK(i < x.rows(), "row {} outside [0, {})", i, x.rows());
  check_columns(x, weights.size(), i, i + 1);
  const std::span<const double> w(weights);
  return x.row_dot(i, w.first(std::min(x.cols(), w.size()))) + bias;
}

void LinearModel::scores(const FeatureMatrix& x, std::span<double> out, int n_threads) const {
  RATEOPT_CHECK(out.size() == x.rows(), "output has {} entries, expected one per row ({})",
                out.size(), x.rows());
  score_rows(*this, x, 0, out, n_threads);
}

// ---- names --------------------------------------------------------------------------------------

std::string_view to_string(Link link) noexcept {
  return detail::name_of(detail::kLinkNames, link);
}

std::string_view to_string(PredictMode mode) noexcept {
  return detail::name_of(detail::kPredictModeNames, mode);
}

PredictMode parse_predict_mode(std::string_view name) {
  if (const auto m = detail::parse(detail::kPredictModeNames, name)) return *m;
  throw InvalidArgument(fmt::format("unknown predict mode '{}' (accepted: {})", name,
                                    detail::joined_names(detail::kPredictModeNames)));
}

namespace {

std::string read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot open model file '{}'", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw IoError(fmt::format("cannot read model file '{}'", path));
  return buffer.str();
}

void write_model_file(const std::string& path, const std::string& text) {
  std::string file_text = text;
  file_text += '\n';
  write_file_atomic(path, file_text);
}

// Parses a model file's text as JSON; a syntax error names the line and column (NaN and
// Infinity are not JSON: a model never holds them).
Json parse_model_json(std::string_view text, const std::string& name) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t k = 0; k + 1 < e.byte && k < text.size(); ++k) {
      column = text[k] == '\n' ? 1 : column + 1;
      line += text[k] == '\n' ? 1 : 0;
    }
    const std::string what = e.what();
    const std::size_t at = what.find(": ", what.find("column"));
    detail::throw_parse_error(name, line, column, "model file is not valid JSON: {}",
                              at == std::string::npos ? what : what.substr(at + 2));
  } catch (const Json::out_of_range& e) {  // a number beyond a double, e.g. 1e400 (fuzz_model)
    detail::throw_parse_error(name, 0, 0, "model file is not valid JSON: {}", e.what());
  }
  return {};
}

// Parses a model file's JSON object and checks its format name and version.
Json parse_model_object(std::string_view text, const std::string& name, std::string_view format,
                        int max_version) {
  const Reader r(name);
  Json j = parse_model_json(text, name);
  if (!j.is_object()) r.fail("", "the model file must hold a JSON object");
  const std::string found = r.string(r.at(j, "format", "format"), "format");
  if (found != format) r.fail("format", fmt::format("'{}', expected '{}'", found, format));
  const Json& version_json = r.at(j, "version", "version");
  if (!version_json.is_number_integer())
    r.fail("version", fmt::format("expected an integer, found {}", version_json.dump()));
  const auto version = version_json.get<std::int64_t>();
  if (version < 1 || version > max_version)
    r.fail("version", fmt::format("{} is not supported (this build reads versions 1 to {})",
                                  version, max_version));
  return j;
}

}  // namespace

// ---- ScoreModel
// -------------------------------------------------------------------------------------

std::string_view ScoreModel::family() const noexcept {
  return is_linear() ? "linear" : "gbdt";
}

const LinearModel& ScoreModel::linear(std::string_view needed_by) const {
  const auto* lm = std::get_if<LinearModel>(&v_);
  RATEOPT_CHECK(lm != nullptr, "{} needs a linear model, and this component is {} (boosted trees)",
                needed_by.empty() ? std::string_view("this step") : needed_by, family());
  return *lm;
}

LinearModel& ScoreModel::linear(std::string_view needed_by) {
  return const_cast<LinearModel&>(std::as_const(*this).linear(needed_by));
}

std::size_t ScoreModel::num_features() const noexcept {
  if (const auto* lm = std::get_if<LinearModel>(&v_)) return lm->weights.size();
  return std::get<TreeEnsemble>(v_).num_features();
}

void ScoreModel::scores(const FeatureMatrix& x, std::span<double> out, int n_threads) const {
  if (const auto* lm = std::get_if<LinearModel>(&v_))
    lm->scores(x, out, n_threads);
  else
    std::get<TreeEnsemble>(v_).scores(x, out, n_threads);
}

void ScoreModel::scores(const FeatureMatrix& x, std::size_t first, std::span<double> out,
                        int n_threads) const {
  score_rows(*this, x, first, out, n_threads);
}

// ---- Classifier ---------------------------------------------------------------------------------

bool Classifier::is_linear() const noexcept {
  return std::all_of(components.begin(), components.end(),
                     [](const ScoreModel& s) { return s.is_linear(); });
}

Classifier Classifier::single(ScoreModel model, Link link, Encoding encoding) {
  Classifier c;
  c.components.push_back(std::move(model));
  c.mixture = {1.0};
  c.best = 0;
  c.link = link;
  c.encoding = std::move(encoding);
  c.validate();
  return c;
}

void Classifier::validate() const {
  if (auto problem = find_problem(*this)) throw InvalidArgument("invalid classifier: " + *problem);
}

namespace {

// The number of features a classifier expects, after validating it.
std::size_t check_input(const Classifier& c, const FeatureMatrix& x, std::size_t out_size) {
  c.validate();
  const std::size_t d = c.components.front().num_features();
  RATEOPT_CHECK(out_size == x.rows(), "output has {} entries, expected one per row ({})", out_size,
                x.rows());
  RATEOPT_CHECK(x.cols() == d || (x.is_sparse() && x.cols() < d),
                "the feature matrix has {} columns, the model expects {} features (a sparse "
                "matrix may have fewer)",
                x.cols(), d);
  return d;
}

}  // namespace

namespace {

// Throws InvalidArgument for a classifier with group columns called without the data's columns.
void check_no_group_columns(const Classifier& c) {
  RATEOPT_CHECK(c.group_columns.empty(),
                "this classifier (kind '{}') predicts per group of the column(s) {}: call predict "
                "or decision_function with the Dataset, which holds them",
                c.kind, fmt::join(c.group_columns, ", "));
}

// Throws InvalidArgument unless `known` (when given) holds one entry per component of c, each
// empty or with one score per row of its matrix, when that matrix is x.
void check_known(const Classifier& c, const FeatureMatrix& x, const KnownScores* known) {
  if (known == nullptr || known->rows != &x) return;
  RATEOPT_CHECK(known->scores.size() == c.components.size(),
                "known scores are given for {} components, the classifier has {}",
                known->scores.size(), c.components.size());
  for (std::size_t m = 0; m < known->scores.size(); ++m)
    RATEOPT_CHECK(known->scores[m].empty() || known->scores[m].size() == x.rows(),
                  "known scores of component {}: {} scores for {} rows (one per row, or none)", m,
                  known->scores[m].size(), x.rows());
}

// Component m's scores of rows [first, first + out.size()) of x: the known ones where the caller
// holds them for x (check_known), else scored.
void component_scores(const Classifier& c, std::size_t m, const FeatureMatrix& x, std::size_t first,
                      std::span<double> out, int n_threads, const KnownScores* known) {
  if (known != nullptr && known->rows == &x && !known->scores[m].empty()) {
    const std::span<const double> from = known->scores[m].subspan(first, out.size());
    std::copy(from.begin(), from.end(), out.begin());
    return;
  }
  score_rows(c.components[m], x, first, out, n_threads);
}

// The rule (an index into c.group_rules) of each of the `count` rows of `data` from row `first`
// on: entry r is row first + r's. Throws NotFound when a group column is absent, a row's value is
// missing, or a row's group has no rule.
std::vector<std::size_t> group_of_rows(const Classifier& c, const Dataset& data, std::size_t first,
                                       std::size_t count) {
  const std::size_t k = c.group_columns.size(), n = data.num_rows();
  std::vector<const Column*> cols(k);
  for (std::size_t j = 0; j < k; ++j) {
    cols[j] = data.find_column(c.group_columns[j]);
    if (cols[j] == nullptr) {
      std::vector<std::string> have;
      for (const Column& col : data.columns()) have.push_back(col.name);
      throw NotFound(fmt::format(
          "the classifier's group column '{}' is not a column of the data (its columns: {}); "
          "read it as a group column (--groups {})",
          c.group_columns[j],
          have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")),
          fmt::join(c.group_columns, ",")));
    }
    RATEOPT_CHECK(cols[j]->codes.size() == n, "group column '{}' has {} values for {} rows",
                  c.group_columns[j], cols[j]->codes.size(), n);
  }
  // Rule codes: the data's level code of each key value (numeric columns match numerically).
  std::map<std::vector<std::int32_t>, std::size_t> by_codes;
  for (std::size_t g = 0; g < c.group_rules.size(); ++g) {
    std::vector<std::int32_t> codes(k);
    bool present = true;
    for (std::size_t j = 0; j < k; ++j) {
      codes[j] = cols[j]->find_level(c.group_rules[g].key[j]);
      present = present && codes[j] >= 0;
    }
    if (present) by_codes.emplace(std::move(codes), g);
  }
  std::vector<std::size_t> rule(count);
  std::vector<std::int32_t> codes(k);
  for (std::size_t i = first; i < first + count; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      codes[j] = cols[j]->codes[i];
      if (codes[j] < 0)
        throw NotFound(fmt::format("row {} has no value in group column '{}' (missing)", i,
                                   c.group_columns[j]));
    }
    const auto it = by_codes.find(codes);
    if (it == by_codes.end()) {
      std::vector<std::string> value(k), known;
      for (std::size_t j = 0; j < k; ++j)
        value[j] = fmt::format("{}={}", c.group_columns[j],
                               cols[j]->levels[static_cast<std::size_t>(codes[j])]);
      for (const GroupRule& r : c.group_rules)
        known.push_back(fmt::format("[{}]", fmt::join(r.key, ", ")));
      throw NotFound(fmt::format(
          "row {}: group [{}] has no threshold rule (the classifier was post-processed on groups "
          "{} of {})",
          i, fmt::join(value, ", "), fmt::join(known, " "), fmt::join(c.group_columns, ", ")));
    }
    rule[i - first] = it->second;
  }
  return rule;
}

// P(positive | score) under rule r.
double rule_probability(const GroupRule& r, double s) {
  double p = 0;
  for (std::size_t j = 0; j < r.thresholds.size() && s > r.thresholds[j]; ++j) p += r.weights[j];
  return std::clamp(p, 0.0, 1.0);
}

// The deterministic threshold of rule r: the smallest threshold whose cumulative weight exceeds
// 1/2, so that s > it exactly when P(positive | s) > 1/2 (the largest when rounding keeps every
// sum at or below 1/2).
double rule_threshold(const GroupRule& r) {
  double cum = 0;
  for (std::size_t j = 0; j < r.thresholds.size(); ++j) {
    cum += r.weights[j];
    if (cum > 0.5) return r.thresholds[j];
  }
  return r.thresholds.back();
}

// Group rules: predictions (decision = false) or decision values of rows [first, first +
// out.size()) of x, out[k] of row first + k under rule[k] (rule empty: every row under rule 0, a
// classifier without group columns).
void apply_rules(const Classifier& c, const FeatureMatrix& x, std::span<const std::size_t> rule,
                 std::size_t first, PredictMode mode, bool decision, std::span<double> out,
                 std::uint64_t seed, int n_threads, const KnownScores* known = nullptr) {
  component_scores(c, 0, x, first, out, n_threads, known);
  std::vector<double> det(c.group_rules.size());
  for (std::size_t g = 0; g < c.group_rules.size(); ++g) det[g] = rule_threshold(c.group_rules[g]);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t g = rule.empty() ? 0 : rule[i];
    const double s = out[i];
    if (decision) {
      out[i] = s - det[g];
    } else if (mode == PredictMode::kDeterministic) {
      out[i] = s > det[g] ? 1.0 : 0.0;
    } else {
      const double p = rule_probability(c.group_rules[g], s);
      out[i] = mode == PredictMode::kProbability ? p : (uniform01(seed, first + i) < p ? 1.0 : 0.0);
    }
  }
}

// Predictions of rows [first, first + out.size()) of x, out[k] of row first + k (rule: as
// apply_rules takes it). Stochastic draws are keyed by the row's index in x.
void predict_rows(const Classifier& c, const FeatureMatrix& x, std::span<const std::size_t> rule,
                  std::size_t first, PredictMode mode, std::span<double> out, std::uint64_t seed,
                  int n_threads, const KnownScores* known = nullptr) {
  if (!c.group_rules.empty()) {
    apply_rules(c, x, rule, first, mode, false, out, seed, n_threads, known);
    return;
  }
  if (mode == PredictMode::kDeterministic) {
    component_scores(c, c.best, x, first, out, n_threads, known);
    throw_if_nan(out, first);
    for (double& v : out) v = v > 0 ? 1.0 : 0.0;
    return;
  }
  // Probability sum_m mixture[m] * link(score_m(x)), skipping components of weight 0.
  if (!c.is_linear()) {  // a component's scores a block at a time, the same sum per row
    std::vector<double> p(out.size(), 0.0), s(out.size());
    for (std::size_t m = 0; m < c.components.size(); ++m) {
      if (c.mixture[m] == 0) continue;
      component_scores(c, m, x, first, s, n_threads, known);
      for (std::size_t k = 0; k < out.size(); ++k) p[k] += c.mixture[m] * apply_link(c.link, s[k]);
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
      const double q = std::isnan(p[k]) ? p[k] : std::clamp(p[k], 0.0, 1.0);
      out[k] = mode == PredictMode::kProbability || std::isnan(q)
                   ? q
                   : (uniform01(seed, first + k) < q ? 1.0 : 0.0);
    }
    throw_if_nan(out, first);
    return;
  }
  for_row_chunks(out.size(), n_threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t i = first + k;
      double p = 0;
      for (std::size_t m = 0; m < c.components.size(); ++m) {
        if (c.mixture[m] == 0) continue;
        const LinearModel& lm = c.components[m].linear();
        const std::span<const double> w(lm.weights);
        const double s = x.row_dot(i, w.first(std::min(x.cols(), w.size()))) + lm.bias;
        p += c.mixture[m] * apply_link(c.link, s);
      }
      p = std::isnan(p) ? p : std::clamp(p, 0.0, 1.0);  // rounding of the mixture sum
      out[k] = mode == PredictMode::kProbability || std::isnan(p)
                   ? p
                   : (uniform01(seed, i) < p ? 1.0 : 0.0);
    }
  });
  throw_if_nan(out, first);
}

}  // namespace

void Classifier::predict(const Dataset& data, PredictMode mode, std::span<double> out,
                         std::uint64_t seed, int n_threads, const KnownScores* known) const {
  const FeatureMatrix& x = data.features();
  check_input(*this, x, out.size());
  check_known(*this, x, known);
  if (group_columns.empty()) {
    predict_rows(*this, x, {}, 0, mode, out, seed, n_threads, known);
    return;
  }
  apply_rules(*this, x, group_of_rows(*this, data, 0, out.size()), 0, mode, false, out, seed,
              n_threads, known);
}

void Classifier::predict_positive(const Dataset& data, PredictMode mode,
                                  std::span<std::uint8_t> out, std::uint64_t seed, int n_threads,
                                  const KnownScores* known) const {
  RATEOPT_CHECK(mode != PredictMode::kProbability,
                "predict_positive gives 0/1 predictions (mode deterministic or stochastic), not "
                "mode {}",
                to_string(mode));
  const FeatureMatrix& x = data.features();
  check_input(*this, x, out.size());
  check_known(*this, x, known);
  std::vector<double> block(std::min(out.size(), kPredictBlock));
  for (std::size_t first = 0; first < out.size(); first += kPredictBlock) {
    const std::span<double> p =
        std::span<double>(block).first(std::min(kPredictBlock, out.size() - first));
    const std::vector<std::size_t> rule = group_columns.empty()
                                              ? std::vector<std::size_t>()
                                              : group_of_rows(*this, data, first, p.size());
    predict_rows(*this, x, rule, first, mode, p, seed, n_threads, known);
    for (std::size_t k = 0; k < p.size(); ++k) out[first + k] = p[k] > 0 ? 1 : 0;  // 0.0 or 1.0
  }
}

std::optional<std::vector<double>> Classifier::predict_levels(const FeatureMatrix& x,
                                                              std::span<std::uint8_t> out,
                                                              int n_threads,
                                                              const KnownScores* known) const {
  std::vector<std::size_t> active;  // the components of non-zero weight, in order
  for (std::size_t m = 0; m < components.size(); ++m)
    if (mixture[m] != 0) active.push_back(m);
  if (link != Link::kThreshold || !group_rules.empty() || active.size() > 8) return std::nullopt;
  check_input(*this, x, out.size());
  check_known(*this, x, known);
  // predict_rows' sum for each pattern of positive components (bit j: active[j]): the same
  // additions in the same order, adding 0.0 for a component predicting 0.
  std::vector<double> levels(std::size_t{1} << active.size());
  for (std::size_t pattern = 0; pattern < levels.size(); ++pattern) {
    double p = 0;
    for (std::size_t j = 0; j < active.size(); ++j)
      p += mixture[active[j]] * ((pattern >> j & 1U) != 0 ? 1.0 : 0.0);
    levels[pattern] = std::isnan(p) ? p : std::clamp(p, 0.0, 1.0);
  }
  const bool all_known = known != nullptr && known->rows == &x &&
                         std::all_of(active.begin(), active.end(),
                                     [&](std::size_t m) { return !known->scores[m].empty(); });
  if (!is_linear() || all_known) {  // each component's scores at once
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    std::vector<double> s(out.size());
    for (std::size_t j = 0; j < active.size(); ++j) {
      component_scores(*this, active[j], x, 0, s, n_threads, known);
      for (std::size_t i = 0; i < out.size(); ++i)
        if (apply_link(link, s[i]) == 1.0) out[i] = static_cast<std::uint8_t>(out[i] | 1U << j);
    }
    return levels;
  }
  for_row_chunks(out.size(), n_threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint8_t pattern = 0;
      for (std::size_t j = 0; j < active.size(); ++j) {
        const LinearModel& lm = components[active[j]].linear();
        const std::span<const double> w(lm.weights);
        const double s = x.row_dot(i, w.first(std::min(x.cols(), w.size()))) + lm.bias;
        if (apply_link(link, s) == 1.0) pattern = static_cast<std::uint8_t>(pattern | 1U << j);
      }
      out[i] = pattern;
    }
  });
  return levels;
}

void Classifier::decision_function(const Dataset& data, std::span<double> out,
                                   int n_threads) const {
  if (group_columns.empty()) {
    decision_function(data.features(), out, n_threads);
    return;
  }
  check_input(*this, data.features(), out.size());
  apply_rules(*this, data.features(), group_of_rows(*this, data, 0, out.size()), 0,
              PredictMode::kDeterministic, true, out, 0, n_threads);
}

void Classifier::predict(const FeatureMatrix& x, PredictMode mode, std::span<double> out,
                         std::uint64_t seed, int n_threads) const {
  check_input(*this, x, out.size());
  check_no_group_columns(*this);
  predict_rows(*this, x, {}, 0, mode, out, seed, n_threads);
}

void Classifier::decision_function(const FeatureMatrix& x, std::span<double> out,
                                   int n_threads) const {
  check_input(*this, x, out.size());
  check_no_group_columns(*this);
  if (!group_rules.empty()) {
    apply_rules(*this, x, {}, 0, PredictMode::kDeterministic, true, out, 0, n_threads);
    return;
  }
  components[best].scores(x, out, n_threads);
  throw_if_nan(out);
}

std::string Classifier::to_json() const {
  validate();
  Json j;
  j["format"] = kFormatName;
  // The lowest version that holds the model: earlier builds read models without group rules.
  j["version"] = !is_linear() ? 3 : group_rules.empty() ? 1 : 2;
  j["kind"] = kind;
  j["link"] = to_string(link);
  Json comps = Json::array();
  for (const ScoreModel& sc : components) {
    if (sc.is_linear()) {
      comps.push_back({{"weights", sc.linear().weights}, {"bias", sc.linear().bias}});
    } else {
      Json o{{"family", sc.family()},
             {"features", sc.num_features()},
             {"booster", sc.trees()->json()}};
      if (sc.trees()->offset() != 0) o["offset"] = sc.trees()->offset();  // a moved threshold
      comps.push_back(std::move(o));
    }
  }
  j["components"] = std::move(comps);
  j["mixture"] = mixture;
  j["best"] = best;
  j["encoding"] = Json::parse(encoding.to_json());
  j["options"] = parse_embedded(options_json, "options_json");
  j["report"] = parse_embedded(report_json, "report_json");
  if (!group_rules.empty()) {
    j["group_columns"] = group_columns;
    Json rules = Json::array();
    for (const GroupRule& r : group_rules)
      rules.push_back({{"key", r.key}, {"thresholds", r.thresholds}, {"weights", r.weights}});
    j["groups"] = std::move(rules);
  }
  // nlohmann writes doubles in the shortest form that reads back to the same value.
  return j.dump(1);
}

Classifier Classifier::from_json(std::string_view text, const std::string& name) {
  const Reader r(name);
  Json j = parse_model_object(text, name, kFormatName, kFormatVersion);

  Classifier c;
  c.kind = r.string(r.at(j, "kind", "kind"), "kind");
  const std::string link_name = r.string(r.at(j, "link", "link"), "link");
  const auto link = parse_link(link_name);
  if (!link) r.fail("link", fmt::format("'{}', expected logistic, threshold or ramp", link_name));
  c.link = *link;

  const Json& comps = r.at(j, "components", "components");
  if (!comps.is_array()) r.fail("components", "expected an array");
  for (std::size_t m = 0; m < comps.size(); ++m) {
    const std::string path = fmt::format("components[{}]", m);
    const Json& o = r.object(comps[m], path);
    if (o.contains("family")) {
      const std::string family = r.string(o.at("family"), path + ".family");
      if (family != "gbdt") r.fail(path + ".family", fmt::format("'{}', expected gbdt", family));
      const auto features =
          static_cast<std::size_t>(r.index(r.at(o, "features", path + ".features"), path));
      const std::string booster = r.string(r.at(o, "booster", path + ".booster"), path);
      TreeEnsemble trees;
      try {
        trees = TreeEnsemble(booster, features);
      } catch (const InvalidArgument& e) {
        r.fail(path + ".booster", e.what());
      }
      if (o.contains("offset")) trees.set_offset(r.number(o.at("offset"), path + ".offset"));
      c.components.emplace_back(std::move(trees));
      continue;
    }
    LinearModel lm;
    lm.weights = r.numbers(r.at(o, "weights", path + ".weights"), path + ".weights");
    lm.bias = r.number(r.at(o, "bias", path + ".bias"), path + ".bias");
    c.components.emplace_back(std::move(lm));
  }
  c.mixture = r.numbers(r.at(j, "mixture", "mixture"), "mixture");
  c.best = static_cast<std::size_t>(r.index(r.at(j, "best", "best"), "best"));

  const Json& enc = r.object(r.at(j, "encoding", "encoding"), "encoding");
  try {
    c.encoding = Encoding::from_json(enc.dump());
    // Checked here, so that a tampered encoding is blamed on the model file, not on the data
    // file it is later applied to.
    io_detail::check_encoding(c.encoding, c.encoding.format);
  } catch (const ParseError& e) {
    r.fail("encoding", e.detail());
  } catch (const InvalidArgument& e) {
    r.fail("encoding", e.what());
  }
  if (auto it = j.find("options"); it != j.end()) c.options_json = r.object(*it, "options").dump();
  if (auto it = j.find("report"); it != j.end()) c.report_json = r.object(*it, "report").dump();
  const auto strings = [&](const Json& a, const std::string& path) {
    if (!a.is_array()) r.fail(path, fmt::format("expected an array, found {}", a.type_name()));
    std::vector<std::string> out;
    for (std::size_t k = 0; k < a.size(); ++k)
      out.push_back(r.string(a[k], fmt::format("{}[{}]", path, k)));
    return out;
  };
  if (auto it = j.find("groups"); it != j.end()) {
    c.group_columns = strings(r.at(j, "group_columns", "group_columns"), "group_columns");
    const Json& rules = *it;
    if (!rules.is_array()) r.fail("groups", "expected an array");
    for (std::size_t g = 0; g < rules.size(); ++g) {
      const std::string path = fmt::format("groups[{}]", g);
      const Json& o = r.object(rules[g], path);
      GroupRule rule;
      rule.key = strings(r.at(o, "key", path + ".key"), path + ".key");
      rule.thresholds =
          r.numbers(r.at(o, "thresholds", path + ".thresholds"), path + ".thresholds");
      rule.weights = r.numbers(r.at(o, "weights", path + ".weights"), path + ".weights");
      c.group_rules.push_back(std::move(rule));
    }
  } else if (j.contains("group_columns")) {
    r.fail("groups", "missing ('group_columns' is given)");
  }

  if (auto problem = find_problem(c)) r.fail("", *problem);
  return c;
}

void Classifier::save(const std::string& path) const {
  write_model_file(path, to_json());
}

Classifier Classifier::load(const std::string& path) {
  return from_json(read_model_file(path), path);
}

std::string model_format(std::string_view text, const std::string& name) {
  const Reader r(name);
  Json j = parse_model_json(text, name);
  if (!j.is_object()) r.fail("", "the model file must hold a JSON object");
  return r.string(r.at(j, "format", "format"), "format");
}

// ---- OneVsRest ----------------------------------------------------------------------------------

void OneVsRest::validate() const {
  RATEOPT_CHECK(label_kind == LabelKind::kMultilabel || label_kind == LabelKind::kMulticlass,
                "one-vs-rest label kind is {}, expected multilabel or multiclass",
                to_string(label_kind));
  RATEOPT_CHECK(!outputs.empty(), "a one-vs-rest model needs at least one output");
  RATEOPT_CHECK(names.size() == outputs.size(), "{} output names for {} outputs", names.size(),
                outputs.size());
  const std::size_t d =
      outputs.front().components.empty() ? 0 : outputs.front().components.front().num_features();
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    outputs[j].validate();
    RATEOPT_CHECK(outputs[j].components.front().num_features() == d,
                  "output {} ('{}') reads {} features, output 0 reads {}", j, names[j],
                  outputs[j].components.front().num_features(), d);
  }
}

void OneVsRest::predict(const FeatureMatrix& x, PredictMode mode, std::span<double> out,
                        std::uint64_t seed, int n_threads) const {
  validate();
  const std::size_t n = x.rows(), n_out = outputs.size();
  RATEOPT_CHECK(out.size() == n * n_out, "output has {} entries, expected rows x outputs = {} x {}",
                out.size(), n, n_out);
  std::vector<double> column(n);
  for (std::size_t j = 0; j < n_out; ++j) {
    outputs[j].predict(x, mode, column, seed + j, n_threads);
    for (std::size_t i = 0; i < n; ++i) out[i * n_out + j] = column[i];
  }
}

std::string OneVsRest::to_json() const {
  validate();
  Json j;
  j["format"] = "rateopt.one_vs_rest";
  j["version"] = kFormatVersion;
  j["label_kind"] = to_string(label_kind);
  j["names"] = names;
  j["encoding"] = Json::parse(encoding.to_json());
  Json outs = Json::array();
  for (const Classifier& c : outputs) {
    Json o = Json::parse(c.to_json());
    o.erase("encoding");  // stored once, above
    outs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outs);
  return j.dump(1);
}

OneVsRest OneVsRest::from_json(std::string_view text, const std::string& name) {
  const Reader r(name);
  Json j = parse_model_object(text, name, "rateopt.one_vs_rest", kFormatVersion);
  OneVsRest m;
  const std::string kind = r.string(r.at(j, "label_kind", "label_kind"), "label_kind");
  const std::optional<LabelKind> label_kind = detail::parse(detail::kLabelKindNames, kind);
  if (label_kind != LabelKind::kMultilabel && label_kind != LabelKind::kMulticlass)
    r.fail("label_kind", fmt::format("'{}', expected multilabel or multiclass", kind));
  m.label_kind = *label_kind;
  const Json& names = r.at(j, "names", "names");
  if (!names.is_array()) r.fail("names", "expected an array of strings");
  for (std::size_t k = 0; k < names.size(); ++k)
    m.names.push_back(r.string(names[k], fmt::format("names[{}]", k)));
  const Json& enc = r.object(r.at(j, "encoding", "encoding"), "encoding");
  const Json& outs = r.at(j, "outputs", "outputs");
  if (!outs.is_array()) r.fail("outputs", "expected an array of models");
  for (std::size_t k = 0; k < outs.size(); ++k) {
    Json o = r.object(outs[k], fmt::format("outputs[{}]", k));
    o["encoding"] = enc;
    m.outputs.push_back(Classifier::from_json(o.dump(), fmt::format("{} (outputs[{}])", name, k)));
  }
  if (!m.outputs.empty()) m.encoding = m.outputs.front().encoding;
  try {
    m.validate();
  } catch (const InvalidArgument& e) {
    r.fail("", e.what());
  }
  return m;
}

void OneVsRest::save(const std::string& path) const {
  write_model_file(path, to_json());
}

OneVsRest OneVsRest::load(const std::string& path) {
  return from_json(read_model_file(path), path);
}

}  // namespace rateopt
