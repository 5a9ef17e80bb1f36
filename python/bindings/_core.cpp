// File: python/bindings/_core.cpp
// The private pybind11 module `rateopt._core`: a thin layer over the C++ API (STYLE R11). The
// pure-Python package (python/src/rateopt) validates and converts user input; this layer only
// maps arrays to spans, releases the GIL around the work and turns results into numpy arrays.
//
// Arrays: every array parameter is py::array_t<T, c_style | forcecast>, so a C-contiguous array
// of the right dtype passes without a copy (the Python layer prepares exactly those). Spans into
// the arrays are taken while the GIL is held; the arrays stay referenced by the caller's frame
// for the duration of the call.
//
// Errors: rateopt::InvalidArgument derives from std::invalid_argument, which pybind11 maps to
// ValueError. ParseError and NotFound become _core.ParseError / _core.NotFoundError (subclasses
// of ValueError), IoError becomes _core.IoError (a subclass of OSError); the message is the C++
// message, stable id prefix included.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binding_util.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/postprocess.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"
#include "rateopt/version.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace rateopt::python {

// ---- decide --------------------------------------------------------------------------------

DecideOptions make_options(const std::string& method, bool all_k, double truncation,
                           bool early_stop, double fast_tolerance, double empty_score,
                           bool none_item) {
  DecideOptions o;
  o.empty_score = empty_score;
  o.none_item = none_item;
  o.method = parse_decide_method(method);
  o.all_k = all_k;
  o.truncation = truncation;
  o.early_stop = early_stop;
  o.fast_tolerance = fast_tolerance;
  return o;
}

// The options of the GFM entry points: the library's defaults but for these three.
DecideOptions gfm_options(const std::string& method, bool all_k, double empty_score) {
  DecideOptions o;
  o.method = parse_decide_method(method);
  o.all_k = all_k;
  o.empty_score = empty_score;
  return o;
}

DecideModel parse_model(const std::string& model) {
  if (model == "independent") return DecideModel::kIndependent;
  if (model == "multiclass") return DecideModel::kMulticlass;
  throw InvalidArgument("model must be 'independent' or 'multiclass' here, got '" + model + "'");
}

// Packs per-instance decisions into flat arrays: selected indices in CSR form (indptr, indices),
// expected, error_bound, method names, expected_by_k (a matrix when every instance has the same
// number of items, else a list).
py::dict pack_decisions(const std::vector<Decision>& ds, bool all_k) {
  const std::size_t n = ds.size();
  py::array_t<std::int64_t> indptr(static_cast<py::ssize_t>(n + 1));
  std::size_t nnz = 0;
  {
    auto* ip = indptr.mutable_data();
    ip[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      nnz += ds[i].selected.size();
      ip[i + 1] = static_cast<std::int64_t>(nnz);
    }
  }
  py::array_t<std::int64_t> indices(static_cast<py::ssize_t>(nnz));
  py::array_t<double> expected(static_cast<py::ssize_t>(n));
  py::array_t<double> error_bound(static_cast<py::ssize_t>(n));
  {
    auto* out = indices.mutable_data();
    auto* e = expected.mutable_data();
    auto* b = error_bound.mutable_data();
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t s : ds[i].selected) out[k++] = static_cast<std::int64_t>(s);
      e[i] = ds[i].expected;
      b[i] = ds[i].error_bound;
    }
  }
  py::list methods;
  for (const auto& d : ds) methods.append(py::str(std::string(to_string(d.method))));
  py::object by_k = py::none();
  if (all_k) {
    bool same = n > 0;
    for (const auto& d : ds) same = same && d.expected_by_k.size() == ds[0].expected_by_k.size();
    if (same) {
      const std::size_t w = ds[0].expected_by_k.size();
      py::array_t<double> mat({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(w)});
      auto* p = mat.mutable_data();
      for (std::size_t i = 0; i < n; ++i)
        std::copy(ds[i].expected_by_k.begin(), ds[i].expected_by_k.end(), p + i * w);
      by_k = mat;
    } else {
      py::list l;
      for (const auto& d : ds) l.append(to_numpy(d.expected_by_k));
      by_k = l;
    }
  }
  py::array_t<bool> none(static_cast<py::ssize_t>(n));
  py::object by_k_none = py::none();
  bool any_none_k = false;
  {
    auto* f = none.mutable_data();
    for (std::size_t i = 0; i < n; ++i) {
      f[i] = ds[i].none;
      any_none_k = any_none_k || !ds[i].expected_by_k_none.empty();
    }
  }
  if (all_k && any_none_k) {
    py::list l;
    for (const auto& d : ds) l.append(to_numpy(d.expected_by_k_none));
    by_k_none = l;
  }
  return py::dict("indptr"_a = indptr, "indices"_a = indices, "expected"_a = expected,
                  "error_bound"_a = error_bound, "method"_a = methods, "expected_by_k"_a = by_k,
                  "none"_a = none, "expected_by_k_none"_a = by_k_none);
}

// rows: a 2-D C-contiguous float64 array, or a list of 1-D arrays (different lengths).
py::dict decide_rows(const py::object& rows, const std::string& metric_name,
                     const std::string& model_name, const std::string& method, bool all_k,
                     double truncation, bool early_stop, double fast_tolerance, double empty_score,
                     bool none_item, int n_threads) {
  const DecideMetric metric = DecideMetric::from_name(metric_name);
  const DecideOptions o =
      make_options(method, all_k, truncation, early_stop, fast_tolerance, empty_score, none_item);
  const DecideModel model = parse_model(model_name);
  std::vector<Decision> ds;
  if (py::isinstance<py::list>(rows) || py::isinstance<py::tuple>(rows)) {
    std::vector<Array<double>> keep;
    std::vector<std::span<const double>> spans;
    for (const auto& item : rows) {
      keep.push_back(Array<double>::ensure(item));
      if (!keep.back()) throw py::error_already_set();
      require_ndim(keep.back(), 1, "each instance");
      spans.push_back(span_of(keep.back()));
    }
    py::gil_scoped_release release;
    ds = decide_batch(model, std::span<const std::span<const double>>(spans), metric, o, n_threads);
  } else {
    const auto a = Array<double>::ensure(rows);
    if (!a) throw py::error_already_set();
    require_ndim(a, 2, "probabilities");
    const auto n = static_cast<std::size_t>(a.shape(0));
    const auto m = static_cast<std::size_t>(a.shape(1));
    std::vector<std::span<const double>> spans;  // the rows in place
    spans.reserve(n);
    for (std::size_t i = 0; i < n; ++i) spans.emplace_back(a.data() + i * m, m);
    py::gil_scoped_release release;
    ds = decide_batch(model, std::span<const std::span<const double>>(spans), metric, o, n_threads);
  }
  return pack_decisions(ds, all_k);
}

GfmInput gfm_input(const Array<double>& p, double p0) {
  require_ndim(p, 2, "P");
  if (p.shape(0) != p.shape(1))
    throw InvalidArgument("P must be square (m x m), got " + std::to_string(p.shape(0)) + " x " +
                          std::to_string(p.shape(1)));
  GfmInput in;
  in.m = static_cast<std::size_t>(p.shape(0));
  in.p.assign(p.data(), p.data() + p.size());
  in.p_zero = p0;
  return in;
}

// ---- data ------------------------------------------------------------------------------------

FeatureMatrix dense_matrix(const Array<double>& x) {
  require_ndim(x, 2, "X");
  std::vector<double> data(x.data(), x.data() + x.size());
  return FeatureMatrix::dense(std::move(data), static_cast<std::size_t>(x.shape(0)),
                              static_cast<std::size_t>(x.shape(1)));
}

FeatureMatrix csr_matrix(const Array<std::int64_t>& indptr, const Array<std::int32_t>& indices,
                         const Array<double>& values, std::size_t cols) {
  require_ndim(indptr, 1, "indptr");
  require_ndim(indices, 1, "indices");
  require_ndim(values, 1, "data");
  return FeatureMatrix::csr(
      std::vector<std::int64_t>(indptr.data(), indptr.data() + indptr.size()),
      std::vector<std::int32_t>(indices.data(), indices.data() + indices.size()),
      std::vector<double>(values.data(), values.data() + values.size()), cols);
}

// columns: list of (name, levels, codes int32, numeric float64 or None).
Dataset make_dataset(const FeatureMatrix& x, const std::string& kind,
                     const std::optional<Array<std::int32_t>>& values,
                     const std::optional<Array<std::int64_t>>& set_indptr,
                     const std::optional<Array<std::int32_t>>& set_indices,
                     std::vector<std::string> names, const OptArray& weights,
                     const py::list& columns, std::vector<std::string> feature_names = {}) {
  Labels y;
  y.kind = parse_label_kind(kind);
  if (values) y.values.assign(values->data(), values->data() + values->size());
  if (set_indptr) y.set_indptr.assign(set_indptr->data(), set_indptr->data() + set_indptr->size());
  if (set_indices)
    y.set_indices.assign(set_indices->data(), set_indices->data() + set_indices->size());
  y.names = std::move(names);
  if (y.kind != LabelKind::kNone && y.size() != x.rows())
    throw InvalidArgument("labels have " + std::to_string(y.size()) + " entries, expected " +
                          std::to_string(x.rows()) + " (one per row)");
  Dataset ds(x, std::move(y));
  ds.encoding() = Encoding::for_matrix(x.cols(), std::move(feature_names));
  if (weights)
    ds.set_weights(std::vector<double>(weights->data(), weights->data() + weights->size()));
  for (const auto& item : columns) {
    const auto t = item.cast<py::tuple>();
    Column c;
    c.name = t[0].cast<std::string>();
    c.levels = t[1].cast<std::vector<std::string>>();
    const auto codes = Array<std::int32_t>::ensure(t[2]);
    if (!codes) throw py::error_already_set();
    c.codes.assign(codes.data(), codes.data() + codes.size());
    if (!t[3].is_none()) {
      const auto num = Array<double>::ensure(t[3]);
      if (!num) throw py::error_already_set();
      c.numeric.assign(num.data(), num.data() + num.size());
    }
    if (c.codes.size() != x.rows())
      throw InvalidArgument("column '" + c.name + "' has " + std::to_string(c.codes.size()) +
                            " entries, expected " + std::to_string(x.rows()) + " (one per row)");
    for (const auto code : c.codes)
      if (code < -1 || code >= static_cast<std::int32_t>(c.levels.size()))
        throw InvalidArgument("column '" + c.name + "' has a code outside its levels");
    ds.add_column(std::move(c));
  }
  return ds;
}

py::dict counts_to_dict(const SliceCounts& c) {
  return py::dict("tp"_a = c.confusion.tp, "fp"_a = c.confusion.fp, "fn"_a = c.confusion.fn,
                  "tn"_a = c.confusion.tn, "total"_a = c.total, "changes"_a = c.changes,
                  "wins"_a = c.wins, "losses"_a = c.losses);
}

// One dataset with its predictions, for evaluate(): keeps both alive for the call.
struct EvalData {
  std::string name;
  std::shared_ptr<Dataset> data;
  std::shared_ptr<Predictions> predictions;
};

std::shared_ptr<Predictions> make_predictions(const OptArray& prob, const OptArray& scores,
                                              const std::optional<Array<std::int64_t>>& indptr,
                                              const std::optional<Array<std::int32_t>>& indices,
                                              const std::optional<Array<std::int32_t>>& classes) {
  auto p = std::make_shared<Predictions>();
  if (prob) p->prob_positive.assign(prob->data(), prob->data() + prob->size());
  if (scores) p->scores.assign(scores->data(), scores->data() + scores->size());
  if (indptr) p->set_indptr.assign(indptr->data(), indptr->data() + indptr->size());
  if (indices) p->set_indices.assign(indices->data(), indices->data() + indices->size());
  if (classes) p->classes.assign(classes->data(), classes->data() + classes->size());
  return p;
}

// ---- models ----------------------------------------------------------------------------------

py::array_t<double> predict_model(const Classifier& c, const FeatureMatrix& x,
                                  const std::string& mode, std::uint64_t seed, int n_threads) {
  const PredictMode m = parse_predict_mode(mode);
  py::array_t<double> out(static_cast<py::ssize_t>(x.rows()));
  std::span<double> s(out.mutable_data(), x.rows());
  py::gil_scoped_release release;
  c.predict(x, m, s, seed, n_threads);
  return out;
}

// ---- training --------------------------------------------------------------------------------

py::dict values_to_dict(const ProblemValues& v) {
  return py::dict("objective"_a = v.objective, "constraints"_a = v.constraints,
                  "max_violation"_a = v.max_violation());
}

std::vector<TrainingData> training_data(const py::list& data,
                                        std::vector<std::shared_ptr<Dataset>>& keep) {
  std::vector<TrainingData> out;
  for (const auto& item : data) {
    const auto t = item.cast<py::tuple>();
    keep.push_back(t[1].cast<std::shared_ptr<Dataset>>());
    out.push_back({t[0].cast<std::string>(), keep.back().get()});
  }
  return out;
}

// A Python value as a training-option value (train_options.hpp): bool, int, float or str.
TrainOptionValue option_value(const std::string& key, const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) {
    try {
      return v.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      return v.cast<std::uint64_t>();  // seeds >= 2^63
    }
  }
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  throw InvalidArgument("option '" + key + "': expected a bool, int, float or str, got " +
                        py::str(py::type::of(v).attr("__name__")).cast<std::string>());
}

// The option table as a list of dicts (tests, docs, RateConstrainedClassifier's keywords).
py::list train_options() {
  py::list out;
  for (const TrainOptionInfo& i : train_option_table()) {
    py::list solvers;
    for (TrainSolver s : {TrainSolver::kCuttingPlane, TrainSolver::kProxyLagrangian,
                          TrainSolver::kThreePlayer, TrainSolver::kRatio, TrainSolver::kOracle})
      if (i.applies_to(s)) solvers.append(std::string(to_string(s)));
    py::object def = std::visit([](const auto& x) { return py::cast(x); }, i.default_value);
    out.append(py::dict("key"_a = std::string(i.key), "flag"_a = std::string(i.flag),
                        "type"_a = std::string(to_string(i.type)), "default"_a = def,
                        "check"_a = i.check_text(), "solvers"_a = solvers,
                        "help"_a = std::string(i.help)));
  }
  return out;
}

ProblemSpec problem_spec(const std::string& objective, bool maximize,
                         const std::vector<std::string>& constraints) {
  ProblemSpec spec;
  spec.objective = objective;
  spec.maximize = maximize;
  spec.constraints = constraints;
  return spec;
}

// Every key through the option table: its conversion and check; an unknown key is NotFound.
TrainOptions train_options_from(const py::dict& opts) {
  TrainOptions o;
  for (const auto& [k, v] : opts) {
    const std::string key = py::str(k).cast<std::string>();
    set_train_option(o, key, option_value(key, v));
  }
  return o;
}

// One progress record of the game and cutting-plane solvers (verbose callbacks, report history).
py::dict record_dict(const IterationRecord& h) {
  return py::dict("iteration"_a = h.iteration, "objective"_a = h.objective,
                  "max_violation"_a = h.max_violation, "lagrangian"_a = h.lagrangian,
                  "gap"_a = h.gap, "seconds"_a = h.seconds);
}

py::list history_list(const std::vector<IterationRecord>& history) {
  py::list out;
  for (const auto& h : history) out.append(record_dict(h));
  return out;
}

// One majorisation-minimisation step of the ramp solver (verbose callback, report history).
py::dict mm_dict(const MmIteration& h) {
  return py::dict("iteration"_a = h.iteration, "phase1"_a = h.phase1, "objective"_a = h.objective,
                  "max_violation"_a = h.max_violation, "feasible"_a = h.feasible,
                  "accepted"_a = h.accepted);
}

// Ctrl-C while C++ trains: Python's SIGINT handler only flags the signal, and the interpreter
// runs it (raising KeyboardInterrupt) when PyErr_CheckSignals is called. Training polls this once
// per round with the GIL taken back for the call; true means the KeyboardInterrupt is pending.
bool python_interrupt_pending() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

// A Python callable as the progress callback of the game solvers (verbose output): it gets a dict
// per record; an exception it raises stops training and propagates.
std::function<void(const IterationRecord&)> python_progress(const py::object& callback) {
  if (callback.is_none()) return {};
  return [callback](const IterationRecord& h) {
    py::gil_scoped_acquire gil;
    callback(record_dict(h));
  };
}

py::dict train(const std::string& objective, bool maximize,
               const std::vector<std::string>& constraints, const py::list& data,
               const py::dict& opts, const py::object& progress, int progress_every) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  TrainOptions o = train_options_from(opts);
  if (o.solver == TrainSolver::kOracle) o.oracle = weighted_logistic_oracle(o.c, o.n_threads);
  o.progress = python_progress(progress);
  if (progress_every > 0) o.progress_every = progress_every;
  o.should_stop = python_interrupt_pending;
  std::string description;
  TrainResult r;
  {
    py::gil_scoped_release release;
    const RateProblem problem = RateProblem::build(spec, named);
    description = problem.describe();
    r = rateopt::train(problem, o);
  }
  // Stopped by Ctrl-C: the KeyboardInterrupt PyErr_CheckSignals raised is still pending.
  if (r.status == Termination::kInterrupted) throw py::error_already_set();
  const py::list history = history_list(r.history);
  return py::dict("model"_a = std::move(r.classifier),
                  "solver"_a = std::string(to_string(r.solver)),
                  "status"_a = std::string(to_string(r.status)), "iterations"_a = r.iterations,
                  "seconds"_a = r.seconds, "stochastic"_a = values_to_dict(r.stochastic),
                  "deterministic"_a = values_to_dict(r.deterministic),
                  "num_candidates"_a = r.num_candidates, "history"_a = history,
                  "problem"_a = description, "lower_bound"_a = r.lower_bound, "gap"_a = r.gap);
}

// Cotter et al.'s two-dataset scheme (train.hpp, train_two_dataset; the CLI's --two-dataset) on
// the one dataset of `data`: the dict of train() plus "two_dataset" (the split and the constraint
// side's values).
py::dict train_two_dataset(const std::string& objective, bool maximize,
                           const std::vector<std::string>& constraints, const py::list& data,
                           const py::dict& opts, double constraint_fraction) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  if (named.size() != 1)
    throw InvalidArgument("two_dataset= splits the rows given to fit (" +
                          std::to_string(named.size()) +
                          " datasets given); leave out datasets= or two_dataset=");
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  TrainOptions o = train_options_from(opts);
  o.should_stop = python_interrupt_pending;
  TwoDatasetResult r;
  {
    py::gil_scoped_release release;
    r = rateopt::train_two_dataset(spec, *named[0].data, o,
                                   {.constraint_fraction = constraint_fraction, .seed = o.seed});
  }
  if (r.result.status == Termination::kInterrupted) throw py::error_already_set();
  const py::dict two("constraint_fraction"_a = constraint_fraction,
                     "model_rows"_a = r.model_rows.num_rows(),
                     "constraint_rows"_a = r.constraint_rows.num_rows());
  TrainResult& t = r.result;
  return py::dict("model"_a = std::move(t.classifier),
                  "solver"_a = std::string(to_string(t.solver)),
                  "status"_a = std::string(to_string(t.status)), "iterations"_a = t.iterations,
                  "seconds"_a = t.seconds, "stochastic"_a = values_to_dict(t.stochastic),
                  "deterministic"_a = values_to_dict(t.deterministic),
                  "num_candidates"_a = t.num_candidates, "history"_a = history_list(t.history),
                  "lower_bound"_a = t.lower_bound, "gap"_a = t.gap, "two_dataset"_a = two);
}

// The "guarantee" dict of a guaranteed fit (train_guaranteed, postprocess_guaranteed): the split,
// and per constraint as given its tightened form, margin, safety-part value and upper bound.
py::dict guarantee_dict(const GuaranteedTrainResult& r, const std::vector<std::string>& constraints,
                        const GuaranteeOptions& g) {
  py::list rows;
  for (std::size_t k = 0; k < r.safety.size(); ++k)
    rows.append(py::dict("constraint"_a = constraints[k], "trained_as"_a = r.trained_constraints[k],
                         "margin"_a = r.margins[k], "safety_violation"_a = r.safety[k].value,
                         "upper_bound"_a = r.safety[k].range.high,
                         "certified"_a = r.safety[k].range.high <= 0));
  return py::dict("confidence"_a = g.confidence, "delta"_a = 1 - g.confidence,
                  "output"_a = g.stochastic_output ? "stochastic" : "deterministic",
                  "safety_fraction"_a = g.safety_fraction, "width_factor"_a = g.width_factor,
                  "candidate_rows"_a = r.candidate_total, "safety_rows"_a = r.safety_total,
                  "constraints"_a = rows, "moved_toward"_a = r.anchor,
                  "kept_share"_a = r.kept_share, "components_drawn"_a = r.drawn,
                  "passed"_a = r.passed);
}

// confidence= trains on the rows given to fit only.
void require_one_dataset(std::size_t datasets) {
  if (datasets != 1)
    throw InvalidArgument("confidence= trains on the rows given to fit only (" +
                          std::to_string(datasets) +
                          " datasets given); leave out datasets= or confidence=");
}

GuaranteeOptions guarantee_options(double confidence, double safety_fraction, bool stochastic,
                                   double width_factor, bool move, std::uint64_t seed) {
  GuaranteeOptions g;
  g.confidence = confidence;
  g.safety_fraction = safety_fraction;
  g.stochastic_output = stochastic;
  g.width_factor = width_factor;
  g.shrink = move;
  g.seed = seed;
  return g;
}

// The guaranteed mode (train.hpp, train_guaranteed; the CLI's --confidence) on the one dataset of
// `data`: the fit kept and, under "guarantee", each constraint's margin and safety-test bound.
py::dict train_guaranteed(const std::string& objective, bool maximize,
                          const std::vector<std::string>& constraints, const py::list& data,
                          const py::dict& opts, double confidence, double safety_fraction,
                          bool stochastic, double width_factor, bool move) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  require_one_dataset(named.size());
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  TrainOptions o = train_options_from(opts);
  if (o.solver == TrainSolver::kOracle) o.oracle = weighted_logistic_oracle(o.c, o.n_threads);
  o.should_stop = python_interrupt_pending;
  const GuaranteeOptions g =
      guarantee_options(confidence, safety_fraction, stochastic, width_factor, move, o.seed);
  GuaranteedTrainResult r;
  {
    py::gil_scoped_release release;
    r = rateopt::train_guaranteed(spec, *named[0].data, 0, o, g);
  }
  if (r.result.status == Termination::kInterrupted) throw py::error_already_set();
  py::dict guarantee = guarantee_dict(r, constraints, g);
  guarantee["solver_status"] = std::string(to_string(r.solver_status));
  TrainResult& t = r.result;
  return py::dict("model"_a = std::move(t.classifier),
                  "solver"_a = std::string(to_string(t.solver)),
                  "status"_a = std::string(to_string(t.status)), "iterations"_a = t.iterations,
                  "seconds"_a = t.seconds, "stochastic"_a = values_to_dict(t.stochastic),
                  "deterministic"_a = values_to_dict(t.deterministic),
                  "num_candidates"_a = t.num_candidates, "history"_a = history_list(t.history),
                  "lower_bound"_a = t.lower_bound, "gap"_a = t.gap, "guarantee"_a = guarantee);
}

// The deterministic mode's search (PostprocessOptions::deterministic): None without it; else the
// randomised optimum beside the rule's objective (as given: maximised objectives positive), the
// price of determinism when both meet the constraints, LP solves and the proved bound.
py::object deterministic_search_dict(const PostprocessResult& r, const PostprocessOptions& o,
                                     bool maximize) {
  if (!o.deterministic) return py::none();
  const double sign = maximize ? -1.0 : 1.0;
  py::dict d("rule"_a = "deterministic",
             "search_method"_a = r.search.sweep ? "sweep" : "branch_and_bound",
             "search_nodes"_a = r.search.nodes, "search_bound"_a = sign * r.search.bound,
             "randomized_status"_a = std::string(to_string(r.randomized.status)),
             "randomized_objective"_a = sign * r.randomized.objective,
             "randomized_violation_budget"_a = r.randomized.violation_budget);
  if (r.status == Termination::kConverged && r.randomized.status == Termination::kConverged)
    d["price_of_determinism"] = r.lp_objective - r.randomized.objective;
  return d;
}

// Post-processing (postprocess.hpp, the CLI's --solver postprocess): exact randomised group
// thresholds of `base`'s score (one linear component) by one LP over the problem's data.
// ThresholdClassifier passes any estimator's score as a one-column feature matrix and the base
// s = 1 * x + 0.
py::dict postprocess_thresholds(const std::string& objective, bool maximize,
                                const std::vector<std::string>& constraints, const py::list& data,
                                const Classifier& base, std::vector<std::string> group_columns,
                                int n_threads, bool deterministic, std::size_t max_nodes) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  PostprocessOptions o;
  o.group_columns = std::move(group_columns);
  o.n_threads = n_threads;
  o.deterministic = deterministic;
  if (max_nodes > 0) o.max_nodes = max_nodes;
  o.should_stop = python_interrupt_pending;
  PostprocessResult r;
  std::string description;
  {
    py::gil_scoped_release release;
    const RateProblem problem = RateProblem::build(pairwise_parity(spec), named);
    description = problem.describe();
    r = postprocess(problem, base, o);
  }
  if (r.status == Termination::kInterrupted) throw py::error_already_set();
  py::list groups;
  for (const PostprocessGroup& g : r.groups)
    groups.append(py::dict("key"_a = g.key, "rows"_a = g.rows, "cuts"_a = g.cuts));
  return py::dict("model"_a = std::move(r.classifier),
                  "status"_a = std::string(to_string(r.status)),
                  "stochastic"_a = values_to_dict(r.stochastic),
                  "deterministic"_a = values_to_dict(r.deterministic),
                  "lp_objective"_a = maximize ? -r.lp_objective : r.lp_objective,
                  "violation_budget"_a = r.violation_budget, "group_columns"_a = r.group_columns,
                  "groups"_a = groups, "lp_columns"_a = r.lp_columns, "seconds"_a = r.seconds,
                  "problem"_a = description,
                  "deterministic_search"_a = deterministic_search_dict(r, o, maximize));
}

// Post-processing with a guarantee (postprocess.hpp, postprocess_guaranteed; the CLI's --solver
// postprocess --confidence) on the one dataset of `data`, with `base` as the score: the dict of
// postprocess() plus "guarantee". The caller fits the score on the candidate rows that
// safety_rows() names for the same row count, seed and safety fraction.
py::dict postprocess_guaranteed_py(const std::string& objective, bool maximize,
                                   const std::vector<std::string>& constraints,
                                   const py::list& data, const Classifier& base,
                                   std::vector<std::string> group_columns, int n_threads,
                                   double confidence, double safety_fraction, bool stochastic,
                                   std::uint64_t seed, double tolerance, bool deterministic) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  if (named.size() != 1)
    throw InvalidArgument("confidence= post-processes the rows given to fit only");
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  PostprocessOptions o;
  o.group_columns = std::move(group_columns);
  o.n_threads = n_threads;
  o.deterministic = deterministic;
  GuaranteeOptions g;
  g.confidence = confidence;
  g.safety_fraction = safety_fraction;
  g.stochastic_output = stochastic;
  g.seed = seed;
  GuaranteedPostprocessResult r;
  {
    py::gil_scoped_release release;
    r = rateopt::postprocess_guaranteed(spec, *named[0].data, 0, &base, {}, o, tolerance, g);
  }
  const GuaranteedTrainResult& t = r.guarantee;
  const py::dict guarantee = guarantee_dict(t, constraints, g);
  const PostprocessResult& p = r.postprocess;
  py::list groups;
  for (const PostprocessGroup& gr : p.groups)
    groups.append(py::dict("key"_a = gr.key, "rows"_a = gr.rows, "cuts"_a = gr.cuts));
  return py::dict("model"_a = t.result.classifier,
                  "status"_a = std::string(to_string(t.result.status)),
                  "stochastic"_a = values_to_dict(p.stochastic),
                  "deterministic"_a = values_to_dict(p.deterministic),
                  "lp_objective"_a = maximize ? -p.lp_objective : p.lp_objective,
                  "violation_budget"_a = p.violation_budget, "group_columns"_a = p.group_columns,
                  "groups"_a = groups, "lp_columns"_a = p.lp_columns, "seconds"_a = p.seconds,
                  "guarantee"_a = guarantee);
}

// Rate-constrained training of any base model (train.hpp, train_with_prediction_oracle): the
// Python callable `oracle` gets the per-row costs (a list of float64 arrays, one per dataset) and
// returns the predictions of the classifier it fitted (a sequence of arrays, one per dataset,
// values in [0, 1]); answer k is its k-th call. The GIL is released while C++ plays the game and
// taken back for each call; an exception the callable raises (KeyboardInterrupt included) travels
// out of the solver as error_already_set and is restored as the Python exception.
// The prediction oracle of a Python callable (train_with_oracle's contract).
PredictionOracle python_oracle(const py::object& oracle) {
  return [&oracle](const OracleCosts& oc) {
    py::gil_scoped_acquire gil;
    py::list costs;
    for (const std::vector<double>& c : oc.rows) costs.append(to_numpy(c));
    const py::object result = oracle(costs);
    std::vector<std::vector<double>> out;
    for (const py::handle h : result) {
      const auto a = Array<double>::ensure(h);
      if (!a || a.ndim() != 1)
        throw InvalidArgument(
            "train_with_oracle: the oracle must return one 1-D array of "
            "predictions per dataset");
      out.emplace_back(a.data(), a.data() + a.size());
    }
    return out;
  };
}

py::dict train_with_oracle(const std::string& objective, bool maximize,
                           const std::vector<std::string>& constraints, const py::list& data,
                           const py::dict& opts, const py::function& oracle) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  const TrainOptions o = train_options_from(opts);
  const PredictionOracle answer = python_oracle(oracle);
  std::string description;
  PredictionOracleResult r;
  {
    py::gil_scoped_release release;
    const RateProblem problem = RateProblem::build(spec, named);
    description = problem.describe();
    r = train_with_prediction_oracle(problem, o, answer);
  }
  const py::list history = history_list(r.history);
  py::list answers;
  for (const ProblemValues& v : r.answers) answers.append(values_to_dict(v));
  return py::dict("mixture"_a = to_numpy(r.mixture), "best"_a = r.best,
                  "solver"_a = std::string(to_string(r.solver)),
                  "status"_a = std::string(to_string(r.status)), "iterations"_a = r.iterations,
                  "seconds"_a = r.seconds, "oracle_calls"_a = r.oracle_calls,
                  "stochastic"_a = values_to_dict(r.stochastic),
                  "deterministic"_a = values_to_dict(r.deterministic), "answers"_a = answers,
                  "history"_a = history, "problem"_a = description, "lower_bound"_a = r.lower_bound,
                  "gap"_a = r.gap);
}

// predict_parts' rows x cols matrix of 0/1 predictions as a dense FeatureMatrix.
FeatureMatrix predictions_matrix(const py::handle& h, std::size_t rows, std::size_t cols,
                                 const char* what) {
  const auto a = Array<double>::ensure(h);
  if (!a || a.ndim() != 2 || static_cast<std::size_t>(a.shape(0)) != rows ||
      static_cast<std::size_t>(a.shape(1)) != cols)
    throw InvalidArgument(std::string(what) + ": expected a " + std::to_string(rows) + " x " +
                          std::to_string(cols) + " matrix of predictions");
  return dense_matrix(a);
}

// The guaranteed mode around a Python learner (RateConstrainedClassifier(estimator=...,
// confidence=...)): train_guaranteed's fit is train_with_prediction_oracle on the candidate part
// with `oracle` (fitting on the candidate rows of X), and the classifier it hands the safety test
// has one threshold component per answer kept (weights e_k, bias -1/2) over the answers' 0/1
// predictions on each part, which oracle.predict_parts(answers) returns (two float64 matrices,
// candidate and safety rows by answer). Answers are indices into the oracle's fitted models, over
// all of the mode's fits. Returns the dict of train_guaranteed with, instead of "model", the
// mixture as "components" (per component: the answer it reads, -1 for none, and its prediction
// when that answer predicts 0 and 1), "mixture" and "best".
py::dict train_guaranteed_with_oracle(const std::string& objective, bool maximize,
                                      const std::vector<std::string>& constraints,
                                      const py::list& data, const py::dict& opts, double confidence,
                                      double safety_fraction, bool stochastic, double width_factor,
                                      bool move, const py::object& oracle) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  require_one_dataset(named.size());
  const ProblemSpec spec = problem_spec(objective, maximize, constraints);
  const TrainOptions o = train_options_from(opts);
  const GuaranteeOptions g =
      guarantee_options(confidence, safety_fraction, stochastic, width_factor, move, o.seed);
  const PredictionOracle answer = python_oracle(oracle);
  const std::size_t safety_count = [&] {
    const std::vector<std::uint8_t> v = safety_rows(named[0].data->num_rows(), 0, g);
    return static_cast<std::size_t>(std::count(v.begin(), v.end(), std::uint8_t{1}));
  }();
  std::vector<std::vector<std::size_t>> call_answers;  // per fit call: the answers it kept
  const GuaranteedFeatureFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
    std::size_t first = 0;
    {
      py::gil_scoped_acquire gil;
      first = py::len(oracle.attr("fitted"));
    }
    const std::vector<TrainingData> td = {{"train", &candidate}};
    const PredictionOracleResult p =
        train_with_prediction_oracle(RateProblem::build(tight, td), o, answer);
    std::vector<std::size_t> kept;
    GuaranteedFitOutput out;
    Classifier& c = out.fit.classifier;
    c.kind = "wrapped";
    c.link = Link::kThreshold;
    for (std::size_t k = 0; k < p.mixture.size(); ++k) {
      if (p.mixture[k] <= 0 && k != p.best) continue;
      if (k == p.best) c.best = kept.size();
      kept.push_back(first + k);
      c.mixture.push_back(p.mixture[k]);
    }
    for (std::size_t j = 0; j < kept.size(); ++j) {
      LinearModel m;
      m.weights.assign(kept.size(), 0.0);
      m.weights[j] = 1.0;
      m.bias = -0.5;
      c.components.push_back(std::move(m));
    }
    c.encoding = Encoding::for_matrix(kept.size());
    out.fit.solver = p.solver;
    out.fit.status = p.status;
    out.fit.iterations = p.iterations;
    out.fit.seconds = p.seconds;
    out.fit.stochastic = p.stochastic;
    out.fit.deterministic = p.deterministic;
    out.fit.history = p.history;
    out.fit.lower_bound = p.lower_bound;
    out.fit.oracle_calls = p.oracle_calls;
    out.fit.gap = p.gap;
    {
      py::gil_scoped_acquire gil;
      const py::tuple parts = oracle.attr("predict_parts")(kept);
      out.candidate_features = predictions_matrix(parts[0], candidate.num_rows(), kept.size(),
                                                  "predict_parts (candidate)");
      out.safety_features =
          predictions_matrix(parts[1], safety_count, kept.size(), "predict_parts (safety)");
    }
    call_answers.push_back(std::move(kept));
    return out;
  };
  GuaranteedTrainResult r;
  {
    py::gil_scoped_release release;
    r = rateopt::train_guaranteed(spec, *named[0].data, 0, fit, o.tolerance, o.n_threads, g);
  }
  // Each final component (the fit's, a constant, or the fit's best with a moved threshold) reads
  // at most one answer's prediction: what it predicts for that prediction's 0 and 1.
  const TrainResult& t = r.result;
  const std::vector<std::size_t>& answers = call_answers.at(r.kept_fit);
  py::list components;
  for (const ScoreModel& component : t.classifier.components) {
    const LinearModel& m = component.linear("a wrapped estimator's guaranteed mixture");
    std::ptrdiff_t read = -1;
    for (std::size_t j = 0; j < m.weights.size(); ++j)
      if (m.weights[j] != 0) read = static_cast<std::ptrdiff_t>(j);
    const auto predicts = [&](double x) {
      const double w = read < 0 ? 0.0 : m.weights[static_cast<std::size_t>(read)];
      return w * x + m.bias > 0 ? 1 : 0;
    };
    components.append(py::dict("answer"_a = read < 0 ? std::ptrdiff_t{-1}
                                                     : static_cast<std::ptrdiff_t>(
                                                           answers[static_cast<std::size_t>(read)]),
                               "if0"_a = predicts(0), "if1"_a = predicts(1)));
  }
  py::dict guarantee = guarantee_dict(r, constraints, g);
  guarantee["solver_status"] = std::string(to_string(r.solver_status));
  return py::dict("components"_a = components, "mixture"_a = to_numpy(t.classifier.mixture),
                  "best"_a = t.classifier.best, "solver"_a = std::string(to_string(t.solver)),
                  "status"_a = std::string(to_string(t.status)), "iterations"_a = t.iterations,
                  "seconds"_a = t.seconds, "stochastic"_a = values_to_dict(t.stochastic),
                  "deterministic"_a = values_to_dict(t.deterministic),
                  "history"_a = history_list(t.history), "lower_bound"_a = t.lower_bound,
                  "gap"_a = t.gap, "guarantee"_a = guarantee);
}

// Goh et al.'s ramp solver over problems written in the expression language: the problem is
// analysed by RateProblem (objective and constraints must be linear in rates) and handed to
// fit_ramp in per-row form by the library's ramp_problem (ramp.hpp), as the CLI does.
py::dict fit_ramp_expressions(const std::string& objective, bool maximize,
                              const std::vector<std::string>& constraints, const py::list& data,
                              const py::dict& opts, const py::object& progress) {
  std::vector<std::shared_ptr<Dataset>> keep;
  const auto named = training_data(data, keep);
  RampOptions o;
  auto get = [&](const char* key, auto& field) {
    if (opts.contains(key)) field = opts[key].cast<std::decay_t<decltype(field)>>();
  };
  get("lambda", o.lambda);
  get("bias_feature", o.bias_feature);
  get("max_mm_iterations", o.max_mm_iterations);
  get("mm_tol", o.mm_tol);
  get("feasibility_tol", o.feasibility_tol);
  get("outer_tol", o.outer_tol);
  get("max_outer_iterations", o.max_outer_iterations);
  get("seed", o.seed);
  get("n_threads", o.n_threads);
  // After every MM step: Ctrl-C (the pending KeyboardInterrupt propagates out of fit_ramp) and the
  // verbose callback.
  o.progress = [progress](const MmIteration& h) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!progress.is_none()) progress(mm_dict(h));
  };
  RampResult r;
  std::string description;
  {
    py::gil_scoped_release release;
    const RateProblem problem =
        RateProblem::build(problem_spec(objective, maximize, constraints), named);
    description = problem.describe();
    // The one bridge of the library (ramp.hpp), as the CLI's --solver ramp.
    r = fit_ramp(ramp_problem(problem), ramp_datasets(problem), o);
    r.classifier.encoding = named[0].data->encoding();
  }
  py::list history;
  for (const auto& h : r.history) history.append(mm_dict(h));
  return py::dict("model"_a = std::move(r.classifier),
                  "status"_a = std::string(to_string(r.status)), "start"_a = r.start,
                  "objective"_a = r.objective, "constraints"_a = r.constraints,
                  "objective_deterministic"_a = r.objective_deterministic,
                  "constraints_deterministic"_a = r.constraints_deterministic,
                  "max_violation"_a = r.max_violation, "multipliers"_a = r.multipliers,
                  "svm_solves"_a = r.svm_solves, "history"_a = history, "problem"_a = description);
}

}  // namespace rateopt::python

PYBIND11_MODULE(_core, m) {
  using namespace rateopt;
  using namespace rateopt::python;
  m.doc() = "rateopt's C++ core (private; use the rateopt package).";
  m.def("version", [] { return std::string(rateopt::version()); });

  // Exceptions: registered general-to-specific (pybind11 tries the last registered first).
  static py::exception<Error> base_error(m, "RateoptError", PyExc_RuntimeError);
  static py::exception<ParseError> parse_error(m, "ParseError", PyExc_ValueError);
  static py::exception<NotFound> not_found(m, "NotFoundError", PyExc_ValueError);
  static py::exception<IoError> io_error(m, "IoError", PyExc_OSError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ParseError& e) {
      parse_error(e.what());
    } catch (const NotFound& e) {
      not_found(e.what());
    } catch (const IoError& e) {
      io_error(e.what());
    } catch (const Error& e) {
      base_error(e.what());
    }
  });

  // ---- decide ----
  // Keyword defaults are the library's (DecideOptions), never re-typed here.
  static const DecideOptions decide_defaults{};
  py::class_<Decision>(m, "Decision")
      .def_property_readonly("selected",
                             [](const Decision& d) { return indices_to_numpy(d.selected); })
      .def_readonly("expected", &Decision::expected)
      .def_property_readonly("expected_by_k",
                             [](const Decision& d) { return to_numpy(d.expected_by_k); })
      .def_property_readonly("method",
                             [](const Decision& d) { return std::string(to_string(d.method)); })
      .def_readonly("error_bound", &Decision::error_bound)
      .def_readonly("none", &Decision::none)
      .def_property_readonly("expected_by_k_none",
                             [](const Decision& d) { return to_numpy(d.expected_by_k_none); });

  m.def(
      "decide",
      [](const Array<double>& p, const std::string& metric, const std::string& model,
         const std::string& method, bool all_k, double truncation, bool early_stop,
         double fast_tolerance, double empty_score, bool none_item) {
        require_ndim(p, 1, "probabilities");
        const DecideMetric mt = DecideMetric::from_name(metric);
        const DecideOptions o = make_options(method, all_k, truncation, early_stop, fast_tolerance,
                                             empty_score, none_item);
        const DecideModel md = parse_model(model);
        const auto s = span_of(p);
        py::gil_scoped_release release;
        return md == DecideModel::kMulticlass ? decide_multiclass(s, mt, o)
                                              : decide_independent(s, mt, o);
      },
      "probabilities"_a, "metric"_a, "model"_a = "independent",
      "method"_a = std::string(to_string(decide_defaults.method)),
      "all_k"_a = decide_defaults.all_k, "truncation"_a = decide_defaults.truncation,
      "early_stop"_a = decide_defaults.early_stop,
      "fast_tolerance"_a = decide_defaults.fast_tolerance,
      "empty_score"_a = decide_defaults.empty_score, "none_item"_a = decide_defaults.none_item,
      "One instance: independent marginals or class probabilities.");
  m.def("decide_rows", &decide_rows, "rows"_a, "metric"_a, "model"_a = "independent",
        "method"_a = std::string(to_string(decide_defaults.method)),
        "all_k"_a = decide_defaults.all_k, "truncation"_a = decide_defaults.truncation,
        "early_stop"_a = decide_defaults.early_stop,
        "fast_tolerance"_a = decide_defaults.fast_tolerance,
        "empty_score"_a = decide_defaults.empty_score, "none_item"_a = decide_defaults.none_item,
        "n_threads"_a = 0,
        "A batch: rows of a 2-D array or a list of 1-D arrays; returns flat arrays.");
  m.def(
      "decide_gfm",
      [](const Array<double>& p, double p0, const std::string& metric, const std::string& method,
         bool all_k, double empty_score) {
        const GfmInput in = gfm_input(p, p0);
        const DecideMetric mt = DecideMetric::from_name(metric);
        const DecideOptions o = gfm_options(method, all_k, empty_score);
        py::gil_scoped_release release;
        return decide_gfm(in, mt, o);
      },
      "P"_a, "p0"_a, "metric"_a, "method"_a = std::string(to_string(decide_defaults.method)),
      "all_k"_a = decide_defaults.all_k, "empty_score"_a = decide_defaults.empty_score);
  m.def(
      "decide_gfm_rows",
      [](const py::list& ps, const Array<double>& p0, const std::string& metric,
         const std::string& method, bool all_k, double empty_score, int n_threads) {
        if (static_cast<std::size_t>(p0.size()) != ps.size())
          throw InvalidArgument("p0 has " + std::to_string(p0.size()) + " entries, expected " +
                                std::to_string(ps.size()) + " (one per instance)");
        std::vector<GfmInput> inputs;
        inputs.reserve(ps.size());
        for (std::size_t i = 0; i < ps.size(); ++i) {
          const auto a = Array<double>::ensure(ps[i]);
          if (!a) throw py::error_already_set();
          inputs.push_back(gfm_input(a, p0.data()[i]));
        }
        const DecideMetric mt = DecideMetric::from_name(metric);
        const DecideOptions o = gfm_options(method, all_k, empty_score);
        std::vector<Decision> ds;
        {
          py::gil_scoped_release release;
          ds = decide_gfm_batch(inputs, mt, o, n_threads);
        }
        return pack_decisions(ds, all_k);
      },
      "P"_a, "p0"_a, "metric"_a, "method"_a = std::string(to_string(decide_defaults.method)),
      "all_k"_a = decide_defaults.all_k, "empty_score"_a = decide_defaults.empty_score,
      "n_threads"_a = 0);
  m.def(
      "decide_gfm_samples",
      [](const Array<std::int64_t>& indptr, const Array<std::int32_t>& indices,
         const OptArray& weights, std::size_t m, const std::string& metric,
         const std::string& method, bool all_k, double empty_score) {
        const LabelSetsView v = label_sets(indptr, indices, m);
        const DecideMetric mt = DecideMetric::from_name(metric);
        const DecideOptions o = gfm_options(method, all_k, empty_score);
        const auto w = span_of(weights);
        py::gil_scoped_release release;
        return decide_gfm_samples(v, w, m, mt, o);
      },
      "indptr"_a, "indices"_a, "weights"_a, "m"_a, "metric"_a,
      "method"_a = std::string(to_string(decide_defaults.method)),
      "all_k"_a = decide_defaults.all_k, "empty_score"_a = decide_defaults.empty_score);
  m.def(
      "decide_gfm_samples_rows",
      [](const py::list& instances, std::size_t m, const std::string& metric,
         const std::string& method, bool all_k, double empty_score, int n_threads) {
        // instances: list of (indptr int64, indices int32, weights float64 or None).
        std::vector<py::object> keep;
        std::vector<LabelSetsView> views;
        std::vector<std::span<const double>> ws;
        for (const auto& item : instances) {
          const auto t = item.cast<py::tuple>();
          const auto ip = Array<std::int64_t>::ensure(t[0]);
          const auto ix = Array<std::int32_t>::ensure(t[1]);
          if (!ip || !ix) throw py::error_already_set();
          views.push_back(label_sets(ip, ix, m));
          keep.push_back(ip);
          keep.push_back(ix);
          if (t[2].is_none()) {
            ws.emplace_back();
          } else {
            const auto w = Array<double>::ensure(t[2]);
            if (!w) throw py::error_already_set();
            ws.push_back(span_of(w));
            keep.push_back(w);
          }
        }
        const DecideMetric mt = DecideMetric::from_name(metric);
        const DecideOptions o = gfm_options(method, all_k, empty_score);
        std::vector<Decision> ds;
        {
          py::gil_scoped_release release;
          ds = decide_gfm_samples_batch(views, ws, m, mt, o, n_threads);
        }
        return pack_decisions(ds, all_k);
      },
      "instances"_a, "m"_a, "metric"_a, "method"_a = std::string(to_string(decide_defaults.method)),
      "all_k"_a = decide_defaults.all_k, "empty_score"_a = decide_defaults.empty_score,
      "n_threads"_a = 0);
  m.def(
      "gfm_from_samples",
      [](const Array<std::int64_t>& indptr, const Array<std::int32_t>& indices,
         const OptArray& weights, std::size_t m) {
        const GfmInput in = gfm_from_samples(label_sets(indptr, indices, m), span_of(weights), m);
        py::array_t<double> p({static_cast<py::ssize_t>(in.m), static_cast<py::ssize_t>(in.m)});
        std::copy(in.p.begin(), in.p.end(), p.mutable_data());
        return py::make_tuple(p, in.p_zero);
      },
      "indptr"_a, "indices"_a, "weights"_a, "m"_a);
  m.def(
      "select_threshold",
      [](const Array<double>& p, double t) {
        return indices_to_numpy(select_threshold(span_of(p), t));
      },
      "probabilities"_a, "threshold"_a);
  m.def(
      "select_top_k",
      [](const Array<double>& p, std::size_t k) {
        return indices_to_numpy(select_top_k(span_of(p), k));
      },
      "probabilities"_a, "k"_a);
  m.def(
      "tune_threshold",
      [](const Array<double>& scores, const Array<std::int32_t>& labels, const std::string& metric,
         const OptArray& weights) {
        return tune_threshold(span_of(scores), span_of(labels), DecideMetric::from_name(metric),
                              span_of(weights));
      },
      "scores"_a, "labels"_a, "metric"_a, "weights"_a = py::none());
  m.def(
      "decide_utility",
      [](const std::string& metric, double tp, double fp, double fn, double tn) {
        return DecideMetric::from_name(metric).utility(tp, fp, fn, tn);
      },
      "metric"_a, "tp"_a, "fp"_a, "fn"_a, "tn"_a);

  // ---- metrics ----
  m.def("metric_catalogue", [] {
    py::list out;
    for (const auto& info : metric_catalogue())
      out.append(
          py::dict("name"_a = std::string(info.name), "summary"_a = std::string(info.summary),
                   "bigger_is_better"_a = info.bigger_is_better, "has_param"_a = info.has_param,
                   "default_param"_a = info.default_param, "needs_baseline"_a = info.needs_baseline,
                   "needs_labels"_a = info.needs_labels));
    return out;
  });
  m.def(
      "count_slice",
      [](const Array<std::int32_t>& labels, const Array<double>& predictions,
         const OptArray& weights, const std::optional<Array<std::uint8_t>>& mask,
         const OptArray& baseline) {
        return counts_to_dict(count_slice(span_of(labels), span_of(predictions), span_of(weights),
                                          span_of(mask), span_of(baseline)));
      },
      "labels"_a, "predictions"_a, "weights"_a = py::none(), "mask"_a = py::none(),
      "baseline"_a = py::none());
  m.def(
      "compute_metric",
      [](const std::string& spec, const Array<std::int32_t>& labels,
         const Array<double>& predictions, const OptArray& weights,
         const std::optional<Array<std::uint8_t>>& mask, const OptArray& baseline) {
        const SliceCounts c = count_slice(span_of(labels), span_of(predictions), span_of(weights),
                                          span_of(mask), span_of(baseline));
        return compute_metric(spec, c);
      },
      "spec"_a, "labels"_a, "predictions"_a, "weights"_a = py::none(), "mask"_a = py::none(),
      "baseline"_a = py::none());
  m.def(
      "roc_auc",
      [](const Array<double>& scores, const Array<std::int32_t>& labels, const OptArray& weights,
         const std::optional<Array<std::uint8_t>>& mask) {
        return roc_auc(span_of(scores), span_of(labels), span_of(weights), span_of(mask));
      },
      "scores"_a, "labels"_a, "weights"_a = py::none(), "mask"_a = py::none());
  m.def(
      "average_precision",
      [](const Array<double>& scores, const Array<std::int32_t>& labels, const OptArray& weights,
         const std::optional<Array<std::uint8_t>>& mask) {
        return average_precision(span_of(scores), span_of(labels), span_of(weights), span_of(mask));
      },
      "scores"_a, "labels"_a, "weights"_a = py::none(), "mask"_a = py::none());
  m.def(
      "multilabel_scores",
      [](const Array<std::int64_t>& t_indptr, const Array<std::int32_t>& t_indices,
         const Array<std::int64_t>& p_indptr, const Array<std::int32_t>& p_indices,
         std::size_t num_labels, const OptArray& weights,
         const std::optional<Array<std::uint8_t>>& mask) {
        const MultilabelScores s = multilabel_scores(label_sets(t_indptr, t_indices, num_labels),
                                                     label_sets(p_indptr, p_indices, num_labels),
                                                     span_of(weights), span_of(mask));
        return py::dict("instance_f1"_a = s.instance_f1, "instance_jaccard"_a = s.instance_jaccard,
                        "micro_f1"_a = s.micro_f1, "macro_f1"_a = s.macro_f1,
                        "hamming_loss"_a = s.hamming_loss, "subset_accuracy"_a = s.subset_accuracy);
      },
      "truth_indptr"_a, "truth_indices"_a, "pred_indptr"_a, "pred_indices"_a, "num_labels"_a,
      "weights"_a = py::none(), "mask"_a = py::none());
  m.def(
      "multiclass_scores",
      [](const Array<std::int32_t>& truth, const Array<std::int32_t>& predicted,
         std::size_t num_classes, const OptArray& weights,
         const std::optional<Array<std::uint8_t>>& mask) {
        const MulticlassScores s = multiclass_scores(span_of(truth), span_of(predicted),
                                                     num_classes, span_of(weights), span_of(mask));
        return py::dict("accuracy"_a = s.accuracy, "macro_f1"_a = s.macro_f1);
      },
      "truth"_a, "predicted"_a, "num_classes"_a, "weights"_a = py::none(), "mask"_a = py::none());

  // ---- expressions ----
  py::class_<Expression>(m, "Expression")
      .def_static("parse", &Expression::parse, "text"_a)
      .def_property_readonly("text", &Expression::text)
      .def_property_readonly("is_constraint", &Expression::is_constraint)
      .def_property_readonly(
          "relation", [](const Expression& e) { return std::string(to_string(e.relation())); })
      .def_property_readonly("rates", [](const Expression& e) {
        std::vector<std::string> out;
        for (const auto& r : e.rates()) out.push_back(r.to_string());
        return out;
      });

  // ---- data ----
  py::class_<FeatureMatrix>(m, "FeatureMatrix")
      .def_static("dense", &dense_matrix, "X"_a, "Row-major float64 matrix (copied).")
      .def_static("csr", &csr_matrix, "indptr"_a, "indices"_a, "data"_a, "cols"_a,
                  "CSR matrix (copied; validated).")
      .def_property_readonly("rows", &FeatureMatrix::rows)
      .def_property_readonly("cols", &FeatureMatrix::cols)
      .def_property_readonly("is_sparse", &FeatureMatrix::is_sparse)
      .def_property_readonly("nnz", &FeatureMatrix::nnz);

  py::class_<Dataset, std::shared_ptr<Dataset>>(m, "Dataset")
      .def(py::init([](const FeatureMatrix& x, const std::string& kind,
                       const std::optional<Array<std::int32_t>>& values,
                       const std::optional<Array<std::int64_t>>& set_indptr,
                       const std::optional<Array<std::int32_t>>& set_indices,
                       std::vector<std::string> names, const OptArray& weights,
                       const py::list& columns, std::vector<std::string> feature_names) {
             return std::make_shared<Dataset>(make_dataset(x, kind, values, set_indptr, set_indices,
                                                           std::move(names), weights, columns,
                                                           std::move(feature_names)));
           }),
           "features"_a, "label_kind"_a = "none", "values"_a = py::none(),
           "set_indptr"_a = py::none(), "set_indices"_a = py::none(),
           "names"_a = std::vector<std::string>{}, "weights"_a = py::none(),
           "columns"_a = py::list(), "feature_names"_a = std::vector<std::string>{})
      .def_property_readonly("num_rows", &Dataset::num_rows)
      .def_property_readonly("num_features", &Dataset::num_features)
      .def_property_readonly(
          "label_kind", [](const Dataset& d) { return std::string(to_string(d.labels().kind)); })
      .def_property_readonly("column_names", &Dataset::column_names);

  m.def(
      "slice_mask",
      [](const Dataset& d, const std::string& slice) {
        return to_numpy(slice_mask(d, Slice::parse(slice)));
      },
      "dataset"_a, "slice"_a);

  m.def(
      "evaluate",
      [](const std::vector<std::string>& expressions, const py::list& data, double ci,
         std::size_t ci_resamples, std::uint64_t ci_seed, int n_threads) {
        // data: list of (name, Dataset, prob_positive, scores, set_indptr, set_indices, classes).
        // ci > 0: intervals at that level (expression_intervals).
        std::vector<EvalData> keep;
        for (const auto& item : data) {
          const auto t = item.cast<py::tuple>();
          EvalData d;
          d.name = t[0].cast<std::string>();
          d.data = t[1].cast<std::shared_ptr<Dataset>>();
          d.predictions = make_predictions(t[2].cast<OptArray>(), t[3].cast<OptArray>(),
                                           t[4].cast<std::optional<Array<std::int64_t>>>(),
                                           t[5].cast<std::optional<Array<std::int32_t>>>(),
                                           t[6].cast<std::optional<Array<std::int32_t>>>());
          keep.push_back(std::move(d));
        }
        std::vector<NamedData> named;
        for (const auto& d : keep) named.push_back({d.name, d.data.get(), d.predictions.get()});
        std::vector<ExpressionValue> values;
        std::vector<ValueInterval> intervals;
        {
          py::gil_scoped_release release;
          for (const std::string& e : expressions) values.push_back(evaluate_text(e, named));
          if (ci > 0)
            intervals = expression_intervals(
                expressions, named,
                {.level = ci, .resamples = ci_resamples, .seed = ci_seed, .n_threads = n_threads});
        }
        py::list out;
        for (std::size_t k = 0; k < values.size(); ++k) {
          const auto& v = values[k];
          py::dict row("text"_a = v.text, "value"_a = v.value, "rhs"_a = v.rhs,
                       "violation"_a = v.violation, "is_constraint"_a = v.is_constraint,
                       "satisfied"_a = v.satisfied,
                       "relation"_a = std::string(to_string(v.relation)));
          if (ci > 0) {
            row["ci_low"] = intervals[k].range.low;
            row["ci_high"] = intervals[k].range.high;
            row["ci_method"] = std::string(to_string(intervals[k].method));
          }
          out.append(row);
        }
        return out;
      },
      "expressions"_a, "data"_a, "ci"_a = 0.0, "ci_resamples"_a = 1000, "ci_seed"_a = 0,
      "n_threads"_a = 0);

  // ---- models ----
  py::class_<Classifier>(m, "Classifier")
      .def_static(
          "from_json",
          [](const std::string& json, const std::string& name) {
            return Classifier::from_json(json, name);
          },
          "json"_a, "name"_a = "<string>")
      .def_static("load", &Classifier::load, "path"_a)
      .def("to_json", &Classifier::to_json)
      .def("save", &Classifier::save, "path"_a)
      .def("predict", &predict_model, "X"_a, "mode"_a = "deterministic", "seed"_a = 0,
           "n_threads"_a = 0)
      // Group-threshold models (kind "group_threshold") read their group columns from a Dataset.
      .def(
          "predict",
          [](const Classifier& c, const Dataset& d, const std::string& mode, std::uint64_t seed,
             int n_threads) {
            const PredictMode m = parse_predict_mode(mode);
            py::array_t<double> out(static_cast<py::ssize_t>(d.num_rows()));
            std::span<double> s(out.mutable_data(), d.num_rows());
            py::gil_scoped_release release;
            c.predict(d, m, s, seed, n_threads);
            return out;
          },
          "data"_a, "mode"_a = "deterministic", "seed"_a = 0, "n_threads"_a = 0)
      .def(
          "decision_function",
          [](const Classifier& c, const FeatureMatrix& x, int n_threads) {
            py::array_t<double> out(static_cast<py::ssize_t>(x.rows()));
            std::span<double> s(out.mutable_data(), x.rows());
            py::gil_scoped_release release;
            c.decision_function(x, s, n_threads);
            return out;
          },
          "X"_a, "n_threads"_a = 0)
      .def(
          "decision_function",
          [](const Classifier& c, const Dataset& d, int n_threads) {
            py::array_t<double> out(static_cast<py::ssize_t>(d.num_rows()));
            std::span<double> s(out.mutable_data(), d.num_rows());
            py::gil_scoped_release release;
            c.decision_function(d, s, n_threads);
            return out;
          },
          "data"_a, "n_threads"_a = 0)
      .def_readonly("kind", &Classifier::kind)
      .def_readonly("group_columns", &Classifier::group_columns)
      .def_property_readonly(
          "group_rules",
          [](const Classifier& c) {
            py::list out;
            for (const GroupRule& r : c.group_rules)
              out.append(py::dict("key"_a = r.key, "thresholds"_a = to_numpy(r.thresholds),
                                  "weights"_a = to_numpy(r.weights)));
            return out;
          })
      .def_property_readonly("mixture", [](const Classifier& c) { return to_numpy(c.mixture); })
      .def_readonly("best", &Classifier::best)
      .def_property_readonly("link",
                             [](const Classifier& c) { return std::string(to_string(c.link)); })
      .def_property_readonly("is_linear", &Classifier::is_linear)
      .def_property_readonly("num_features",
                             [](const Classifier& c) {
                               return c.components.empty() ? std::size_t{0}
                                                           : c.components.front().num_features();
                             })
      .def_property_readonly(
          "weights",
          [](const Classifier& c) {
            const std::size_t k = c.components.size();
            const std::size_t d = k ? c.components[0].num_features() : 0;
            py::array_t<double> w({static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(d)});
            for (std::size_t i = 0; i < k; ++i) {
              const LinearModel& lm = c.components[i].linear("weights (coef_)");
              std::copy(lm.weights.begin(), lm.weights.end(), w.mutable_data() + i * d);
            }
            return w;
          })
      .def_property_readonly("biases",
                             [](const Classifier& c) {
                               std::vector<double> b;
                               for (const auto& sc : c.components)
                                 b.push_back(sc.linear("biases (intercept_)").bias);
                               return to_numpy(b);
                             })
      .def_readonly("options_json", &Classifier::options_json)
      .def_readonly("report_json", &Classifier::report_json)
      .def(py::pickle([](const Classifier& c) { return c.to_json(); },
                      [](const std::string& json) { return Classifier::from_json(json); }));

  py::class_<OneVsRest>(m, "OneVsRest")
      .def_static(
          "from_json",
          [](const std::string& json, const std::string& name) {
            return OneVsRest::from_json(json, name);
          },
          "json"_a, "name"_a = "<string>")
      .def_static("load", &OneVsRest::load, "path"_a)
      .def("to_json", &OneVsRest::to_json)
      .def("save", &OneVsRest::save, "path"_a)
      .def_readonly("names", &OneVsRest::names)
      .def_property_readonly("num_outputs", &OneVsRest::num_outputs)
      .def(
          "predict",
          [](const OneVsRest& o, const FeatureMatrix& x, const std::string& mode,
             std::uint64_t seed, int n_threads) {
            const PredictMode pm = parse_predict_mode(mode);
            const std::size_t l = o.num_outputs();
            py::array_t<double> out(
                {static_cast<py::ssize_t>(x.rows()), static_cast<py::ssize_t>(l)});
            std::span<double> s(out.mutable_data(), x.rows() * l);
            py::gil_scoped_release release;
            o.predict(x, pm, s, seed, n_threads);
            return out;
          },
          "X"_a, "mode"_a = "probability", "seed"_a = 0, "n_threads"_a = 0)
      .def(py::pickle([](const OneVsRest& c) { return c.to_json(); },
                      [](const std::string& json) { return OneVsRest::from_json(json); }));

  m.def(
      "model_format",
      [](const std::string& json, const std::string& name) { return model_format(json, name); },
      "json"_a, "name"_a = "<string>");

  m.def(
      "fit_logistic_regression",
      [](const FeatureMatrix& x, const Array<std::int32_t>& labels, const OptArray& weights,
         double c, bool fit_intercept, double tol, int max_iter, int memory, int n_threads,
         std::vector<std::string> feature_names) {
        LogisticRegressionOptions o;
        o.c = c;
        o.fit_intercept = fit_intercept;
        o.tol = tol;
        o.max_iter = max_iter;
        o.memory = memory;
        o.n_threads = n_threads;
        const auto y = span_of(labels);
        const auto w = span_of(weights);
        LogisticRegressionResult r;
        {
          py::gil_scoped_release release;
          r = fit_logistic_regression(x, y, w, o);
        }
        Classifier model = logistic_regression_model(
            std::move(r.model), o, Encoding::for_matrix(x.cols(), std::move(feature_names)));
        return py::dict("model"_a = std::move(model), "status"_a = std::string(to_string(r.status)),
                        "iterations"_a = r.iterations, "objective"_a = r.objective,
                        "gradient_norm"_a = r.gradient_norm);
      },
      "X"_a, "labels"_a, "weights"_a = py::none(), "C"_a = LogisticRegressionOptions{}.c,
      "fit_intercept"_a = LogisticRegressionOptions{}.fit_intercept,
      "tol"_a = LogisticRegressionOptions{}.tol,
      "max_iter"_a = LogisticRegressionOptions{}.max_iter,
      "memory"_a = LogisticRegressionOptions{}.memory, "n_threads"_a = 0,
      "feature_names"_a = std::vector<std::string>{});

  m.def("gbdt_available", &gbdt_available,
        "Whether this build has XGBoost (boosted trees: fit_gbdt, learner='gbdt').");
  m.def(
      "fit_gbdt",
      [](const FeatureMatrix& x, const Array<std::int32_t>& labels, const OptArray& weights,
         const py::dict& options, std::vector<std::string> feature_names) {
        // The gbdt_* keys, seed and n_threads of the option table, checked by it.
        TrainOptions t = train_options_from(options);
        t.learner = Learner::kGbdt;
        const GbdtOptions g = gbdt_options(t);
        const auto y = span_of(labels);
        const auto w = span_of(weights);
        const auto start = std::chrono::steady_clock::now();
        TreeEnsemble trees;
        {
          py::gil_scoped_release release;
          trees = fit_gbdt(x, y, w, g);
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        Classifier model =
            Classifier::single(std::move(trees), Link::kLogistic,
                               Encoding::for_matrix(x.cols(), std::move(feature_names)));
        model.kind = "gbdt";
        model.options_json = train_options_json(t, TrainOptionsJson::kModel);
        return py::dict("model"_a = std::move(model), "seconds"_a = seconds);
      },
      "X"_a, "labels"_a, "weights"_a = py::none(), "options"_a = py::dict(),
      "feature_names"_a = std::vector<std::string>{},
      "Boosted trees (rateopt/gbdt.hpp): a binary logistic XGBoost booster on 0/1 labels and "
      "optional weights; options: gbdt_* keys, seed and n_threads of train_options(). Returns "
      "{'model': Classifier (link logistic), 'seconds'}.");

  m.def("train", &rateopt::python::train, "objective"_a, "maximize"_a, "constraints"_a, "data"_a,
        "options"_a, "progress"_a = py::none(), "progress_every"_a = 0,
        "Rate-constrained training (train.hpp); data: list of (name, Dataset); options: keys of "
        "train_options(); progress: a callable getting a dict per progress record (every "
        "progress_every rounds, 0: the solver's default). Ctrl-C raises KeyboardInterrupt "
        "within a round.");
  m.def("train_guaranteed", &rateopt::python::train_guaranteed, "objective"_a, "maximize"_a,
        "constraints"_a, "data"_a, "options"_a, "confidence"_a,
        "safety_fraction"_a = GuaranteeOptions{}.safety_fraction, "stochastic"_a = false,
        "width_factor"_a = GuaranteeOptions{}.width_factor, "move"_a = GuaranteeOptions{}.shrink,
        "The guaranteed mode (train.hpp, train_guaranteed; rateopt train --confidence) on one "
        "dataset: the dict of train() plus 'guarantee' (per constraint: margin, safety-test "
        "upper bound, certified; passed). status is 'no_solution_found' when the safety test "
        "fails.");
  m.def("train_two_dataset", &rateopt::python::train_two_dataset, "objective"_a, "maximize"_a,
        "constraints"_a, "data"_a, "options"_a, "constraint_fraction"_a,
        "Cotter et al.'s two-dataset scheme (train.hpp, train_two_dataset; rateopt train "
        "--two-dataset) on one dataset: the dict of train() plus 'two_dataset' (the share held "
        "out for the constraint side and the rows of each part).");
  m.def("guarantee_defaults", [] {
    const GuaranteeOptions g;
    return py::dict("confidence"_a = g.confidence, "safety_fraction"_a = g.safety_fraction,
                    "width_factor"_a = g.width_factor);
  });
  m.def("postprocess_guaranteed", &rateopt::python::postprocess_guaranteed_py, "objective"_a,
        "maximize"_a, "constraints"_a, "data"_a, "base"_a, "group_columns"_a, "n_threads"_a,
        "confidence"_a, "safety_fraction"_a, "stochastic"_a, "seed"_a, "tolerance"_a,
        "deterministic"_a = false,
        "Post-processing with a guarantee (postprocess.hpp, postprocess_guaranteed): the dict "
        "of postprocess() plus 'guarantee'; status 'no_solution_found' when the safety test "
        "fails.");
  m.def(
      "safety_rows",
      [](std::size_t rows, std::uint64_t seed, double safety_fraction) {
        GuaranteeOptions g;
        g.seed = seed;
        g.safety_fraction = safety_fraction;
        const std::vector<std::uint8_t> v = rateopt::safety_rows(rows, 0, g);
        py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(v.size()));
        std::copy(v.begin(), v.end(), out.mutable_data());
        return out;
      },
      "rows"_a, "seed"_a, "safety_fraction"_a,
      "The guaranteed mode's split (intervals.hpp, safety_rows): 1 for each row of the safety "
      "part, keyed by (seed, row).");
  m.def("postprocess", &rateopt::python::postprocess_thresholds, "objective"_a, "maximize"_a,
        "constraints"_a, "data"_a, "base"_a, "group_columns"_a = std::vector<std::string>{},
        "n_threads"_a = 0, "deterministic"_a = false, "max_nodes"_a = 0,
        "Exact randomised group thresholds of base's score (postprocess.hpp, the CLI's --solver "
        "postprocess), or with deterministic=True the best single threshold per group (branch "
        "and bound; max_nodes: its budget of LP solves, 0 for the default); data: list of "
        "(name, Dataset).");
  m.def("train_with_oracle", &rateopt::python::train_with_oracle, "objective"_a, "maximize"_a,
        "constraints"_a, "data"_a, "options"_a, "oracle"_a,
        "Rate-constrained training of any base model (train.hpp, train_with_prediction_oracle); "
        "oracle(costs: list of arrays, one per dataset) -> list of 0/1 prediction arrays of the "
        "classifier it fitted. Returns the mixture over the oracle's answers (by call index) and "
        "the deterministic pick.");
  m.def("train_guaranteed_with_oracle", &rateopt::python::train_guaranteed_with_oracle,
        "objective"_a, "maximize"_a, "constraints"_a, "data"_a, "options"_a, "confidence"_a,
        "safety_fraction"_a, "stochastic"_a, "width_factor"_a, "move"_a, "oracle"_a,
        "The guaranteed mode around a Python learner (train_with_oracle's oracle, fitting on the "
        "candidate rows, plus oracle.fitted and oracle.predict_parts(answers) -> (candidate, "
        "safety) prediction matrices): the dict of train_guaranteed with the mixture as "
        "'components' (answer, if0, if1), 'mixture' and 'best'.");
  m.def("train_options", &train_options,
        "The rate-training option table (train_options.hpp): one dict per option with key, flag, "
        "type, default, check, solvers, help.");
  m.def("fit_ramp", &fit_ramp_expressions, "objective"_a, "maximize"_a, "constraints"_a, "data"_a,
        "options"_a, "progress"_a = py::none(),
        "Goh et al.'s ramp solver over linear rate expressions; progress: a callable getting a "
        "dict per MM step. Ctrl-C raises KeyboardInterrupt after the current MM step.");

  bind_multilabel(m);
}
