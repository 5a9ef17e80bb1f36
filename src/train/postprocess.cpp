// Post-processing a fixed score into randomised group thresholds by one LP (Hardt, Price &
// Srebro 2016). See rateopt/postprocess.hpp and docs/train.md ("Post-processing").
#include "rateopt/postprocess.hpp"

#include <fmt/ranges.h>

#include <ClpSimplex.hpp>
#include <CoinHelperFunctions.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "common/check.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/expr.hpp"
#include "train/lp_limits.hpp"

namespace rateopt {

namespace {

constexpr double kDust = 1e-13;        // LP entries below this are rounding noise (shrink.cpp)
constexpr double kZeroWeight = 1e-12;  // threshold weights below this are dropped

// The LP in column form: per threshold column its objective coefficient, its group (simplex
// row) and its constraint coefficients; constraint j is sum_c a_jc pi_c <= rhs[j].
struct ThresholdLp {
  std::size_t groups = 0, constraints = 0;
  std::vector<double> cost;
  std::vector<std::size_t> group;
  std::vector<double> a;  // column-major, constraints entries per column
  std::vector<double> rhs;
  double cost_constant = 0;
};

// Solves min cost.pi (or, with minimize_violation, min v) s.t. per group sum pi = 1 and
// A pi - v <= rhs, pi >= 0, v in [v_lo, v_hi] (v only when with_v). Returns the basic solution
// (pi, then v) or nothing when CLP does not prove optimality.
std::optional<std::vector<double>> solve(const ThresholdLp& lp, bool with_v,
                                         bool minimize_violation, double v_lo, double v_hi) {
  const std::size_t n = lp.cost.size(), m = lp.constraints;
  const std::size_t cols = n + (with_v ? 1 : 0), rows = lp.groups + m;
  std::vector<CoinBigIndex> start(cols + 1, 0);
  std::vector<int> index;
  std::vector<double> value;
  index.reserve(n * (m + 1));
  value.reserve(n * (m + 1));
  for (std::size_t c = 0; c < n; ++c) {
    index.push_back(static_cast<int>(lp.group[c]));
    value.push_back(1.0);
    for (std::size_t j = 0; j < m; ++j) {
      const double v = lp.a[c * m + j];
      if (std::fabs(v) > kDust) {
        index.push_back(static_cast<int>(lp.groups + j));
        value.push_back(v);
      }
    }
    start[c + 1] = static_cast<CoinBigIndex>(index.size());
  }
  if (with_v) {
    for (std::size_t j = 0; j < m; ++j) {
      index.push_back(static_cast<int>(lp.groups + j));
      value.push_back(-1.0);
    }
    start[n + 1] = static_cast<CoinBigIndex>(index.size());
  }
  std::vector<double> col_lo(cols, 0.0), col_hi(cols, COIN_DBL_MAX), obj(cols, 0.0);
  if (!minimize_violation)
    for (std::size_t c = 0; c < n; ++c) obj[c] = lp.cost[c];
  if (with_v) {
    col_lo[n] = v_lo;
    col_hi[n] = v_hi;
    if (minimize_violation) obj[n] = 1.0;
  }
  std::vector<double> row_lo(rows), row_hi(rows);
  for (std::size_t g = 0; g < lp.groups; ++g) row_lo[g] = row_hi[g] = 1.0;
  for (std::size_t j = 0; j < m; ++j) {
    row_lo[lp.groups + j] = -COIN_DBL_MAX;
    row_hi[lp.groups + j] = lp.rhs[j];
  }
  ClpSimplex simplex;
  simplex.setLogLevel(0);
  simplex.loadProblem(static_cast<int>(cols), static_cast<int>(rows), start.data(), index.data(),
                      value.data(), col_lo.data(), col_hi.data(), obj.data(), row_lo.data(),
                      row_hi.data());
  // Unscaled (scaled solves were found to miss the optimum of pool LPs; shrink.cpp), with tight
  // tolerances: the rules must reproduce the optimum to 1e-9.
  simplex.scaling(0);
  simplex.setPrimalTolerance(1e-10);
  simplex.setDualTolerance(1e-10);
  limit_lp(simplex);
  simplex.primal();
  if (!simplex.isProvenOptimal()) return std::nullopt;
  const double* x = simplex.getColSolution();
  return std::vector<double>(x, x + cols);
}

// "all" or "[a, b]" for messages.
std::string key_text(const std::vector<std::string>& key) {
  return key.empty() ? std::string("all rows") : fmt::format("[{}]", fmt::join(key, ", "));
}

// Checks the problem is linear in rates; returns the objective's and constraints' affine forms.
std::vector<const AffineForm*> linear_forms(const RateProblem& problem) {
  std::vector<const AffineForm*> forms;
  const auto take = [&](const FunctionInfo& f, std::string_view what) {
    RATEOPT_CHECK(
        (f.kind == FunctionKind::kLinear || f.kind == FunctionKind::kConstant) &&
            f.linear.has_value(),
        "post-processing solves an LP and takes only problems linear in rates; the {} '{}' is {} "
        "({}); use another --solver (e.g. auto) for it",
        what, f.text, to_string(f.kind), f.shape);
    forms.push_back(&*f.linear);
  };
  take(problem.objective(), "objective");
  for (const FunctionInfo& c : problem.constraints()) take(c, "constraint");
  return forms;
}

// Threshold of cut c of a group whose scores, sorted decreasingly, are `s`: s_i > t exactly for
// the top c rows (c is 0, n, or a boundary between distinct scores).
double cut_threshold(std::span<const double> s, std::size_t c) {
  const std::size_t n = s.size();
  if (c == 0) return s[0] + std::max(1.0, std::fabs(s[0]));
  if (c == n) return s[n - 1] - std::max(1.0, std::fabs(s[n - 1]));
  const double hi = s[c - 1], lo = s[c];
  const double t = lo + 0.5 * (hi - lo);
  return t < hi ? t : lo;  // adjacent doubles: no value strictly between
}

// The rows of every dataset as the LP reads them: each row's group (an index into `keys`), its
// score `s` and each function's coefficient `u` (u[f * total + r]); rows in the order of the
// datasets, a dataset's rows in row order.
struct LpRows {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::uint32_t> group_of;
  std::vector<double> s;
  std::vector<double> u;
  std::vector<std::size_t> dataset_rows;  // rows of each dataset
};

// Over MPI ranks: every rank's rows on every rank (`columns`: the group columns), in the order one
// process holding all of them reads them (a dataset's rows rank after rank; groups numbered by
// first appearance in that order), so that every rank builds the LP that process builds, bit for
// bit. Each rank sends its keys (length-prefixed values) and per dataset its rows as doubles:
// group, score, coefficients.
LpRows lp_rows_over_ranks(const LpRows& mine, std::size_t columns, std::size_t functions) {
  std::string out;
  const auto put = [&](const void* p, std::size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  const auto put_size = [&](std::size_t v) {
    const auto x = static_cast<std::uint64_t>(v);
    put(&x, sizeof x);
  };
  put_size(mine.keys.size());
  for (const std::vector<std::string>& key : mine.keys)
    for (const std::string& v : key) {
      put_size(v.size());
      put(v.data(), v.size());
    }
  const std::size_t local_total = mine.s.size();
  std::size_t first = 0;
  for (const std::size_t rows : mine.dataset_rows) {
    put_size(rows);
    for (std::size_t r = first; r < first + rows; ++r) {
      const auto g = static_cast<double>(mine.group_of[r]);
      put(&g, sizeof g);
      put(&mine.s[r], sizeof(double));
      for (std::size_t f = 0; f < functions; ++f) put(&mine.u[f * local_total + r], sizeof(double));
    }
    first += rows;
  }
  const std::vector<std::string> ranks = gather_over_ranks(out);

  // Decode: per rank its keys and where each dataset's rows start.
  struct Part {
    const std::string* bytes = nullptr;
    std::size_t at = 0;
    std::vector<std::vector<std::string>> keys;
  };
  std::vector<Part> parts(ranks.size());
  const auto get = [](Part& p, void* dst, std::size_t n) {
    RATEOPT_CHECK(p.at + n <= p.bytes->size(), "post-processing: a rank's rows are truncated");
    std::memcpy(dst, p.bytes->data() + p.at, n);
    p.at += n;
  };
  const auto get_size = [&](Part& p) {
    std::uint64_t x = 0;
    get(p, &x, sizeof x);
    return static_cast<std::size_t>(x);
  };
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    Part& p = parts[k];
    p.bytes = &ranks[k];
    p.keys.resize(get_size(p));
    for (std::vector<std::string>& key : p.keys) {
      key.resize(columns);
      for (std::string& v : key) {
        v.resize(get_size(p));
        get(p, v.data(), v.size());
      }
    }
  }
  // Rows in order: dataset after dataset, rank after rank; values first, coefficients laid out by
  // function once the total is known.
  LpRows all;
  std::map<std::vector<std::string>, std::uint32_t> index;
  std::vector<double> rows_u;  // row-major [row][function]
  for (std::size_t d = 0; d < mine.dataset_rows.size(); ++d) {
    std::size_t dataset_total = 0;
    for (Part& p : parts) {
      const std::size_t rows = get_size(p);
      dataset_total += rows;
      for (std::size_t r = 0; r < rows; ++r) {
        double g = 0;
        double score = 0;
        get(p, &g, sizeof g);
        get(p, &score, sizeof score);
        const std::vector<std::string>& key = p.keys.at(static_cast<std::size_t>(g));
        auto [it, added] = index.try_emplace(key, static_cast<std::uint32_t>(all.keys.size()));
        if (added) all.keys.push_back(key);
        all.group_of.push_back(it->second);
        all.s.push_back(score);
        for (std::size_t f = 0; f < functions; ++f) {
          double v = 0;
          get(p, &v, sizeof v);
          rows_u.push_back(v);
        }
      }
    }
    all.dataset_rows.push_back(dataset_total);
  }
  const std::size_t total = all.s.size();
  all.u.resize(functions * total);
  for (std::size_t r = 0; r < total; ++r)
    for (std::size_t f = 0; f < functions; ++f) all.u[f * total + r] = rows_u[r * functions + f];
  return all;
}

}  // namespace

std::vector<std::string> slice_columns(const RateProblem& problem) {
  std::vector<std::string> columns;
  const auto add = [&](const std::string& text) {
    const Expression e =
        Expression::parse(expand_group_shorthands(text, [&](std::string_view, std::string_view c) {
          // Only the column names matter here: one stand-in value is enough.
          return std::vector<std::string>{std::string(c), std::string(c) + "'"};
        }));
    for (const RateRef& r : e.rates())
      for (const Condition& c : r.slice.conditions)
        if (std::find(columns.begin(), columns.end(), c.column) == columns.end())
          columns.push_back(c.column);
  };
  add(problem.spec().objective);
  for (const std::string& c : problem.spec().constraints) add(c);
  return columns;
}

PostprocessResult postprocess(const RateProblem& problem, const Classifier& base,
                              const PostprocessOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<const AffineForm*> forms = linear_forms(problem);
  const std::size_t m = forms.size() - 1;  // forms[0] is the objective (as minimised)

  // ---- the base score ----
  base.validate();
  RATEOPT_CHECK(base.group_rules.empty(),
                "the base model is already post-processed (kind '{}', group columns {}); give "
                "the scoring model it was made from",
                base.kind, fmt::join(base.group_columns, ", "));
  RATEOPT_CHECK(base.components.size() == 1,
                "the base model (kind '{}') has {} components; post-processing needs one linear "
                "score, e.g. a logistic regression model saved by `rateopt train`",
                base.kind, base.components.size());
  const LinearModel& score = base.components.front();
  const std::span<const TrainingData> data = problem.data();
  const std::size_t d = score.weights.size();
  for (const TrainingData& td : data) {
    const FeatureMatrix& x = td.data->features();
    RATEOPT_CHECK(x.cols() == d || (x.is_sparse() && x.cols() < d),
                  "the base model has {} weights but dataset '{}' has {} features; read the data "
                  "with the base model's feature encoding",
                  d, td.name, x.cols());
  }

  // ---- groups ----
  PostprocessResult result;
  result.group_columns =
      options.group_columns.empty() ? slice_columns(problem) : options.group_columns;
  const std::vector<std::string>& gcols = result.group_columns;
  std::vector<std::size_t> offset(data.size() + 1, 0);
  for (std::size_t k = 0; k < data.size(); ++k)
    offset[k + 1] = offset[k] + data[k].data->num_rows();
  LpRows lp_rows;
  std::size_t total = offset.back();
  std::vector<std::uint32_t>& group_of = lp_rows.group_of;
  group_of.resize(total);
  std::map<std::vector<std::string>, std::uint32_t> group_index;
  std::vector<std::vector<std::string>>& keys = lp_rows.keys;
  for (std::size_t k = 0; k < data.size(); ++k) {
    const Dataset& ds = *data[k].data;
    std::vector<const Column*> cols;
    for (const std::string& name : gcols) {
      const Column* c = ds.find_column(name);
      if (c == nullptr) {
        std::vector<std::string> have;
        for (const Column& col : ds.columns()) have.push_back(col.name);
        throw NotFound(fmt::format(
            "group column '{}' is not a column of dataset '{}' (its columns: {}); read it as a "
            "group column (--groups)",
            name, data[k].name,
            have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", "))));
      }
      cols.push_back(c);
    }
    std::vector<std::string> key(gcols.size());
    for (std::size_t i = 0; i < ds.num_rows(); ++i) {
      for (std::size_t j = 0; j < cols.size(); ++j) {
        const std::int32_t code = cols[j]->codes[i];
        if (code < 0)
          throw NotFound(fmt::format("row {} of dataset '{}' has no value in group column '{}'", i,
                                     data[k].name, gcols[j]));
        key[j] = cols[j]->levels[static_cast<std::size_t>(code)];
      }
      auto [it, added] = group_index.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
      if (added) keys.push_back(key);
      group_of[offset[k] + i] = it->second;
    }
  }

  // ---- scores and per-row coefficients of every function ----
  std::vector<double>& s = lp_rows.s;
  s.resize(total);
  for (std::size_t k = 0; k < data.size(); ++k)
    score.scores(data[k].data->features(),
                 std::span<double>(s).subspan(offset[k], data[k].data->num_rows()),
                 options.n_threads);
  // u[f * total + r]: d(function f) / d(prediction of row r), from the atoms holding the row.
  const std::span<const Atom> atoms = problem.atoms();
  std::vector<std::vector<std::pair<std::size_t, double>>> atom_fn(atoms.size());
  for (std::size_t f = 0; f < forms.size(); ++f)
    for (const AtomTerm& t : forms[f]->terms) atom_fn[t.atom].emplace_back(f, t.coef);
  std::vector<double>& u = lp_rows.u;
  u.assign(forms.size() * total, 0.0);
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    if (atom_fn[a].empty()) continue;
    const Atom& atom = atoms[a];
    atom.rows.for_each([&](std::size_t p, std::uint32_t row) {
      const std::size_t r = offset[atom.dataset] + row;
      for (const auto& [f, coef] : atom_fn[a]) u[f * total + r] += coef * atom.coef_at(p);
    });
  }
  if (is_distributed()) {
    for (const TrainingData& td : data) lp_rows.dataset_rows.push_back(td.data->num_rows());
    lp_rows = lp_rows_over_ranks(lp_rows, gcols.size(), forms.size());
    total = lp_rows.s.size();
  }
  const std::size_t num_groups = keys.size();
  RATEOPT_CHECK(num_groups > 0, "post-processing: the problem's datasets have no rows");

  // ---- per group: rows by decreasing score, cuts, columns ----
  std::vector<std::vector<std::size_t>> members(num_groups);
  for (std::size_t r = 0; r < total; ++r) members[group_of[r]].push_back(r);
  ThresholdLp lp;
  lp.groups = num_groups;
  lp.constraints = m;
  lp.cost_constant = forms[0]->constant;
  for (std::size_t j = 0; j < m; ++j) lp.rhs.push_back(-forms[j + 1]->constant);
  std::vector<std::size_t> column_cut;  // the cut of each column
  std::vector<std::vector<double>> sorted_scores(num_groups);
  result.groups.resize(num_groups);
  for (std::size_t g = 0; g < num_groups; ++g) {
    std::vector<std::size_t>& rows = members[g];
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t x, std::size_t y) { return s[x] > s[y]; });
    std::vector<double>& sg = sorted_scores[g];
    for (std::size_t r : rows) sg.push_back(s[r]);
    std::vector<double> prefix(forms.size(), 0.0);
    const auto add_column = [&](std::size_t c) {
      lp.cost.push_back(prefix[0]);
      lp.group.push_back(g);
      for (std::size_t j = 0; j < m; ++j) lp.a.push_back(prefix[j + 1]);
      column_cut.push_back(c);
      ++result.groups[g].cuts;
    };
    add_column(0);
    for (std::size_t c = 1; c <= rows.size(); ++c) {
      for (std::size_t f = 0; f < forms.size(); ++f) prefix[f] += u[f * total + rows[c - 1]];
      if (c == rows.size() || sg[c - 1] > sg[c]) add_column(c);
    }
    result.groups[g].key = keys[g];
    result.groups[g].rows = rows.size();
  }
  result.lp_columns = lp.cost.size();

  // ---- solve: LP(0), else the smallest violation budget, then the objective under it ----
  std::optional<std::vector<double>> x = solve(lp, false, false, 0, 0);
  result.status = Termination::kConverged;
  if (!x) {
    const auto phase1 = solve(lp, true, true, 0, COIN_DBL_MAX);
    RATEOPT_CHECK(phase1.has_value(), "post-processing: the violation LP failed (CLP)");
    const double v = (*phase1)[lp.cost.size()];
    result.violation_budget = v;
    result.status = Termination::kInfeasible;
    const double slack = std::max(1e-12, 1e-9 * std::fabs(v));
    x = solve(lp, true, false, v + slack, v + slack);
    if (!x) x = phase1;
  }
  result.lp_objective = lp.cost_constant;
  for (std::size_t c = 0; c < lp.cost.size(); ++c) result.lp_objective += lp.cost[c] * (*x)[c];

  // ---- the rules ----
  Classifier& clf = result.classifier;
  clf.kind = "group_threshold";
  clf.components = {score};
  clf.mixture = {1.0};
  clf.best = 0;
  clf.link = Link::kThreshold;
  clf.encoding = base.encoding;
  clf.group_columns = gcols;
  clf.group_rules.resize(num_groups);
  std::vector<double> group_sum(num_groups, 0.0);
  for (std::size_t c = 0; c < lp.cost.size(); ++c)
    if ((*x)[c] > kZeroWeight) group_sum[lp.group[c]] += (*x)[c];
  // Columns of a group are in increasing cut order, i.e. decreasing threshold: walk backwards.
  for (std::size_t c = lp.cost.size(); c-- > 0;) {
    const std::size_t g = lp.group[c];
    if (!((*x)[c] > kZeroWeight)) continue;
    GroupRule& rule = clf.group_rules[g];
    rule.thresholds.push_back(cut_threshold(sorted_scores[g], column_cut[c]));
    rule.weights.push_back((*x)[c] / group_sum[g]);
  }
  for (std::size_t g = 0; g < num_groups; ++g) {
    GroupRule& rule = clf.group_rules[g];
    RATEOPT_CHECK(!rule.thresholds.empty(), "post-processing: group {} has no threshold (CLP)",
                  key_text(keys[g]));
    rule.key = keys[g];
    // Exact sum 1 (validate's tolerance is 1e-9; the division leaves ~1e-16).
    double sum = 0;
    for (double w : rule.weights) sum += w;
    rule.weights.back() += 1.0 - sum;
    rule.weights.back() = std::max(0.0, rule.weights.back());
  }
  nlohmann::json opts{{"learner", "postprocess"},
                      {"base_kind", base.kind},
                      {"group_columns", gcols},
                      {"objective", problem.spec().objective},
                      {"maximize", problem.spec().maximize},
                      {"constraints", problem.spec().constraints}};
  clf.options_json = opts.dump();
  clf.validate();

  // ---- exact training values of the saved rules ----
  const auto values = [&](PredictMode mode) {
    std::vector<std::vector<double>> preds(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      preds[k].resize(data[k].data->num_rows());
      clf.predict(*data[k].data, mode, preds[k], 0, options.n_threads);
    }
    return problem.evaluate(problem.atom_values(preds));
  };
  result.stochastic = values(PredictMode::kProbability);
  result.deterministic = values(PredictMode::kDeterministic);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace rateopt
