// File: rateopt/expr.hpp
// The expression language over rates on slices, shared by `rateopt eval` and training.
//
// Grammar (whitespace is free between tokens):
//   statement  := expr [ relation expr ]          relation: <=  >=  ==  (also < > = as aliases)
//   expr       := term { ('+' | '-') term }
//   term       := unary { ('*' | '/') unary }
//   unary      := '-' unary | primary
//   primary    := number | '(' expr ')' | function '(' expr { ',' expr } ')' | rate
//   rate       := name [ ':' number ] [ '@' dataset ] [ '[' slice ']' ]
//   slice      := condition { (',' | '&') condition }     condition := column '=' value
// `name` is any metric of the catalogue (metrics.hpp), a ranking metric (roc_auc,
// average_precision) or a multilabel / multiclass score (instance_f1, micro_f1, macro_f1, ...).
// Functions: min, max (any arity), abs, sqrt, log, exp, pow (2 args).
// Examples:
//   error
//   tpr[sex=Female] - tpr[sex=Male]
//   ppr[sex=Female] >= 0.8 * ppr[sex=Male]
//   precision[race=Black] / precision[race=White]
//   fbeta:2[label=1]      churn@unlabeled      max(fpr[race=Black], fpr[race=White])
//
// Parsing builds a small graph: nodes in topological order, leaves are `RateRef`s (deduplicated).
// Parse errors throw ParseError whose column() points at the offending character.
//
// Thread-safety: an Expression is immutable after parsing; evaluate() may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/metrics.hpp"

namespace rateopt {

// A leaf: a metric (with optional parameter) on a slice of a named dataset.
struct RateRef {
  std::string metric;                                       // catalogue name, e.g. "fbeta"
  double param = std::numeric_limits<double>::quiet_NaN();  // NaN = default / none
  std::string dataset;                                      // "" = the default (first) dataset
  Slice slice;
  // Canonical text, e.g. "fbeta:2@valid[sex=Female]".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const RateRef& a, const RateRef& b) {
    return a.metric == b.metric && a.dataset == b.dataset && a.slice == b.slice &&
           ((a.param != a.param && b.param != b.param) || a.param == b.param);
  }
};

enum class NodeOp { kConstant, kRate, kNeg, kAdd, kSub, kMul, kDiv, kCall };

struct ExprNode {
  NodeOp op = NodeOp::kConstant;
  double value = 0;               // kConstant
  std::size_t rate = 0;           // kRate: index into Expression::rates()
  std::string function;           // kCall: "min", "max", "abs", "sqrt", "log", "exp", "pow"
  std::vector<std::size_t> args;  // children (indices of earlier nodes)
  std::size_t position = 0;       // 0-based offset in the source text
};

enum class Relation { kNone, kLessEqual, kGreaterEqual, kEqual };

// A closed range [low, high] of values (low <= high; infinite ends allowed; NaN ends mean
// undefined). Expression::evaluate_range propagates ranges of the rates through an expression.
struct Interval {
  double low = 0;
  double high = 0;
  [[nodiscard]] bool contains(double x) const noexcept { return x >= low && x <= high; }
  friend bool operator==(const Interval&, const Interval&) = default;
};
// "<=", ">=", "==", and "" for kNone (an expression that is not a constraint).
[[nodiscard]] std::string_view to_string(Relation relation) noexcept;

class Expression {
 public:
  // Parses an expression or a constraint (`lhs <= rhs`). Throws ParseError.
  static Expression parse(std::string_view text);

  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  [[nodiscard]] const std::vector<RateRef>& rates() const noexcept { return rates_; }
  [[nodiscard]] const std::vector<ExprNode>& nodes() const noexcept { return nodes_; }
  [[nodiscard]] bool is_constraint() const noexcept { return relation_ != Relation::kNone; }
  [[nodiscard]] Relation relation() const noexcept { return relation_; }
  // Roots: lhs (the whole expression when not a constraint) and rhs (constraints only).
  [[nodiscard]] std::size_t lhs_root() const noexcept { return lhs_; }
  [[nodiscard]] std::size_t rhs_root() const noexcept { return rhs_; }

  // Value of the node `root` given one value per rate (rates().size() entries). With `grad`
  // non-empty (rates().size() entries) also writes d value / d rate_j (reverse mode).
  [[nodiscard]] double evaluate(std::size_t root, std::span<const double> rate_values,
                                std::span<double> grad = {}) const;
  // Not a constraint: the value. Constraint: lhs - rhs for <=, rhs - lhs for >=, and
  // |lhs - rhs| for ==, i.e. the amount of violation (<= 0 means satisfied).
  [[nodiscard]] double value(std::span<const double> rate_values) const;

  // Interval arithmetic: a range that holds the value of node `root` whenever every rate j lies
  // in rate_ranges[j] (rates().size() entries). Exact for each operation (monotone pieces of
  // abs, sqrt, log, exp, pow at their end points; division by a range holding 0 gives
  // [-inf, inf]), conservative for the whole expression when a rate appears more than once.
  // Used for guarantees: a value bounded from ranges each holding with high probability.
  [[nodiscard]] Interval evaluate_range(std::size_t root,
                                        std::span<const Interval> rate_ranges) const;
  // The range of value(): of the violation for constraints (lhs - rhs for <=, rhs - lhs for >=,
  // |lhs - rhs| for ==).
  [[nodiscard]] Interval value_range(std::span<const Interval> rate_ranges) const;

  // A constraint in epigraph form: its violation is the largest over pieces of
  // `plus_sign * node(plus) - node(minus)`, where the side that must stay below splits through
  // max(x, y, ...) (each argument) and abs(x) (x and -x) and the side that must stay above
  // through min(...): `max(|a|, b) <= c` is the pieces a - c, -a - c and b - c. An equality
  // gives lhs - rhs and rhs - lhs. Empty for an expression that is not a constraint.
  struct Piece {
    std::size_t plus = 0;
    double plus_sign = 1;
    std::size_t minus = 0;
  };
  [[nodiscard]] std::vector<Piece> pieces() const;

  // Node `root` as constant + sum coefs[j] * rate j, when it is affine in the rates (built of
  // constants, rates, +, -, negation, products with a constant factor and division by a
  // constant); empty otherwise.
  struct Affine {
    double constant = 0;
    std::vector<double> coefs;  // one per rate
  };
  [[nodiscard]] std::optional<Affine> affine(std::size_t root) const;

 private:
  std::string text_;
  std::vector<ExprNode> nodes_;
  std::vector<RateRef> rates_;
  Relation relation_ = Relation::kNone;
  std::size_t lhs_ = 0;
  std::size_t rhs_ = 0;
  friend class ExpressionParser;
};

// ---- binding expressions to data ---------------------------------------------------------------

// What a model predicted on one dataset. Fill what applies to its label kind:
//   binary / unlabelled: prob_positive (0/1 or probabilities) or, for hard predictions, positive
//                        (1 byte a row instead of 8: 1 = predicted positive, 0 = negative; read
//                        only when prob_positive is empty, the same rates as prob_positive with
//                        the same 0/1 values); optional scores for ranking metrics (when empty,
//                        prob_positive is used as the score: ranking metrics do not read
//                        positive);
//   multilabel:          predicted label sets (CSR);
//   multiclass:          predicted class per example.
struct Predictions {
  std::vector<double> prob_positive;
  std::vector<std::uint8_t> positive;
  // When not empty: positive holds indices into levels, row i's probability of positive being
  // levels[positive[i]] (Classifier::predict_levels).
  std::vector<double> levels;
  std::vector<double> scores;
  std::vector<std::int64_t> set_indptr;
  std::vector<std::int32_t> set_indices;
  std::vector<std::int32_t> classes;
};

struct NamedData {
  std::string name;  // referenced as rate@name; the first entry is the default
  const Dataset* data = nullptr;
  const Predictions* predictions = nullptr;
};

// Whether `name` is a ranking metric (roc_auc, auc, average_precision, ap): the rates that read
// Predictions::scores.
[[nodiscard]] bool is_ranking_metric(std::string_view name) noexcept;

// Value of one leaf. Throws NotFound (unknown dataset / metric / column), InvalidArgument
// (metric not defined for the dataset's label kind, undefined ranking metric on a slice).
[[nodiscard]] double evaluate_rate(const RateRef& rate, std::span<const NamedData> data);

struct ExpressionValue {
  std::string text;
  double value = 0;      // expression value, or lhs for a constraint
  double rhs = 0;        // constraints only
  double violation = 0;  // constraints only: Expression::value(); <= 0 when satisfied
  bool is_constraint = false;
  bool satisfied = true;
  Relation relation = Relation::kNone;  // the constraint's relation (kNone for an expression)
};
[[nodiscard]] ExpressionValue evaluate_expression(const Expression& expr,
                                                  std::span<const NamedData> data);

// `text` evaluated on `data` as eval, train's report and Python's evaluate() read it: group
// shorthands expanded over the data's columns (expand_group_shorthands), parsed, evaluated; the
// result's `text` is `text` as written. Throws what those three throw.
[[nodiscard]] ExpressionValue evaluate_text(std::string_view text, std::span<const NamedData> data);

// The constraint `text` made stricter by `margin` (>= 0): `lhs <= rhs` becomes
// `lhs <= (rhs) - margin` and `lhs >= rhs` becomes `lhs >= (rhs) + margin` (also with the aliases
// < and >), so that its violation is the old one plus margin. The relation is found outside
// brackets, parentheses and quotes. Throws InvalidArgument for text that is not a constraint, an
// equality (==) or a margin that is negative or not finite.
[[nodiscard]] std::string tighten_constraint(std::string_view text, double margin);

// The text of `expression` with every rate that names no dataset naming `dataset` instead (for a
// problem whose rows are split over two datasets, train_two_dataset), fully parenthesised, each
// constant in its shortest round-trip form, so that Expression::parse reads it back.
[[nodiscard]] std::string with_default_dataset(const Expression& expression,
                                               std::string_view dataset);
// The text of `expression` with each rate's dataset turned into a slice condition `column=NAME`
// (NAME: the dataset the rate names, or `default_dataset`), for the rows of several datasets
// pooled into one that tags each row with its dataset in `column` (train_guaranteed over
// several datasets); written as with_default_dataset writes.
[[nodiscard]] std::string with_datasets_as_slices(const Expression& expression,
                                                  std::string_view column,
                                                  std::string_view default_dataset);

// ---- group shorthands (docs/expressions.md, "Every group of a column") ------------------------

// The values of a column, for the shorthands: (dataset name, "" = the first; column name) ->
// the values the column takes there, in order of first appearance. Throws NotFound for an
// unknown dataset or column.
using ColumnLevels =
    std::function<std::vector<std::string>(std::string_view dataset, std::string_view column)>;

// Rewrites the group shorthands of `text` into plain expressions over every value v1..vk of a
// column (missing values excluded), before Expression::parse:
//   parity(RATE, COL)    ->  max(abs(RATE[COL=v1] - RATE[COL=v2]), abs(RATE[COL=v1] - ...), ...)
//                            (every pair once), so `parity(ppr, sex) <= 0.01` bounds every
//                            pairwise gap and trains as k(k-1) linear constraints;
//   max_over(RATE, COL)  ->  max(RATE[COL=v1], ..., RATE[COL=vk])  (the worst group);
//   min_over(RATE, COL)  ->  min(RATE[COL=v1], ..., RATE[COL=vk]).
// RATE is one rate, `name[:param][@dataset][[slice]]` (its slice conditions are kept, its
// dataset gives the levels); COL a column name, quoted if needed. Text without shorthands comes
// back unchanged. Throws ParseError (a malformed call), InvalidArgument (a column with too few
// values: parity needs two) and what `levels` throws.
//
// ParityForm::kSpread writes parity instead as (max(RATE[COL=v1], ...) - min(RATE[COL=v1], ...)):
// the same value, to the bit (the largest gap is the largest rate minus the smallest, and
// rounding is monotone), from 2 k rates instead of k (k - 1) / 2 gaps. It does not split into
// linear constraints (Expression::pieces): evaluation (evaluate_text), and training by the
// cutting-plane solver, which writes it with two auxiliary variables (FunctionInfo::spread).
// ParityForm::kTraining: pairs over at most kPairwiseParityValues values, the spread beyond.
enum class ParityForm { kPairs, kSpread, kTraining };
inline constexpr std::size_t kPairwiseParityValues = 16;
[[nodiscard]] std::string expand_group_shorthands(std::string_view text, const ColumnLevels& levels,
                                                  ParityForm parity = ParityForm::kPairs);
// The same with the levels of named data (the first entry is the default dataset).
[[nodiscard]] std::string expand_group_shorthands(std::string_view text,
                                                  std::span<const NamedData> data,
                                                  ParityForm parity = ParityForm::kPairs);
// The slice columns `text` names: the columns of its slice conditions and of its group
// shorthands, in order of first appearance (a reader can keep only these: ReadOptions::
// keep_columns). Throws what expand_group_shorthands and Expression::parse throw.
[[nodiscard]] std::vector<std::string> slice_columns(std::string_view text);
// The values column `column` of `data` takes (levels with at least one row, in order of first
// appearance). Throws NotFound listing the columns.
[[nodiscard]] std::vector<std::string> column_levels(const Dataset& data, std::string_view column);

}  // namespace rateopt
