// Binding expressions to data: evaluate_rate and evaluate_expression (rateopt/expr.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "expr/expr_impl.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace rateopt {

namespace {

// Constraint tolerance of ExpressionValue::satisfied.
constexpr double kSatisfiedTolerance = 1e-12;

// The message of an error without its "[rateopt.xxx] " id.
std::string_view without_id(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    const auto end = what.find("] ");
    if (end != std::string_view::npos) return what.substr(end + 2);
  }
  return what;
}

std::string dataset_label(const NamedData& d) {
  return d.name.empty() ? std::string("the default dataset") : fmt::format("dataset '{}'", d.name);
}

const NamedData& find_data(const RateRef& rate, std::span<const NamedData> data) {
  RATEOPT_CHECK(!data.empty(), "no datasets were given");
  if (rate.dataset.empty()) return data.front();
  for (const NamedData& d : data)
    if (d.name == rate.dataset) return d;
  std::string names;
  for (const NamedData& d : data) {
    if (!names.empty()) names += ", ";
    names += fmt::format("'{}'", d.name);
  }
  throw NotFound(
      fmt::format("unknown dataset '{}' (datasets: {}; a rate without '@' uses the "
                  "first)",
                  rate.dataset, names));
}

std::string catalogue_names(bool without_labels_only) {
  std::vector<std::string_view> names;
  for (const MetricInfo& m : metric_catalogue())
    if (!without_labels_only || !m.needs_labels) names.push_back(m.name);
  return join_names(names);
}

// Total weight of the rows selected by `mask`.
double slice_weight(const Dataset& ds, const std::vector<std::uint8_t>& mask) {
  double total = 0;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i] != 0) total += ds.weight(i);
  return total;
}

// Over several ranks (mpirun) each rank holds some rows: confusion counts are summed over ranks;
// scores that need every row in one place are refused.
void check_not_distributed(const RateRef& rate) {
  RATEOPT_CHECK(!is_distributed(),
                "'{}' needs every row in one process; over {} ranks (mpirun) eval and train "
                "compute the confusion metrics of binary or unlabelled data (run it with one "
                "process for ranking, multiclass and multilabel scores)",
                rate.metric, process_group().size());
}

// roc_auc / average_precision on binary data.
double ranking_rate(const RateRef& rate, const NamedData& d) {
  check_not_distributed(rate);
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const LabelKind kind = ds.labels().kind;
  const std::size_t n = ds.num_rows();
  RATEOPT_CHECK(kind == LabelKind::kBinary,
                "'{}' needs binary labels, but {} is unlabelled; metrics defined without "
                "labels: {}",
                rate.metric, dataset_label(d), catalogue_names(true));
  const std::span<const double> scores =
      pred.scores.empty() ? std::span<const double>(pred.prob_positive) : pred.scores;
  RATEOPT_CHECK(scores.size() == n,
                "'{}' needs one score per row of {}: predictions have {} {}, expected {}",
                rate.metric, dataset_label(d), scores.size(),
                pred.scores.empty() ? "prob_positive entries (scores is empty)" : "scores", n);
  const std::vector<std::uint8_t> mask = slice_mask(ds, rate.slice);
  return rate.metric == "roc_auc"
             ? roc_auc(scores, ds.labels().values, ds.weights(), mask)
             : average_precision(scores, ds.labels().values, ds.weights(), mask);
}

// Confusion metrics and ranking metrics on binary or unlabelled data.
double binary_rate(const RateRef& rate, const ResolvedName& name, const NamedData& d) {
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const LabelKind kind = ds.labels().kind;
  const std::size_t n = ds.num_rows();
  if (name.family == RateFamily::kMultilabel) {
    throw InvalidArgument(fmt::format(
        "'{}' is a multilabel / multiclass score, but {} has {} labels; use a confusion metric "
        "({}) or roc_auc / average_precision",
        rate.metric, dataset_label(d), to_string(kind), catalogue_names(false)));
  }
  if (name.family == RateFamily::kRanking) return ranking_rate(rate, d);
  const MetricInfo& info = *name.info;
  RATEOPT_CHECK(!info.needs_labels || kind == LabelKind::kBinary,
                "'{}' needs labels, but {} is unlabelled (CLI: name the label column with "
                "--label); metrics defined without labels: {}",
                rate.metric, dataset_label(d), catalogue_names(true));
  RATEOPT_CHECK(!info.needs_baseline || ds.find_column("baseline") != nullptr,
                "'{}' compares with a baseline model, but {} has no column named \"baseline\"; "
                "attach the deployed model's predictions (0/1 or probabilities) as a column "
                "named baseline",
                rate.metric, dataset_label(d));
  // Probabilities when given, else hard 0/1 bytes (the same counts for the same 0/1 values).
  const bool use_prob = !pred.prob_positive.empty() || pred.positive.empty();
  RATEOPT_CHECK((use_prob ? pred.prob_positive.size() : pred.positive.size()) == n,
                "'{}' needs predictions.prob_positive (or, when that is empty, "
                "predictions.positive) with one entry per row of {}: prob_positive has {} entries "
                "and positive {}, expected {}",
                rate.metric, dataset_label(d), pred.prob_positive.size(), pred.positive.size(), n);
  const std::vector<std::uint8_t> mask = slice_mask(ds, rate.slice);
  // Over several ranks, the counts of every rank's rows (count_slice sums them).
  const SliceCounts counts = use_prob ? count_slice(ds, mask, pred.prob_positive)
                             : pred.levels.empty()
                                 ? count_slice(ds, mask, pred.positive)
                                 : count_slice(ds, mask, pred.positive, pred.levels);
  // compute_metric validates the parameter; "{}" prints the shortest text that reads back to
  // the same double.
  const std::string spec =
      std::isnan(rate.param) ? rate.metric : fmt::format("{}:{}", rate.metric, rate.param);
  return compute_metric(spec, counts);
}

std::size_t num_outputs(const Labels& y, std::span<const std::int32_t> predicted) {
  if (y.num_outputs() > 0) return y.num_outputs();
  // Without names: one more than the largest index seen.
  std::int32_t largest = -1;
  for (std::int32_t k : y.kind == LabelKind::kMultilabel ? y.set_indices : y.values)
    largest = std::max(largest, k);
  for (std::int32_t k : predicted) largest = std::max(largest, k);
  return largest < 0 ? 0 : static_cast<std::size_t>(largest) + 1;
}

double multilabel_rate(const RateRef& rate, const ResolvedName& name, const NamedData& d) {
  check_not_distributed(rate);
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const Labels& y = ds.labels();
  const std::size_t n = ds.num_rows();
  RATEOPT_CHECK(name.family == RateFamily::kMultilabel,
                "'{}' is not defined on multilabel data ({}); multilabel rates are {}", rate.metric,
                dataset_label(d), join_names(multilabel_rate_names()));
  RATEOPT_CHECK(pred.set_indptr.size() == n + 1,
                "multilabel rates need predicted label sets: predictions.set_indptr for {} has {} "
                "entries, expected {} (rows + 1)",
                dataset_label(d), pred.set_indptr.size(), n + 1);
  const std::size_t labels = num_outputs(y, pred.set_indices);
  const LabelSetsView truth{y.set_indptr, y.set_indices, labels};
  const LabelSetsView predicted{pred.set_indptr, pred.set_indices, labels};
  const std::vector<std::uint8_t> mask = slice_mask(ds, rate.slice);
  const MultilabelScores s = multilabel_scores(truth, predicted, ds.weights(), mask);
  if (rate.metric == "instance_f1") return s.instance_f1;
  if (rate.metric == "instance_jaccard") return s.instance_jaccard;
  if (rate.metric == "micro_f1") return s.micro_f1;
  if (rate.metric == "macro_f1") return s.macro_f1;
  if (rate.metric == "hamming_loss") return s.hamming_loss;
  return s.subset_accuracy;
}

double multiclass_rate(const RateRef& rate, const NamedData& d) {
  check_not_distributed(rate);
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const auto names = multiclass_rate_names();
  RATEOPT_CHECK(std::find(names.begin(), names.end(), rate.metric) != names.end(),
                "'{}' is not defined on multiclass data ({}); multiclass rates are {}", rate.metric,
                dataset_label(d), join_names(names));
  RATEOPT_CHECK(pred.classes.size() == ds.num_rows(),
                "multiclass rates need predicted classes: predictions.classes for {} has {} "
                "entries, expected {} (one per row)",
                dataset_label(d), pred.classes.size(), ds.num_rows());
  const std::vector<std::uint8_t> mask = slice_mask(ds, rate.slice);
  const MulticlassScores s = multiclass_scores(
      ds.labels().values, pred.classes, num_outputs(ds.labels(), pred.classes), ds.weights(), mask);
  if (rate.metric == "macro_f1") return s.macro_f1;
  if (rate.metric == "accuracy") return s.accuracy;
  // error = 1 - accuracy, except that proportions are 0 on an empty slice (metrics.hpp).
  return slice_weight(ds, mask) > 0 ? 1 - s.accuracy : 0.0;
}

// Below this many rates on one column of one dataset, each is counted on its own.
constexpr std::size_t kGroupedRates = 4;

// The dataset a rate reads, or null (unknown name: evaluate_rate reports it).
const NamedData* data_of(const RateRef& rate, std::span<const NamedData> data) {
  if (data.empty()) return nullptr;
  if (rate.dataset.empty()) return &data.front();
  for (const NamedData& d : data)
    if (d.name == rate.dataset) return &d;
  return nullptr;
}

// Rates of confusion metrics whose slice is one condition on a column (`ppr[race=Black]`, as
// parity, max_over and min_over write them), many on the same column of the same dataset:
// counted together, one pass over the rows for all the column's values (count_groups), instead
// of one pass a rate. The same bits as evaluate_rate; every other rate is left to it (so are
// errors: a value the column never takes, a metric the data cannot give). One process only (a
// column's codes differ between ranks).
void by_column_groups(std::span<const RateRef> rates, std::span<const NamedData> data,
                      std::vector<double>& values, std::vector<char>& done) {
  if (is_distributed()) return;
  // (dataset, column) -> the rates reading it.
  std::map<std::pair<const NamedData*, std::string>, std::vector<std::size_t>> batches;
  for (std::size_t r = 0; r < rates.size(); ++r) {
    const RateRef& rate = rates[r];
    if (rate.slice.conditions.size() != 1 || rate.slice.conditions[0].column == "label") continue;
    const NamedData* d = data_of(rate, data);
    if (d == nullptr || d->data == nullptr || d->predictions == nullptr) continue;
    const LabelKind kind = d->data->labels().kind;
    if (kind != LabelKind::kBinary && kind != LabelKind::kNone) continue;
    const std::optional<ResolvedName> name = resolve_rate_name(rate.metric);
    if (!name || name->family != RateFamily::kConfusion || name->info->needs_baseline ||
        (name->info->needs_labels && kind != LabelKind::kBinary))
      continue;
    if (d->data->find_column("baseline") != nullptr ||
        d->data->find_column(rate.slice.conditions[0].column) == nullptr)
      continue;
    batches[{d, rate.slice.conditions[0].column}].push_back(r);
  }
  for (const auto& [key, members] : batches) {
    if (members.size() < kGroupedRates) continue;
    const NamedData& d = *key.first;
    const Dataset& ds = *d.data;
    const Predictions& pred = *d.predictions;
    const std::size_t n = ds.num_rows();
    const bool use_prob = !pred.prob_positive.empty() || pred.positive.empty();
    if ((use_prob ? pred.prob_positive.size() : pred.positive.size()) != n) continue;
    const Column& col = ds.column(key.second);
    // Each value's level: exactly one, as column_mask matches them (numerically for a numeric
    // column); values matching none or several levels are left to evaluate_rate.
    std::unordered_map<std::string, std::int32_t> level_of;
    std::map<double, std::vector<std::int32_t>> numeric_levels;
    const bool numeric = col.is_numeric();
    for (std::size_t k = 0; k < col.levels.size(); ++k) {
      level_of.emplace(col.levels[k], static_cast<std::int32_t>(k));
      double x = 0;
      if (numeric && metrics_impl::parse_number(col.levels[k], x))
        numeric_levels[x].push_back(static_cast<std::int32_t>(k));
    }
    const auto level = [&](const std::string& value) -> std::int32_t {
      double x = 0;
      if (numeric && metrics_impl::parse_number(value, x)) {
        const auto it = numeric_levels.find(x);
        return it != numeric_levels.end() && it->second.size() == 1 ? it->second[0] : -1;
      }
      const auto it = level_of.find(value);
      return it == level_of.end() ? -1 : it->second;
    };
    // Only the levels some rate reads get a group (the others' rows count nowhere).
    std::vector<std::int32_t> group_of_level(col.levels.size(), -1);
    std::vector<std::int32_t> group_of_rate;
    std::int32_t groups = 0;
    for (const std::size_t r : members) {
      const std::int32_t l = level(rates[r].slice.conditions[0].value);
      if (l >= 0 && group_of_level[static_cast<std::size_t>(l)] < 0)
        group_of_level[static_cast<std::size_t>(l)] = groups++;
      group_of_rate.push_back(l < 0 ? -1 : group_of_level[static_cast<std::size_t>(l)]);
    }
    std::vector<std::int32_t> group(n);
    for (std::size_t i = 0; i < n; ++i)
      group[i] = col.codes[i] < 0 ? -1 : group_of_level[static_cast<std::size_t>(col.codes[i])];
    const auto g = static_cast<std::size_t>(groups);
    const std::vector<SliceCounts> counts =
        use_prob              ? count_groups(ds, group, g, pred.prob_positive)
        : pred.levels.empty() ? count_groups(ds, group, g, pred.positive)
                              : count_groups(ds, group, g, pred.positive, pred.levels);
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (group_of_rate[k] < 0) continue;
      const RateRef& rate = rates[members[k]];
      const std::string spec =
          std::isnan(rate.param) ? rate.metric : fmt::format("{}:{}", rate.metric, rate.param);
      try {
        values[members[k]] =
            compute_metric(spec, counts[static_cast<std::size_t>(group_of_rate[k])]);
        done[members[k]] = 1;
      } catch (const Error&) {  // evaluate_rate gives the message, naming the rate
      }
    }
  }
}

}  // namespace

double evaluate_rate(const RateRef& rate, std::span<const NamedData> data) {
  // Errors from here and from the metrics layer name the rate they were evaluating.
  try {
    const NamedData& d = find_data(rate, data);
    RATEOPT_CHECK(d.data != nullptr, "{} has no Dataset (NamedData::data is null)",
                  dataset_label(d));
    RATEOPT_CHECK(d.predictions != nullptr,
                  "{} has no Predictions (NamedData::predictions is null)", dataset_label(d));
    const std::optional<ResolvedName> name = resolve_rate_name(rate.metric);
    if (!name) throw NotFound(fmt::format("unknown rate '{}'", rate.metric));
    switch (d.data->labels().kind) {
      case LabelKind::kNone:
      case LabelKind::kBinary:
        return binary_rate(rate, *name, d);
      case LabelKind::kMultilabel:
        return multilabel_rate(rate, *name, d);
      case LabelKind::kMulticlass:
        return multiclass_rate(rate, d);
    }
    throw InvalidArgument("unknown label kind");
  } catch (const NotFound& e) {
    throw NotFound(fmt::format("{} (evaluating '{}')", without_id(e.what()), rate.to_string()));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(
        fmt::format("{} (evaluating '{}')", without_id(e.what()), rate.to_string()));
  }
}

ExpressionValue evaluate_expression(const Expression& expr, std::span<const NamedData> data) {
  const std::span<const RateRef> rates = expr.rates();
  std::vector<double> values(rates.size(), 0.0);
  std::vector<char> done(rates.size(), 0);
  by_column_groups(rates, data, values, done);
  for (std::size_t r = 0; r < rates.size(); ++r)
    if (done[r] == 0) values[r] = evaluate_rate(rates[r], data);
  ExpressionValue out;
  out.text = expr.text();
  out.is_constraint = expr.is_constraint();
  out.relation = expr.relation();
  out.value = expr.evaluate(expr.lhs_root(), values);
  if (out.is_constraint) {
    out.rhs = expr.evaluate(expr.rhs_root(), values);
    out.violation = expr.value(values);
    out.satisfied = out.violation <= kSatisfiedTolerance;  // false for NaN
  }
  return out;
}

ExpressionValue evaluate_text(std::string_view text, std::span<const NamedData> data) {
  // parity as max - min: the same value, linear in the number of groups.
  ExpressionValue out = evaluate_expression(
      Expression::parse(expand_group_shorthands(text, data, ParityForm::kSpread)), data);
  out.text = std::string(text);
  return out;
}

}  // namespace rateopt
