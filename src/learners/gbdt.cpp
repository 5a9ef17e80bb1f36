// Gradient-boosted trees through XGBoost's C API (rateopt/gbdt.hpp).
//
// Rows reach XGBoost as a dense float matrix (a CSR row's absent entries are 0, as for linear
// models: XGBoost would read them as missing, and a model fitted on sparse rows would then score
// the same rows given densely otherwise). Scoring goes a block of rows at a time, so that the
// float copy stays small.
#include "rateopt/gbdt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "rateopt/error.hpp"

#if RATEOPT_WITH_XGBOOST
#include <dlfcn.h>
#include <xgboost/c_api.h>
#endif

namespace rateopt {

void validate(const GbdtOptions& o) {
  RATEOPT_CHECK(o.rounds >= 1, "gbdt rounds is {}, expected at least 1", o.rounds);
  RATEOPT_CHECK(o.max_depth >= 1 && o.max_depth <= 32,
                "gbdt max_depth is {}, expected a depth from 1 to 32", o.max_depth);
  RATEOPT_CHECK(std::isfinite(o.learning_rate) && o.learning_rate > 0 && o.learning_rate <= 1,
                "gbdt learning_rate is {}, expected a number in (0, 1]", o.learning_rate);
  RATEOPT_CHECK(std::isfinite(o.l2) && o.l2 >= 0, "gbdt l2 is {}, expected a finite number >= 0",
                o.l2);
  RATEOPT_CHECK(std::isfinite(o.min_child_weight) && o.min_child_weight >= 0,
                "gbdt min_child_weight is {}, expected a finite number >= 0", o.min_child_weight);
  RATEOPT_CHECK(std::isfinite(o.subsample) && o.subsample > 0 && o.subsample <= 1,
                "gbdt subsample is {}, expected a share in (0, 1]", o.subsample);
  RATEOPT_CHECK(std::isfinite(o.colsample) && o.colsample > 0 && o.colsample <= 1,
                "gbdt colsample is {}, expected a share in (0, 1]", o.colsample);
}

#if RATEOPT_WITH_XGBOOST
bool gbdt_available() noexcept {
  return true;
}
#else
bool gbdt_available() noexcept {
  return false;
}
#endif

namespace {

[[noreturn]] [[maybe_unused]] void missing_xgboost() {
  throw InvalidArgument(
      "boosted trees need XGBoost, and this build of rateopt has none: install libxgboost-dev "
      "(bash scripts/deps.sh) and configure again (CMake option RATEOPT_XGBOOST, default AUTO)");
}

// Rows [first, first + count) of x as row-major floats with `cols` columns (absent CSR entries
// and columns past x's are 0).
[[maybe_unused]] std::vector<float> dense_floats(const FeatureMatrix& x, std::size_t first,
                                                 std::size_t count, std::size_t cols) {
  std::vector<float> out(count * cols, 0.0F);
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    for (std::size_t r = 0; r < count; ++r) {
      const auto i = first + r;
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
        out[r * cols + static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)])] =
            static_cast<float>(v.values[static_cast<std::size_t>(k)]);
    }
  } else {
    const DenseView v = x.dense_view();
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t j = 0; j < v.cols; ++j)
        out[r * cols + j] = static_cast<float>(v(first + r, j));
  }
  return out;
}

#if RATEOPT_WITH_XGBOOST

void check_xgb(int rc, const char* what) {
  if (rc != 0) throw InvalidArgument(fmt::format("XGBoost: {}: {}", what, XGBGetLastError()));
}

// XGBoost's matrix of row-major floats (rows x cols), freed with its handle.
std::shared_ptr<void> new_matrix(const std::vector<float>& data, std::size_t rows,
                                 std::size_t cols) {
  DMatrixHandle m = nullptr;
  check_xgb(XGDMatrixCreateFromMat(data.data(), static_cast<bst_ulong>(rows),
                                   static_cast<bst_ulong>(cols), std::nanf(""), &m),
            "creating a matrix");
  return {m, [](void* p) { XGDMatrixFree(p); }};
}

std::shared_ptr<void> new_booster(const DMatrixHandle* cache, bst_ulong n) {
  BoosterHandle b = nullptr;
  check_xgb(XGBoosterCreate(cache, n, &b), "creating a booster");
  return {b, [](void* p) { XGBoosterFree(p); }};
}

void set_param(BoosterHandle b, const char* key, const std::string& value) {
  check_xgb(XGBoosterSetParam(b, key, value.c_str()), key);
}

// The booster of b's first `rounds` trees (XGBoost's slice): in memory, without b's training
// cache.
std::shared_ptr<void> first_trees(BoosterHandle b, std::size_t rounds) {
  BoosterHandle sliced = nullptr;
  check_xgb(XGBoosterSlice(b, 0, static_cast<int>(rounds), 1, &sliced), "slicing the model");
  return {sliced, [](void* p) { XGBoosterFree(p); }};
}

std::string model_json(const std::shared_ptr<void>& b) {
  bst_ulong len = 0;
  const char* buf = nullptr;
  check_xgb(XGBoosterSaveModelToBuffer(b.get(), R"({"format": "json"})", &len, &buf),
            "saving the model");
  return {buf, len};
}

std::mutex& predict_mutex() {
  static std::mutex m;
  return m;
}

// XGBoost 1.7 crashes (a segmentation fault: Adult, constrained training, a loaded 2-core
// machine, from the CLI and from Python) when OpenMP's dynamic threads give its parallel regions
// fewer threads than it asked for (OMP_DYNAMIC=true). While it runs, dynamic threads are off for
// the calling thread (OpenMP's dyn-var is per task; XGBoost's regions start from this thread),
// and back on afterwards. The switch is looked up at run time: rateopt itself does not link
// OpenMP (libgomp comes with libxgboost).
class DynamicThreadsOff {
 public:
  DynamicThreadsOff() {
    using Get = int (*)();
    using Set = void (*)(int);
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's pointers to functions
    const auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "omp_get_dynamic"));
    set_ = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "omp_set_dynamic"));
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
    if (get != nullptr && set_ != nullptr && get() != 0) {
      set_(0);
      restore_ = true;
    }
  }
  DynamicThreadsOff(const DynamicThreadsOff&) = delete;
  DynamicThreadsOff& operator=(const DynamicThreadsOff&) = delete;
  ~DynamicThreadsOff() {
    if (restore_) set_(1);
  }

 private:
  void (*set_)(int) = nullptr;
  bool restore_ = false;
};

#endif

}  // namespace

TreeEnsemble::TreeEnsemble(std::string json, std::size_t num_features)
    : json_(std::move(json)), num_features_(num_features) {
#if RATEOPT_WITH_XGBOOST
  // XGBoost reads any text not starting with '{' as its legacy binary format, where a length read
  // from the wrong bytes asks for an allocation of any size: only a JSON object goes to it.
  RATEOPT_CHECK(!json_.empty() && json_.front() == '{' && nlohmann::json::accept(json_),
                "the boosted-tree model is not XGBoost's JSON model (a JSON object)");
  booster_ = new_booster(nullptr, 0);
  check_xgb(XGBoosterLoadModelFromBuffer(booster_.get(), json_.data(), json_.size()),
            "reading a boosted-tree model");
  bst_ulong features = 0;
  check_xgb(XGBoosterGetNumFeature(booster_.get(), &features), "reading the feature count");
  RATEOPT_CHECK(features == num_features,
                "the boosted-tree model reads {} features, its encoding has {}", features,
                num_features);
  int rounds = 0;
  check_xgb(XGBoosterBoostedRounds(booster_.get(), &rounds), "reading the round count");
  rounds_ = static_cast<std::size_t>(rounds);
#else
  missing_xgboost();
#endif
}

TreeEnsemble::TreeEnsemble(std::string json, std::size_t num_features, std::size_t rounds,
                           std::shared_ptr<void> booster)
    : json_(std::move(json)),
      num_features_(num_features),
      rounds_(rounds),
      booster_(std::move(booster)) {}

void* TreeEnsemble::booster() const {
#if RATEOPT_WITH_XGBOOST
  RATEOPT_CHECK(!json_.empty(), "the boosted-tree model is empty");
  if (booster_ == nullptr) {
    std::shared_ptr<void> b = new_booster(nullptr, 0);
    check_xgb(XGBoosterLoadModelFromBuffer(b.get(), json_.data(), json_.size()),
              "reading a boosted-tree model");
    booster_ = std::move(b);
  }
  return booster_.get();
#else
  missing_xgboost();
#endif
}

void TreeEnsemble::set_offset(double offset) {
  RATEOPT_CHECK(std::isfinite(offset), "the boosted trees' offset is {}, expected a finite number",
                offset);
  offset_ = offset;
}

TreeEnsemble TreeEnsemble::first_rounds(std::size_t rounds) const {
  RATEOPT_CHECK(rounds >= 1 && rounds <= rounds_,
                "the first {} rounds of a boosted-tree model of {}: expected 1 to {}", rounds,
                rounds_, rounds_);
#if RATEOPT_WITH_XGBOOST
  const std::lock_guard lock(predict_mutex());
  std::shared_ptr<void> owned = first_trees(booster(), rounds);
  std::string json = model_json(owned);
  return {std::move(json), num_features_, rounds, std::move(owned)};
#else
  missing_xgboost();
#endif
}

void TreeEnsemble::scores(const FeatureMatrix& x, std::span<double> out, int n_threads) const {
  RATEOPT_CHECK(out.size() == x.rows(), "out has {} entries, expected {} (one per row)", out.size(),
                x.rows());
  scores(x, 0, out, n_threads);
}

void TreeEnsemble::scores(const FeatureMatrix& x, std::size_t first, std::span<double> out,
                          int n_threads) const {
  RATEOPT_CHECK(first <= x.rows() && out.size() <= x.rows() - first,
                "rows [{}, {}) of a matrix of {} rows", first, first + out.size(), x.rows());
  RATEOPT_CHECK(x.cols() <= num_features_,
                "the data has {} features, the boosted-tree model reads {}", x.cols(),
                num_features_);
#if RATEOPT_WITH_XGBOOST
  const std::lock_guard lock(predict_mutex());
  const DynamicThreadsOff fixed_threads;
  set_param(booster(), "nthread", std::to_string(detail::resolve_threads(n_threads)));
  // XGBoost's in-place prediction reads each block of row-major floats where it lies (no DMatrix
  // built per call: on Adult, 7% less CPU for a constrained fit and its report, 10% for predict):
  // margins (type 1), every tree, not training, NaN missing; the bits a DMatrix of the same
  // floats gives (Gbdt.BoostingOnMarginsAreTheModelsScores compares them with XGBoost's).
  constexpr std::size_t kBlock = 65536;
  const char* const config =
      R"({"cache_id": 0, "type": 1, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
      R"("strict_shape": false, "missing": NaN})";
  for (std::size_t at = 0; at < out.size(); at += kBlock) {
    const std::size_t count = std::min(kBlock, out.size() - at);
    const std::vector<float> block = dense_floats(x, first + at, count, num_features_);
    const std::string array =
        fmt::format(R"({{"data": [{}, true], "shape": [{}, {}], "typestr": "<f4", "version": 3}})",
                    reinterpret_cast<std::uintptr_t>(block.data()), count, num_features_);
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* result = nullptr;
    check_xgb(XGBoosterPredictFromDense(booster_.get(), array.c_str(), config, nullptr, &shape,
                                        &dim, &result),
              "predicting");
    RATEOPT_CHECK(dim >= 1 && shape[0] == count, "XGBoost gave {} scores for {} rows",
                  dim >= 1 ? shape[0] : 0, count);
    for (std::size_t r = 0; r < count; ++r) out[at + r] = static_cast<double>(result[r]) + offset_;
  }
#else
  (void)first;
  (void)n_threads;
  missing_xgboost();
#endif
}

namespace {

// Labels (0/1) and weights (none, or >= 0) of n rows, and the options.
void check_fit_inputs(std::size_t n, std::span<const std::int32_t> labels,
                      std::span<const double> weights, const GbdtOptions& options) {
  validate(options);
  RATEOPT_CHECK(labels.size() == n, "labels has {} entries, expected {} (one per row)",
                labels.size(), n);
  RATEOPT_CHECK(weights.empty() || weights.size() == n,
                "weights has {} entries, expected {} (one per row) or none", weights.size(), n);
  for (std::size_t i = 0; i < n; ++i)
    RATEOPT_CHECK(labels[i] == 0 || labels[i] == 1, "labels[{}] is {}, expected 0 or 1", i,
                  labels[i]);
  for (std::size_t i = 0; i < weights.size(); ++i)
    RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                  "weights[{}] is {}, expected a finite number >= 0", i, weights[i]);
}

#if RATEOPT_WITH_XGBOOST

// b's margins of its training matrix m (n rows), from its training cache: the base margins (0
// without) plus each tree's leaf value of the row, added in order in floats, as XGBoost adds them
// when it scores the rows anew (tested); in doubles as TreeEnsemble::scores gives them for a
// fitted booster (its offset, 0, added: a margin of -0 becomes +0).
std::vector<double> cached_margins(BoosterHandle b, DMatrixHandle m, std::size_t n) {
  bst_ulong len = 0;
  const float* result = nullptr;
  check_xgb(XGBoosterPredict(b, m, 1, 0, 0, &len, &result), "predicting");
  RATEOPT_CHECK(len == n, "XGBoost gave {} scores for {} rows", len, n);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(result[i]) + 0.0;
  return out;
}

// A booster fitted with options.rounds rounds to the rows of m (its labels and weights set),
// starting from m's base margins where it has them. prefix (when not null): the margins of m's
// `rows` rows after the first prefix_rounds rounds.
std::shared_ptr<void> boost(DMatrixHandle m, const GbdtOptions& options,
                            std::vector<double>* prefix = nullptr, int prefix_rounds = 0,
                            std::size_t rows = 0) {
  std::shared_ptr<void> b = new_booster(&m, 1);
  set_param(b.get(), "objective", "binary:logistic");
  set_param(b.get(), "tree_method", "hist");
  set_param(b.get(), "nthread", std::to_string(detail::resolve_threads(options.n_threads)));
  set_param(b.get(), "max_depth", std::to_string(options.max_depth));
  set_param(b.get(), "eta", fmt::format("{}", options.learning_rate));
  set_param(b.get(), "lambda", fmt::format("{}", options.l2));
  set_param(b.get(), "min_child_weight", fmt::format("{}", options.min_child_weight));
  set_param(b.get(), "subsample", fmt::format("{}", options.subsample));
  set_param(b.get(), "colsample_bytree", fmt::format("{}", options.colsample));
  // XGBoost's seed is a 32-bit int in its parameters.
  set_param(b.get(), "seed", std::to_string(options.seed % 2147483648ULL));
  set_param(b.get(), "verbosity", "0");
  for (int round = 0; round < options.rounds; ++round) {
    if (prefix != nullptr && round == prefix_rounds) *prefix = cached_margins(b.get(), m, rows);
    check_xgb(XGBoosterUpdateOneIter(b.get(), round, m), "boosting");
  }
  return b;
}

// Sets the labels and (when given) the weights of m's rows.
void set_labels(DMatrixHandle m, std::span<const std::int32_t> labels,
                std::span<const double> weights) {
  const std::size_t n = labels.size();
  std::vector<float> y(labels.begin(), labels.end());
  check_xgb(XGDMatrixSetFloatInfo(m, "label", y.data(), n), "setting the labels");
  if (!weights.empty()) {
    std::vector<float> w(weights.begin(), weights.end());
    check_xgb(XGDMatrixSetFloatInfo(m, "weight", w.data(), n), "setting the weights");
  }
}

// start's model JSON (parsed) with more's trees after its own (ids renumbered); `start` is left
// as it was.
std::string append_trees(nlohmann::json& start, const std::string& more) {
  nlohmann::json b = nlohmann::json::parse(more);
  nlohmann::json& model = start["learner"]["gradient_booster"]["model"];
  nlohmann::json& extra = b["learner"]["gradient_booster"]["model"];
  nlohmann::json& trees = model["trees"];
  nlohmann::json& info = model["tree_info"];
  nlohmann::json& count = model["gbtree_model_param"]["num_trees"];
  const std::size_t own_trees = trees.size();
  const std::size_t own_info = info.size();
  const nlohmann::json own_count = count;
  for (nlohmann::json& t : extra["trees"]) {
    t["id"] = trees.size();
    trees.push_back(std::move(t));
  }
  for (const nlohmann::json& g : extra["tree_info"]) info.push_back(g);
  count = std::to_string(trees.size());
  std::string out = start.dump();
  trees.erase(trees.begin() + static_cast<std::ptrdiff_t>(own_trees), trees.end());
  info.erase(info.begin() + static_cast<std::ptrdiff_t>(own_info), info.end());
  count = own_count;
  return out;
}

#endif

}  // namespace

TreeEnsemble fit_gbdt(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                      std::span<const double> weights, const GbdtOptions& options) {
  // The margins cost one copy of the training cache (O(rows)).
  return fit_gbdt_with_margins(x, labels, weights, options).model;
}

GbdtFit fit_gbdt_with_margins(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                              std::span<const double> weights, const GbdtOptions& options,
                              int prefix_rounds) {
  check_fit_inputs(x.rows(), labels, weights, options);
  RATEOPT_CHECK(x.rows() > 0, "no rows to fit boosted trees to");
  RATEOPT_CHECK(x.cols() > 0, "no features to fit boosted trees to");
  RATEOPT_CHECK(prefix_rounds >= 0 && prefix_rounds < options.rounds,
                "prefix_rounds is {}, expected 0 (none) to {} (fewer than the rounds)",
                prefix_rounds, options.rounds - 1);
#if RATEOPT_WITH_XGBOOST
  const DynamicThreadsOff fixed_threads;
  const std::shared_ptr<void> m =
      new_matrix(dense_floats(x, 0, x.rows(), x.cols()), x.rows(), x.cols());
  set_labels(m.get(), labels, weights);
  GbdtFit out;
  const std::shared_ptr<void> b = boost(
      m.get(), options, prefix_rounds > 0 ? &out.prefix_margins : nullptr, prefix_rounds, x.rows());
  out.margins = cached_margins(b.get(), m.get(), x.rows());
  // Scoring uses a slice of every round: the same trees in memory, without b's training cache
  // (which holds the rows), and not read back from the JSON (XGBoost writes floats exactly).
  const auto rounds = static_cast<std::size_t>(options.rounds);
  out.model = TreeEnsemble(model_json(b), x.cols(), rounds, first_trees(b.get(), rounds));
  return out;
#else
  missing_xgboost();
#endif
}

#if RATEOPT_WITH_XGBOOST
struct BoostOn::StartModel {
  nlohmann::json json;
};
#else
struct BoostOn::StartModel {};
#endif

BoostOn::BoostOn(TreeEnsemble start, std::span<const double> start_margins, const FeatureMatrix& x)
    : start_(std::move(start)), rows_(x.rows()), cols_(x.cols()) {
  RATEOPT_CHECK(!start_.json().empty(), "boosting on from an empty boosted-tree model");
  RATEOPT_CHECK(x.rows() > 0, "no rows to boost on");
  RATEOPT_CHECK(start_.num_features() == x.cols(),
                "the starting boosted-tree model reads {} features, the data has {}",
                start_.num_features(), x.cols());
  RATEOPT_CHECK(start_.offset() == 0,
                "the starting boosted-tree model has an offset ({}); boosting on needs none",
                start_.offset());
  RATEOPT_CHECK(start_margins.size() == x.rows(),
                "start_margins has {} entries, expected {} (one per row)", start_margins.size(),
                x.rows());
  for (std::size_t i = 0; i < start_margins.size(); ++i)
    RATEOPT_CHECK(std::isfinite(start_margins[i]),
                  "start_margins[{}] is {}, expected a finite number", i, start_margins[i]);
#if RATEOPT_WITH_XGBOOST
  start_model_ = std::make_shared<StartModel>(StartModel{nlohmann::json::parse(start_.json())});
  matrix_ = new_matrix(dense_floats(x, 0, rows_, cols_), rows_, cols_);
  // XGBoost starts each row at its base margin instead of the model's base score (0 for
  // binary:logistic) and adds the trees to it in order: start's trees then the new ones', as the
  // appended model adds them from 0.
  const std::vector<float> base(start_margins.begin(), start_margins.end());
  check_xgb(XGDMatrixSetFloatInfo(matrix_.get(), "base_margin", base.data(), rows_),
            "setting the base margins");
#else
  missing_xgboost();
#endif
}

GbdtFit BoostOn::fit(std::span<const std::int32_t> labels, std::span<const double> weights,
                     const GbdtOptions& options) {
  LazyFit lazy = fit_lazily(labels, weights, options);
  GbdtFit out;
  out.model = model(lazy);
  out.margins = std::move(lazy.margins);
  return out;
}

BoostOn::LazyFit BoostOn::fit_lazily(std::span<const std::int32_t> labels,
                                     std::span<const double> weights, const GbdtOptions& options) {
  check_fit_inputs(rows_, labels, weights, options);
#if RATEOPT_WITH_XGBOOST
  const DynamicThreadsOff fixed_threads;
  const DMatrixHandle m = matrix_.get();
  // No weights: every row 1, in place of an earlier fit's.
  const std::vector<double> ones(weights.empty() ? rows_ : 0, 1.0);
  set_labels(m, labels, weights.empty() ? std::span<const double>(ones) : weights);
  const std::shared_ptr<void> b = boost(m, options);
  LazyFit out;
  out.margins = cached_margins(b.get(), m, rows_);
  out.rounds = static_cast<std::size_t>(options.rounds);
  out.trees = first_trees(b.get(), out.rounds);  // the trees without b's cache of the rows
  return out;
#else
  (void)options;
  missing_xgboost();
#endif
}

TreeEnsemble BoostOn::model(const LazyFit& fit) const {
  RATEOPT_CHECK(fit.trees != nullptr, "BoostOn::model: the fit holds no trees");
#if RATEOPT_WITH_XGBOOST
  return {append_trees(start_model_->json, model_json(fit.trees)), cols_,
          start_.rounds() + fit.rounds};
#else
  missing_xgboost();
#endif
}

}  // namespace rateopt
