// Post-processing a fixed score into randomised group thresholds by one LP (Hardt, Price &
// Srebro 2016). See rateopt/postprocess.hpp and docs/train.md ("Post-processing").
#include "rateopt/postprocess.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/check.hpp"
#include "common/random.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/expr.hpp"
#include "train/threshold_lp.hpp"

namespace rateopt {

namespace {

using detail::kZeroWeight;
using detail::ThresholdLp;

// "all" or "[a, b]" for messages.
std::string key_text(const std::vector<std::string>& key) {
  return key.empty() ? std::string("all rows") : fmt::format("[{}]", fmt::join(key, ", "));
}

// The LP's functions: the objective (as minimised) and the constraints, affine in atoms.
struct LpForms {
  // [0] the objective, or with `den` the numerator of its ratio (coef * num); then one per
  // constraint, a ratio's linearised (constant + coef * num / den <= 0 as
  // constant * den + coef * num <= 0: den >= 0).
  std::vector<AffineForm> forms;
  std::optional<AffineForm> den;  // a ratio objective's denominator (Charnes-Cooper)
  double ratio_constant = 0;      // and its constant: objective = constant + forms[0] / den
};

AffineForm combined(const AffineForm& a, double ca, const AffineForm& b, double cb) {
  std::map<std::size_t, double> terms;
  for (const AtomTerm& t : a.terms) terms[t.atom] += ca * t.coef;
  for (const AtomTerm& t : b.terms) terms[t.atom] += cb * t.coef;
  AffineForm out;
  out.constant = ca * a.constant + cb * b.constant;
  for (const auto& [atom, coef] : terms)
    if (coef != 0) out.terms.push_back({atom, coef});
  return out;
}

// Checks the problem is one post-processing solves (functions linear in rates, or a single
// ratio rate plus a constant: a fractional objective, or a ratio constraint) and returns its
// forms.
LpForms lp_forms(const RateProblem& problem) {
  LpForms out;
  const auto take = [&](const FunctionInfo& f, std::string_view what) {
    if ((f.kind == FunctionKind::kLinear || f.kind == FunctionKind::kConstant) && f.linear) {
      out.forms.push_back(*f.linear);
      return;
    }
    RATEOPT_CHECK(f.ratio.has_value(),
                  "post-processing solves an LP and takes functions linear in rates or one ratio "
                  "rate (e.g. f1, precision) plus a constant; the {} '{}' is {} ({}); use another "
                  "--solver (e.g. auto) for it",
                  what, f.text, to_string(f.kind), f.shape);
    const FunctionInfo::Ratio& r = *f.ratio;
    if (out.forms.empty()) {  // the objective: constant + coef * num / den
      RATEOPT_CHECK(r.den.constant > 0,
                    "post-processing: the objective '{}' divides by a rate that is zero for some "
                    "classifiers (e.g. precision, with no positive prediction); use f1, "
                    "jaccard or a linear objective, or another --solver",
                    f.text);
      out.forms.push_back(combined(r.num, r.coef, AffineForm{}, 0));
      out.den = r.den;
      out.ratio_constant = r.constant;
    } else {
      out.forms.push_back(combined(r.den, r.constant, r.num, r.coef));
    }
  };
  take(problem.objective(), "objective");
  for (const FunctionInfo& c : problem.constraints()) take(c, "constraint");
  // A ratio constraint is linearised for den >= 0; at den = 0 (e.g. a group predicting nobody
  // positive) its value is the metric's convention, which may break it: then den must be at
  // least one row's worth (the least coefficient of a row in it).
  const std::vector<double> none(problem.atoms().size(), 0.0);
  const ProblemValues at_zero = problem.evaluate(none);
  for (std::size_t j = 0; j < problem.constraints().size(); ++j) {
    const FunctionInfo& c = problem.constraints()[j];
    if (!c.ratio || at_zero.constraints[j] <= 0) continue;
    double least = std::numeric_limits<double>::infinity();
    for (const AtomTerm& t : c.ratio->den.terms) {
      const Atom& atom = problem.atoms()[t.atom];
      if (atom.rows.empty() || t.coef <= 0) continue;
      double row = atom.unit_coef;
      if (!atom.coef.empty()) {
        row = std::numeric_limits<double>::infinity();
        for (const double v : atom.coef)
          if (v > 0) row = std::min(row, v);
      }
      least = std::min(least, t.coef * row);
    }
    if (!std::isfinite(least)) continue;
    AffineForm floor = combined(c.ratio->den, -1.0, AffineForm{}, 0);
    floor.constant += least;  // least - den <= 0
    out.forms.push_back(std::move(floor));
  }
  return out;
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

// Row types: a type is one distinct list of (atom row, coefficient) pairs -- a row's contributions
// to the atoms the functions use -- so that the rows of a type enter every atom alike. Numbered in
// order of first appearance.
class TypeTable {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return start_.size() - 1; }
  [[nodiscard]] std::span<const std::uint32_t> atoms(std::size_t t) const {
    return {atom_.data() + start_[t], start_[t + 1] - start_[t]};
  }
  [[nodiscard]] std::span<const double> coefs(std::size_t t) const {
    return {coef_.data() + start_[t], start_[t + 1] - start_[t]};
  }
  std::uint32_t intern(std::span<const std::uint32_t> atoms, std::span<const double> coefs) {
    std::uint64_t h = atoms.size();
    for (std::size_t k = 0; k < atoms.size(); ++k) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &coefs[k], sizeof bits);
      h = detail::mix64(h ^ atoms[k], bits);
    }
    std::vector<std::uint32_t>& same = by_hash_[h];
    for (const std::uint32_t t : same) {
      const auto ta = this->atoms(t);
      const auto tc = this->coefs(t);
      if (std::equal(atoms.begin(), atoms.end(), ta.begin(), ta.end()) &&
          std::equal(coefs.begin(), coefs.end(), tc.begin(), tc.end()))
        return t;
    }
    const auto t = static_cast<std::uint32_t>(size());
    atom_.insert(atom_.end(), atoms.begin(), atoms.end());
    coef_.insert(coef_.end(), coefs.begin(), coefs.end());
    start_.push_back(atom_.size());
    same.push_back(t);
    return t;
  }

 private:
  std::vector<std::size_t> start_{0};
  std::vector<std::uint32_t> atom_;
  std::vector<double> coef_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash_;
};

// The rows of every dataset as the LP reads them: each row's group (an index into `keys`), score
// and type; rows in the order of the datasets, a dataset's rows in row order.
struct LpRows {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::uint32_t> group_of;
  std::vector<double> s;
  std::vector<std::uint32_t> type_of;
  TypeTable types;
  std::vector<std::size_t> dataset_rows;  // rows of each dataset
};

// Over MPI ranks: every rank's rows on every rank (`columns`: the group columns), in the order one
// process holding all of them reads them (a dataset's rows rank after rank; groups and types
// numbered by first appearance in that order), so that every rank builds the LP that process
// builds, bit for bit. Each rank sends its keys (length-prefixed values), its types and per
// dataset its rows (group, type: 4 bytes each; score: 8).
LpRows lp_rows_over_ranks(const LpRows& mine, std::size_t columns) {
  std::string out;
  const auto put = [&](const void* p, std::size_t n) {
    if (n > 0) out.append(static_cast<const char*>(p), n);  // p may be null when n is 0
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
  put_size(mine.types.size());
  for (std::size_t t = 0; t < mine.types.size(); ++t) {
    put_size(mine.types.atoms(t).size());
    put(mine.types.atoms(t).data(), mine.types.atoms(t).size_bytes());
    put(mine.types.coefs(t).data(), mine.types.coefs(t).size_bytes());
  }
  std::size_t first = 0;
  for (const std::size_t rows : mine.dataset_rows) {
    put_size(rows);
    for (std::size_t r = first; r < first + rows; ++r) {
      put(&mine.group_of[r], sizeof(std::uint32_t));
      put(&mine.type_of[r], sizeof(std::uint32_t));
      put(&mine.s[r], sizeof(double));
    }
    first += rows;
  }
  const std::vector<std::string> ranks = gather_over_ranks(out);

  // Decode: per rank its keys, its types (as global type numbers) and where its rows start.
  struct Part {
    const std::string* bytes = nullptr;
    std::size_t at = 0;
    std::vector<std::vector<std::string>> keys;
    std::vector<std::uint32_t> types;  // local type -> global type
  };
  std::vector<Part> parts(ranks.size());
  const auto get = [](Part& p, void* dst, std::size_t n) {
    RATEOPT_CHECK(p.at + n <= p.bytes->size(), "post-processing: a rank's rows are truncated");
    if (n == 0) return;  // dst may be null
    std::memcpy(dst, p.bytes->data() + p.at, n);
    p.at += n;
  };
  const auto get_size = [&](Part& p) {
    std::uint64_t x = 0;
    get(p, &x, sizeof x);
    return static_cast<std::size_t>(x);
  };
  LpRows all;
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
    p.types.resize(get_size(p));
    for (std::uint32_t& global : p.types) {
      const std::size_t n = get_size(p);
      std::vector<std::uint32_t> atoms(n);
      std::vector<double> coefs(n);
      get(p, atoms.data(), n * sizeof(std::uint32_t));
      get(p, coefs.data(), n * sizeof(double));
      global = all.types.intern(atoms, coefs);
    }
  }
  // Types are numbered rank after rank above, not in row order: renumbered below by first
  // appearance among the rows, as one process numbers them.
  std::vector<std::uint32_t> renumber(all.types.size(), std::numeric_limits<std::uint32_t>::max());
  std::vector<std::uint32_t> order;  // global type of each new number
  std::map<std::vector<std::string>, std::uint32_t> index;
  for (std::size_t d = 0; d < mine.dataset_rows.size(); ++d) {
    std::size_t dataset_total = 0;
    for (Part& p : parts) {
      const std::size_t rows = get_size(p);
      dataset_total += rows;
      for (std::size_t r = 0; r < rows; ++r) {
        std::uint32_t g = 0;
        std::uint32_t t = 0;
        double score = 0;
        get(p, &g, sizeof g);
        get(p, &t, sizeof t);
        get(p, &score, sizeof score);
        const std::vector<std::string>& key = p.keys.at(g);
        auto [it, added] = index.try_emplace(key, static_cast<std::uint32_t>(all.keys.size()));
        if (added) all.keys.push_back(key);
        all.group_of.push_back(it->second);
        std::uint32_t& n = renumber[p.types.at(t)];
        if (n == std::numeric_limits<std::uint32_t>::max()) {
          n = static_cast<std::uint32_t>(order.size());
          order.push_back(p.types[t]);
        }
        all.type_of.push_back(n);
        all.s.push_back(score);
      }
    }
    all.dataset_rows.push_back(dataset_total);
  }
  TypeTable numbered;
  for (const std::uint32_t t : order) (void)numbered.intern(all.types.atoms(t), all.types.coefs(t));
  all.types = std::move(numbered);
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
                              const PostprocessOptions& options,
                              std::span<const double> base_scores) {
  const auto start = std::chrono::steady_clock::now();
  for (const FunctionInfo& c : problem.constraints())
    RATEOPT_CHECK(!c.spread,
                  "post-processing takes parity written pairwise, and '{}' is one spread "
                  "constraint; build the problem with ProblemSpec::parity = ParityForm::kPairs "
                  "(pairwise_parity(spec))",
                  c.text);
  const LpForms lp_functions = lp_forms(problem);
  const std::vector<AffineForm>& forms = lp_functions.forms;
  const std::size_t m = forms.size() - 1;  // forms[0] is the objective (as minimised)

  // ---- the base score ----
  base.validate();
  RATEOPT_CHECK(base.group_rules.empty(),
                "the base model is already post-processed (kind '{}', group columns {}); give "
                "the scoring model it was made from",
                base.kind, fmt::join(base.group_columns, ", "));
  RATEOPT_CHECK(base.components.size() == 1,
                "the base model (kind '{}') has {} components; post-processing needs one score, "
                "e.g. a logistic regression or boosted-tree model saved by `rateopt train`",
                base.kind, base.components.size());
  const ScoreModel& score = base.components.front();
  const std::span<const TrainingData> data = problem.data();
  const std::size_t d = score.num_features();
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

  // ---- scores, and each row's type: its contributions to the atoms the functions use ----
  std::vector<double>& s = lp_rows.s;
  if (!base_scores.empty()) {
    RATEOPT_CHECK(base_scores.size() == total,
                  "base_scores has {} scores for the problem's {} rows (one per row, its datasets "
                  "stacked in order)",
                  base_scores.size(), total);
    s.assign(base_scores.begin(), base_scores.end());
  } else {
    s.resize(total);
    for (std::size_t k = 0; k < data.size(); ++k)
      score.scores(data[k].data->features(),
                   std::span<double>(s).subspan(offset[k], data[k].data->num_rows()),
                   options.n_threads);
  }
  result.training_scores = s;  // this process's rows (lp_rows gathers every rank's below)
  const std::span<const Atom> atoms = problem.atoms();
  constexpr auto kUnused = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> atom_row(atoms.size(), kUnused);  // atom -> LP atom row
  std::vector<std::size_t> used;                               // LP atom row -> atom
  const auto use = [&](const AffineForm& f) {
    for (const AtomTerm& t : f.terms)
      if (atom_row[t.atom] == kUnused) {
        atom_row[t.atom] = static_cast<std::uint32_t>(used.size());
        used.push_back(t.atom);
      }
  };
  for (const AffineForm& f : forms) use(f);
  if (lp_functions.den) use(*lp_functions.den);
  {
    // Each row's (atom row, coefficient) list, atom rows increasing, then its type.
    std::vector<std::size_t> first(total + 1, 0);
    for (const std::size_t a : used)
      atoms[a].rows.for_each(
          [&](std::size_t, std::uint32_t row) { ++first[offset[atoms[a].dataset] + row + 1]; });
    for (std::size_t r = 0; r < total; ++r) first[r + 1] += first[r];
    std::vector<std::uint32_t> member_atom(first.back());
    std::vector<double> member_coef(first.back());
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (std::size_t k = 0; k < used.size(); ++k) {
      const Atom& atom = atoms[used[k]];
      atom.rows.for_each([&](std::size_t p, std::uint32_t row) {
        const std::size_t at = next[offset[atom.dataset] + row]++;
        member_atom[at] = static_cast<std::uint32_t>(k);
        member_coef[at] = atom.coef_at(p);
      });
    }
    lp_rows.type_of.resize(total);
    for (std::size_t r = 0; r < total; ++r) {
      const std::size_t n = first[r + 1] - first[r];
      lp_rows.type_of[r] = lp_rows.types.intern({member_atom.data() + first[r], n},
                                                {member_coef.data() + first[r], n});
    }
  }
  if (is_distributed()) {
    for (const TrainingData& td : data) lp_rows.dataset_rows.push_back(td.data->num_rows());
    lp_rows = lp_rows_over_ranks(lp_rows, gcols.size());
    total = lp_rows.s.size();
  }
  const TypeTable& types = lp_rows.types;
  const std::vector<std::uint32_t>& type_of = lp_rows.type_of;
  const std::size_t num_groups = keys.size();
  RATEOPT_CHECK(num_groups > 0, "post-processing: the problem's datasets have no rows");

  // ---- the LP's atom rows, objective and constraints ----
  ThresholdLp lp;
  lp.groups = num_groups;
  lp.atoms = used.size();
  lp.constraints = m;
  lp.cost_constant = forms[0].constant;
  lp.atom_cost.assign(used.size(), 0.0);
  for (const AtomTerm& t : forms[0].terms) lp.atom_cost[atom_row[t.atom]] += t.coef;
  if (lp_functions.den) {  // Charnes-Cooper: min constant + (coef * num) / den
    lp.fractional = true;
    lp.t_cost = forms[0].constant;
    lp.cost_constant = lp_functions.ratio_constant;
    lp.den_atom.assign(used.size(), 0.0);
    for (const AtomTerm& t : lp_functions.den->terms) lp.den_atom[atom_row[t.atom]] += t.coef;
    lp.den_constant = lp_functions.den->constant;
  }
  for (std::size_t j = 0; j < m; ++j) {  // forms have one term per atom (normalized, combined)
    std::vector<AtomTerm>& terms = lp.rows.emplace_back();
    for (const AtomTerm& t : forms[j + 1].terms) terms.push_back({atom_row[t.atom], t.coef});
    lp.rhs.push_back(-forms[j + 1].constant);
  }

  // ---- per group: rows by decreasing score, cuts, the cuts kept, columns ----
  std::vector<std::vector<std::size_t>> members(num_groups);
  for (std::size_t r = 0; r < total; ++r) members[group_of[r]].push_back(r);
  std::vector<std::size_t> column_cut;  // the cut of each column
  // Deterministic mode: every cut is a column (the search needs them all), and the randomised
  // optimum (the price of determinism) is the LP over the hull vertices alone, the same optimum
  // from far fewer columns: those columns (increasing).
  std::vector<std::size_t> hull_columns;
  std::vector<std::vector<double>> sorted_scores(num_groups);
  result.groups.resize(num_groups);
  std::vector<std::int32_t> type_slot(types.size(), -1);
  std::vector<std::int32_t> atom_slot(used.size(), -1);
  for (std::size_t g = 0; g < num_groups; ++g) {
    std::vector<std::size_t>& rows = members[g];
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t x, std::size_t y) { return s[x] > s[y]; });
    std::vector<double>& sg = sorted_scores[g];
    for (const std::size_t r : rows) sg.push_back(s[r]);
    // The group's types that touch an atom, and the atoms they touch.
    std::vector<std::uint32_t> group_types, group_atoms;
    for (const std::size_t r : rows) {
      const std::uint32_t t = type_of[r];
      if (type_slot[t] >= 0 || types.atoms(t).empty()) continue;
      type_slot[t] = static_cast<std::int32_t>(group_types.size());
      group_types.push_back(t);
      for (const std::uint32_t a : types.atoms(t))
        if (atom_slot[a] < 0) {
          atom_slot[a] = static_cast<std::int32_t>(group_atoms.size());
          group_atoms.push_back(a);
        }
    }
    std::sort(group_atoms.begin(), group_atoms.end());
    for (std::size_t k = 0; k < group_atoms.size(); ++k)
      atom_slot[group_atoms[k]] = static_cast<std::int32_t>(k);
    // The cuts: none, all, and every boundary between distinct scores.
    std::vector<std::size_t> cuts{0};
    for (std::size_t c = 1; c <= rows.size(); ++c)
      if (c == rows.size() || sg[c - 1] > sg[c]) cuts.push_back(c);
    // The hull's vertices (every cut where it does not apply): the LP's columns, or in the
    // deterministic mode (every cut a column) the randomised optimum's.
    std::vector<char> hull(cuts.size(), 1);
    std::vector<std::array<std::uint64_t, 2>> points;
    if (options.hull && group_types.size() <= 2 && rows.size() < (std::size_t{1} << 32U)) {
      // Every atom value is linear in the counts of the group's (at most two) types among the
      // rows above a cut: only the vertices of those points' convex hull are needed (in the
      // deterministic mode, of a range of cuts: the search takes them all and the points).
      std::array<std::uint64_t, 2> count{0, 0};
      std::size_t c = 0;
      for (const std::size_t cut : cuts) {
        for (; c < cut; ++c) {
          const std::int32_t k = type_slot[type_of[rows[c]]];
          if (k >= 0) ++count[static_cast<std::size_t>(k)];
        }
        points.push_back(count);
      }
      detail::hull_vertices(points, hull);
    }
    if (options.deterministic) {
      lp.hull_group.push_back(points.empty() ? 0 : 1);
      lp.point.insert(lp.point.end(), points.begin(), points.end());
      lp.point.resize(lp.point.size() + cuts.size() - points.size());
    }
    std::vector<double> prefix(group_atoms.size(), 0.0);
    std::size_t c = 0;
    for (std::size_t k = 0; k < cuts.size(); ++k) {
      for (; c < cuts[k]; ++c) {
        const std::uint32_t t = type_of[rows[c]];
        const auto ta = types.atoms(t);
        const auto tc = types.coefs(t);
        for (std::size_t e = 0; e < ta.size(); ++e)
          prefix[static_cast<std::size_t>(atom_slot[ta[e]])] += tc[e];
      }
      if (!options.deterministic && hull[k] == 0) continue;
      if (options.deterministic && hull[k] != 0) hull_columns.push_back(lp.columns());
      lp.group.push_back(g);
      for (std::size_t e = 0; e < group_atoms.size(); ++e)
        if (prefix[e] != 0) {
          lp.entry_atom.push_back(group_atoms[e]);
          lp.entry_value.push_back(prefix[e]);
        }
      lp.start.push_back(lp.entry_atom.size());
      column_cut.push_back(cuts[k]);
      ++result.groups[g].columns;
    }
    for (const std::uint32_t t : group_types) type_slot[t] = -1;
    for (const std::uint32_t a : group_atoms) atom_slot[a] = -1;
    result.groups[g].key = keys[g];
    result.groups[g].rows = rows.size();
    result.groups[g].cuts = cuts.size();
  }
  result.lp_columns = lp.columns();

  // ---- solve: LP(0), else the smallest violation budget, then the objective under it ----
  // (deterministic mode: over the hull columns, for the randomised optimum only)
  const std::span<const std::size_t> held_columns = hull_columns;
  const std::size_t held = options.deterministic ? hull_columns.size() : lp.columns();
  const auto solve = [&](bool minimize_violation, double budget) {
    detail::ThresholdLpSolver solver(lp, minimize_violation, budget, options.eager_constraints,
                                     held_columns);
    return solver.solve();
  };
  std::optional<std::vector<double>> x = solve(false, 0.0);
  result.status = Termination::kConverged;
  if (!x) {
    const auto phase1 = solve(true, 0.0);
    RATEOPT_CHECK(phase1.has_value(), "post-processing: the violation LP failed (CLP)");
    const double v = (*phase1)[held + lp.atoms];
    result.violation_budget = v;
    result.status = Termination::kInfeasible;
    const double slack = std::max(1e-12, 1e-9 * std::fabs(v));
    x = solve(false, v + slack);
    if (!x) {
      RATEOPT_CHECK(!lp.fractional, "post-processing: the relaxed LP failed (CLP)");
      x = phase1;
    }
  }
  result.lp_objective = lp.objective_at(*x, held);
  // Each column's share of its group's rule: the LP's pi (relative to t for Charnes-Cooper).
  std::vector<double> weight(lp.columns(), 0.0);
  if (!options.deterministic) {
    std::copy_n(x->begin(), lp.columns(), weight.begin());
  } else {
    result.randomized = {result.status, result.lp_objective, result.violation_budget};
    const detail::DeterministicSearch found = detail::search_deterministic(
        lp, options.eager_constraints,
        {options.max_nodes, options.sweep, options.progress, options.should_stop});
    result.status = found.status;
    result.lp_objective = found.objective;
    result.violation_budget = found.violation_budget;
    result.search = {found.nodes, found.bound, found.sweep};
    for (const std::size_t c : found.column) weight[c] = 1.0;
  }

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
  for (std::size_t c = 0; c < lp.columns(); ++c)
    if (weight[c] > kZeroWeight) group_sum[lp.group[c]] += weight[c];
  // Columns of a group are in increasing cut order, i.e. decreasing threshold: walk backwards.
  for (std::size_t c = lp.columns(); c-- > 0;) {
    const std::size_t g = lp.group[c];
    if (!(weight[c] > kZeroWeight)) continue;
    GroupRule& rule = clf.group_rules[g];
    rule.thresholds.push_back(cut_threshold(sorted_scores[g], column_cut[c]));
    rule.weights.push_back(weight[c] / group_sum[g]);
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
  if (options.deterministic) opts["deterministic"] = true;
  clf.options_json = opts.dump();
  clf.validate();

  // ---- exact training values of the saved rules ----
  const auto values = [&](PredictMode mode) {
    std::vector<std::vector<double>> preds(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      const Dataset& ds = *data[k].data;
      const KnownScores known{
          &ds.features(),
          {std::span<const double>(result.training_scores).subspan(offset[k], ds.num_rows())}};
      preds[k].resize(ds.num_rows());
      clf.predict(ds, mode, preds[k], 0, options.n_threads, &known);
    }
    return problem.evaluate(problem.atom_values(preds));
  };
  result.stochastic = values(PredictMode::kProbability);
  result.deterministic = values(PredictMode::kDeterministic);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace rateopt
