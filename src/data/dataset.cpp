#include "rateopt/dataset.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <type_traits>

#include "common/check.hpp"
#include "common/csr.hpp"
#include "common/enum_names.hpp"
#include "io/io_util.hpp"

namespace rateopt {

// ---- FeatureMatrix ------------------------------------------------------------------------------

FeatureMatrix FeatureMatrix::dense(std::vector<double> data, std::size_t rows, std::size_t cols) {
  RATEOPT_CHECK(data.size() == rows * cols, "dense data has {} entries, expected rows*cols = {}",
                data.size(), rows * cols);
  FeatureMatrix m;
  m.sparse_ = false;
  m.rows_ = rows;
  m.cols_ = cols;
  m.values_ = std::move(data);
  return m;
}

FeatureMatrix FeatureMatrix::csr(std::vector<std::int64_t> indptr,
                                 std::vector<std::int32_t> indices, std::vector<double> values,
                                 std::size_t cols) {
  RATEOPT_CHECK(!indptr.empty() && indptr.front() == 0, "CSR indptr must start with 0");
  RATEOPT_CHECK(indices.size() == values.size(), "CSR indices has {} entries, values has {}",
                indices.size(), values.size());
  RATEOPT_CHECK(static_cast<std::size_t>(indptr.back()) == indices.size(),
                "CSR indptr ends at {}, expected nnz = {}", indptr.back(), indices.size());
  const std::size_t rows = indptr.size() - 1;
  // Offsets first: with both ends checked, a monotone indptr keeps every row inside the arrays
  // (checked row by row, [0, 100, 3] would read 100 entries of 3).
  for (std::size_t i = 0; i < rows; ++i)
    RATEOPT_CHECK(indptr[i] <= indptr[i + 1], "CSR indptr decreases at row {}", i);
  for (std::size_t i = 0; i < rows; ++i) {
    for (auto k = indptr[i]; k < indptr[i + 1]; ++k) {
      RATEOPT_CHECK(indices[k] >= 0 && static_cast<std::size_t>(indices[k]) < cols,
                    "CSR column index {} in row {} is outside [0, {})", indices[k], i, cols);
      RATEOPT_CHECK(k == indptr[i] || indices[k - 1] < indices[k],
                    "CSR column indices of row {} are not strictly increasing", i);
    }
  }
  FeatureMatrix m;
  m.sparse_ = true;
  m.rows_ = rows;
  m.cols_ = cols;
  m.indptr_ = std::move(indptr);
  m.indices_ = std::move(indices);
  m.values_ = std::move(values);
  return m;
}

std::size_t FeatureMatrix::nnz() const noexcept {
  if (sparse_) return indices_.size();
  return static_cast<std::size_t>(
      std::count_if(values_.begin(), values_.end(), [](double v) { return v != 0.0; }));
}

DenseView FeatureMatrix::dense_view() const {
  RATEOPT_CHECK(!sparse_, "dense_view() called on a CSR feature matrix");
  return DenseView{values_.data(), rows_, cols_, cols_};
}

CsrView FeatureMatrix::csr_view() const {
  RATEOPT_CHECK(sparse_, "csr_view() called on a dense feature matrix");
  return CsrView{indptr_, indices_, values_, rows_, cols_};
}

double FeatureMatrix::row_dot(std::size_t i, std::span<const double> w) const {
  double s = 0;
  if (sparse_) {
    for (auto k = indptr_[i]; k < indptr_[i + 1]; ++k) s += values_[k] * w[indices_[k]];
  } else {
    const double* x = values_.data() + i * cols_;
    for (std::size_t j = 0; j < cols_; ++j) s += x[j] * w[j];
  }
  return s;
}

void FeatureMatrix::row_axpy(std::size_t i, double alpha, std::span<double> out) const {
  if (sparse_) {
    for (auto k = indptr_[i]; k < indptr_[i + 1]; ++k) out[indices_[k]] += alpha * values_[k];
  } else {
    const double* x = values_.data() + i * cols_;
    for (std::size_t j = 0; j < cols_; ++j) out[j] += alpha * x[j];
  }
}

double FeatureMatrix::at(std::size_t i, std::size_t j) const {
  RATEOPT_CHECK(i < rows_ && j < cols_, "entry ({}, {}) outside a {} x {} matrix", i, j, rows_,
                cols_);
  if (!sparse_) return values_[i * cols_ + j];
  const auto* begin = indices_.data() + indptr_[i];
  const auto* end = indices_.data() + indptr_[i + 1];
  const auto* it = std::lower_bound(begin, end, static_cast<std::int32_t>(j));
  return (it != end && *it == static_cast<std::int32_t>(j)) ? values_[it - indices_.data()] : 0.0;
}

void FeatureMatrix::set_cols(std::size_t cols) {
  RATEOPT_CHECK(cols >= cols_, "cannot shrink a feature matrix from {} to {} columns", cols_, cols);
  if (cols == cols_) return;
  if (!sparse_) {
    std::vector<double> wide(rows_ * cols, 0.0);
    for (std::size_t i = 0; i < rows_; ++i)
      std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(i * cols_), cols_,
                  wide.begin() + static_cast<std::ptrdiff_t>(i * cols));
    values_ = std::move(wide);
  }
  cols_ = cols;
}

FeatureMatrix FeatureMatrix::to_csr() const {
  if (sparse_) return *this;
  return detail::dense_to_csr_matrix(dense_view());
}

FeatureMatrix FeatureMatrix::select_rows(std::span<const std::size_t> rows) const {
  for (auto r : rows) RATEOPT_CHECK(r < rows_, "row {} outside [0, {})", r, rows_);
  if (!sparse_) {
    std::vector<double> data;
    data.reserve(rows.size() * cols_);
    for (auto r : rows) {
      auto first = values_.begin() + static_cast<std::ptrdiff_t>(r * cols_);
      data.insert(data.end(), first, first + static_cast<std::ptrdiff_t>(cols_));
    }
    return dense(std::move(data), rows.size(), cols_);
  }
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (auto r : rows) {
    for (auto k = indptr_[r]; k < indptr_[r + 1]; ++k) {
      indices.push_back(indices_[k]);
      values.push_back(values_[k]);
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  FeatureMatrix m;
  m.sparse_ = true;
  m.rows_ = rows.size();
  m.cols_ = cols_;
  m.indptr_ = std::move(indptr);
  m.indices_ = std::move(indices);
  m.values_ = std::move(values);
  return m;
}

// ---- Labels -------------------------------------------------------------------------------------

std::string_view to_string(LabelKind kind) noexcept {
  return detail::name_of(detail::kLabelKindNames, kind);
}

LabelKind parse_label_kind(std::string_view name) {
  if (const auto kind = detail::parse(detail::kLabelKindNames, name)) return *kind;
  throw InvalidArgument(
      fmt::format("label kind must be none, binary, multiclass or multilabel, got '{}'", name));
}

std::size_t Labels::size() const noexcept {
  if (kind == LabelKind::kMultilabel) return set_indptr.empty() ? 0 : set_indptr.size() - 1;
  return values.size();
}

std::span<const std::int32_t> Labels::label_set(std::size_t i) const {
  RATEOPT_CHECK(kind == LabelKind::kMultilabel, "label_set() needs multilabel labels, have {}",
                to_string(kind));
  RATEOPT_CHECK(i + 1 < set_indptr.size(), "example {} outside [0, {})", i, size());
  return {set_indices.data() + set_indptr[i],
          static_cast<std::size_t>(set_indptr[i + 1] - set_indptr[i])};
}

// ---- Column -------------------------------------------------------------------------------------

namespace {
bool parse_number(std::string_view s, double& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}
}  // namespace

std::int32_t Column::find_level(std::string_view value) const {
  double x = 0;
  if (is_numeric() && parse_number(value, x)) {
    for (std::size_t k = 0; k < levels.size(); ++k) {
      double y = 0;
      if (parse_number(levels[k], y) && y == x) return static_cast<std::int32_t>(k);
    }
    return -1;
  }
  for (std::size_t k = 0; k < levels.size(); ++k)
    if (levels[k] == value) return static_cast<std::int32_t>(k);
  return -1;
}

void Column::build_deferred() {
  if (deferred == nullptr) return;
  io_detail::build_deferred_levels(*this);
  deferred.reset();
}

void Column::push_back(std::string_view value, bool missing) {
  build_deferred();
  // Numeric until a non-missing, non-numeric value arrives.
  const bool was_numeric = codes.empty() || is_numeric();
  double x = 0;
  const bool numeric_value = !missing && parse_number(value, x);
  if (missing) {
    codes.push_back(-1);
    if (was_numeric) numeric.push_back(std::nan(""));
    return;
  }
  std::int32_t code = -1;
  for (std::size_t k = 0; k < levels.size(); ++k)
    if (levels[k] == value) code = static_cast<std::int32_t>(k);
  if (code < 0) {
    levels.emplace_back(value);
    code = static_cast<std::int32_t>(levels.size() - 1);
  }
  codes.push_back(code);
  if (was_numeric && numeric_value) {
    numeric.resize(codes.size() - 1, std::nan(""));
    numeric.push_back(x);
  } else {
    numeric.clear();
  }
}

// ---- Encoding -----------------------------------------------------------------------------------

namespace {
std::string_view kind_name(FeatureSpec::Kind k) {
  switch (k) {
    case FeatureSpec::Kind::kNumeric:
      return "numeric";
    case FeatureSpec::Kind::kOneHot:
      return "one_hot";
    case FeatureSpec::Kind::kIndex:
      return "index";
  }
  return "numeric";
}
}  // namespace

Encoding Encoding::for_matrix(std::size_t cols, std::vector<std::string> feature_names) {
  Encoding enc;
  enc.num_features = cols;
  if (feature_names.empty()) {
    enc.format = "libsvm";
    for (std::size_t j = 0; j < cols; ++j) enc.feature_names.push_back(fmt::format("f{}", j + 1));
    return enc;
  }
  RATEOPT_CHECK(feature_names.size() == cols, "feature_names has {} names, expected {}",
                feature_names.size(), cols);
  enc.format = "csv";
  for (std::size_t j = 0; j < cols; ++j) {
    FeatureSpec spec;
    spec.kind = FeatureSpec::Kind::kNumeric;
    spec.source = feature_names[j];
    spec.first_feature = j;
    enc.specs.push_back(std::move(spec));
  }
  enc.feature_names = std::move(feature_names);
  enc.missing_policy = "error";
  return enc;
}

std::string Encoding::to_json() const {
  nlohmann::json j;
  j["format"] = format;
  j["num_features"] = num_features;
  j["feature_names"] = feature_names;
  j["label_column"] = label_column;
  j["positive_value"] = positive_value;
  j["excluded_columns"] = excluded_columns;
  j["missing_policy"] = missing_policy;
  auto& specs_json = j["specs"] = nlohmann::json::array();
  for (const auto& s : specs) {
    nlohmann::json o;
    o["kind"] = kind_name(s.kind);
    o["source"] = s.source;
    o["first_feature"] = s.first_feature;
    o["levels"] = s.levels;
    o["offset"] = s.offset;
    o["scale"] = s.scale;
    if (s.kind == FeatureSpec::Kind::kNumeric) o["impute"] = s.impute;
    specs_json.push_back(std::move(o));
  }
  return j.dump();
}

Encoding Encoding::from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ParseError("", 0, 0, std::string("encoding is not valid JSON: ") + e.what());
  }
  Encoding e;
  // A count must be a JSON integer >= 0: get<std::size_t>() converts a float such as 4e73 with
  // undefined behaviour (found by fuzz_model) and wraps a negative one.
  const auto count = [](const nlohmann::json& v, const char* key) {
    if (!v.is_number_unsigned())
      throw ParseError("", 0, 0, std::string("encoding: '") + key + "' must be an integer >= 0");
    return v.get<std::size_t>();
  };
  try {
    e.format = j.at("format").get<std::string>();
    e.num_features = count(j.at("num_features"), "num_features");
    e.feature_names = j.at("feature_names").get<std::vector<std::string>>();
    e.label_column = j.value("label_column", "");
    e.positive_value = j.value("positive_value", "");
    e.excluded_columns = j.value("excluded_columns", std::vector<std::string>{});
    e.missing_policy = j.value("missing_policy", "");
    for (const auto& o : j.at("specs")) {
      FeatureSpec s;
      const auto kind = o.at("kind").get<std::string>();
      if (kind == "numeric")
        s.kind = FeatureSpec::Kind::kNumeric;
      else if (kind == "one_hot")
        s.kind = FeatureSpec::Kind::kOneHot;
      else if (kind == "index")
        s.kind = FeatureSpec::Kind::kIndex;
      else
        throw ParseError("", 0, 0, "unknown feature spec kind '" + kind + "'");
      s.source = o.at("source").get<std::string>();
      s.first_feature = count(o.at("first_feature"), "first_feature");
      s.levels = o.value("levels", std::vector<std::string>{});
      s.offset = o.value("offset", 0.0);
      s.scale = o.value("scale", 1.0);
      s.impute = o.value("impute", s.offset);  // older models: the offset (the mean, or 0)
      e.specs.push_back(std::move(s));
    }
  } catch (const nlohmann::json::exception& ex) {
    throw ParseError("", 0, 0, std::string("encoding JSON lacks a field: ") + ex.what());
  }
  RATEOPT_CHECK(e.feature_names.empty() || e.feature_names.size() == e.num_features,
                "encoding has {} feature names, expected num_features = {}", e.feature_names.size(),
                e.num_features);
  return e;
}

// ---- Dataset ------------------------------------------------------------------------------------

Dataset::Dataset(FeatureMatrix features, Labels labels)
    : features_(std::move(features)), labels_(std::move(labels)) {
  RATEOPT_CHECK(labels_.kind == LabelKind::kNone || labels_.size() == features_.rows(),
                "labels have {} entries, features have {} rows", labels_.size(), features_.rows());
}

namespace detail {

namespace {
// Guards the first build of any Dataset's deferred columns (rare, and long: one lock serves all).
std::mutex& deferred_columns_mutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

DeferredColumnsFlag::DeferredColumnsFlag(const DeferredColumnsFlag& other) {
  if (other.pending_.load(std::memory_order_acquire))
    static_cast<const Dataset&>(other).build_deferred_columns();
}

DeferredColumnsFlag& DeferredColumnsFlag::operator=(const DeferredColumnsFlag& other) {
  if (other.pending_.load(std::memory_order_acquire))
    static_cast<const Dataset&>(other).build_deferred_columns();
  pending_.store(false, std::memory_order_release);  // the columns copied next are built
  return *this;
}

}  // namespace detail

void Dataset::build_deferred_columns() const {
  const std::lock_guard<std::mutex> lock(detail::deferred_columns_mutex());
  if (!pending_.load(std::memory_order_relaxed)) return;  // another thread built them
  for (Column& c : columns_) c.build_deferred();
  pending_.store(false, std::memory_order_release);
}

std::vector<Column> Dataset::take_columns() {
  if (pending_.load(std::memory_order_acquire)) build_deferred_columns();
  return take_columns_as_they_are();
}

std::vector<Column> Dataset::take_columns_as_they_are() {
  std::vector<Column> out = std::move(columns_);
  columns_.clear();
  column_index_.clear();
  pending_.store(false, std::memory_order_release);
  return out;
}

void Dataset::keep_columns(std::span<const std::string> keep,
                           std::span<const std::string> dropped_before) {
  const auto note_dropped = [&](const std::string& name) {
    if (std::find(dropped_columns_.begin(), dropped_columns_.end(), name) == dropped_columns_.end())
      dropped_columns_.push_back(name);
  };
  for (const std::string& name : dropped_before) note_dropped(name);
  // A kept column's levels stay deferred (add_column notes it), a dropped one's are never built.
  std::vector<Column> columns = take_columns_as_they_are();
  for (Column& c : columns) {
    if (std::find(keep.begin(), keep.end(), c.name) != keep.end()) {
      add_column(std::move(c));
    } else {
      note_dropped(c.name);
    }
  }
}

void Dataset::set_row_parts(std::vector<std::size_t> parts) {
  std::size_t rows = 0;
  for (const std::size_t p : parts) rows += p;
  RATEOPT_CHECK(parts.empty() || rows == num_rows(),
                "row parts add up to {} rows, expected the dataset's {}", rows, num_rows());
  row_parts_ = std::move(parts);
}

void Dataset::set_weights(std::vector<double> weights) {
  RATEOPT_CHECK(weights.empty() || weights.size() == num_rows(),
                "weights have {} entries, expected one per row ({})", weights.size(), num_rows());
  for (std::size_t i = 0; i < weights.size(); ++i)
    RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                  "weight of row {} is {}, expected a finite value >= 0", i, weights[i]);
  weights_ = std::move(weights);
}

std::vector<std::string> Dataset::column_names() const {
  std::vector<std::string> names;
  names.reserve(columns_.size());
  for (const Column& c : columns_) names.push_back(c.name);  // a build never changes a name
  return names;
}

const Column* Dataset::find_column(std::string_view name) const {
  const auto it = column_index_.find(name);
  if (it == column_index_.end()) return nullptr;
  if (pending_.load(std::memory_order_acquire)) build_deferred_columns();
  return &columns_[it->second];
}

const Column& Dataset::column(std::string_view name) const {
  if (const Column* c = find_column(name)) return *c;
  std::string available;
  for (const auto& c : columns_) available += (available.empty() ? "" : ", ") + c.name;
  std::string dropped;
  if (!dropped_columns_.empty())
    dropped = fmt::format(
        "; not kept by this command, which reads only the columns its "
        "expressions name: {}",
        fmt::join(dropped_columns_, ", "));
  throw NotFound(fmt::format("no column '{}' in {} (available: {}{})", name,
                             source_.empty() ? std::string("the dataset") : source_,
                             available.empty() ? std::string("none") : available, dropped));
}

void Dataset::add_column(Column column) {
  RATEOPT_CHECK(column.size() == num_rows(), "column '{}' has {} values, expected {}", column.name,
                column.size(), num_rows());
  if (column.deferred != nullptr) pending_.store(true, std::memory_order_release);
  if (const auto it = column_index_.find(column.name); it != column_index_.end()) {
    columns_[it->second] = std::move(column);
    return;
  }
  column_index_.emplace(column.name, columns_.size());
  columns_.push_back(std::move(column));
}

namespace {

// Gives the whole pages inside [data, data + bytes) back to the system (Linux; elsewhere
// nothing): for a buffer that has been copied and will only be freed, never read again.
void release_pages(const void* data, std::size_t bytes) {
#if defined(__linux__)
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (at + page - 1) / page * page;  // the whole pages inside
  const std::uintptr_t last = (at + bytes) / page * page;
  if (last <= first) return;
  // The buffer is the caller's to give back (it is never read again, only freed).
  char* begin = static_cast<char*>(const_cast<void*>(data)) + (first - at);
  (void)madvise(begin, last - first, MADV_DONTNEED);
#else
  (void)data;
  (void)bytes;
#endif
}

// Appends `from` to `out` (reserved by the caller), each value through `map`, giving `from`'s
// pages back as they are copied (every 8 MB): `from` is never read again. Freeing `from` alone
// would not do: a freed block inside the heap stays with the process.
template <class T, class Map = std::identity>
void append_releasing(std::vector<T>& out, std::span<const T> from, Map map = {}) {
  constexpr std::size_t kChunk = (std::size_t{8} << 20) / sizeof(T);
  for (std::size_t at = 0; at < from.size(); at += kChunk) {
    const auto chunk = from.subspan(at, std::min(kChunk, from.size() - at));
    if constexpr (std::is_same_v<Map, std::identity>) {
      out.insert(out.end(), chunk.begin(), chunk.end());
    } else {
      std::ranges::transform(chunk, std::back_inserter(out), map);
    }
    release_pages(chunk.data(), chunk.size_bytes());
  }
}

// The features of `parts` stacked (all dense or all CSR, with the same column count: checked).
// Frees each part's features once they are copied, and a dense part's pages as they are copied
// (release_pages, every 8 MB): with the result reserved but not yet touched, memory then stays
// near the total, not twice the total.
FeatureMatrix stack_features(std::vector<Dataset>& parts, bool sparse) {
  const std::size_t cols = parts.front().features().cols();
  std::size_t rows = 0;
  for (const Dataset& p : parts) rows += p.num_rows();
  if (!sparse && parts.front().features().is_sparse()) {
    // CSR parts into a dense result: each part's rows, the part freed once copied.
    std::vector<double> data(rows * cols, 0.0);
    std::size_t at = 0;
    for (Dataset& p : parts) {
      const CsrView v = p.features().csr_view();
      for (std::size_t i = 0; i < v.rows; ++i, ++at)
        for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
          data[at * cols + static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)])] =
              v.values[static_cast<std::size_t>(k)];
      p.features() = FeatureMatrix{};
    }
    return FeatureMatrix::dense(std::move(data), rows, cols);
  }
  if (!sparse) {
    std::vector<double> data;
    data.reserve(rows * cols);
    constexpr std::size_t kReleaseBytes = std::size_t{8} << 20;
    for (Dataset& p : parts) {
      const DenseView v = p.features().dense_view();
      const std::size_t chunk_rows =
          std::max<std::size_t>(1, kReleaseBytes / std::max<std::size_t>(1, v.row_stride * 8));
      for (std::size_t i = 0; i < v.rows; ++i) {
        const auto row = v.row(i);
        data.insert(data.end(), row.begin(), row.end());
        if ((i + 1) % chunk_rows == 0)  // rows [0, i] are copied and never read again
          release_pages(v.data, (i + 1) * v.row_stride * sizeof(double));
      }
      p.features() = FeatureMatrix{};
    }
    return FeatureMatrix::dense(std::move(data), rows, cols);
  }
  std::size_t nnz = 0;
  for (const Dataset& p : parts) {
    const CsrView v = p.features().csr_view();
    nnz += static_cast<std::size_t>(v.indptr[v.rows] - v.indptr[0]);
  }
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  indptr.reserve(rows + 1);
  indices.reserve(nnz);
  values.reserve(nnz);
  for (Dataset& p : parts) {
    const CsrView v = p.features().csr_view();
    const std::int64_t base = indptr.back();
    const std::int64_t start = v.indptr[0];
    const auto from = static_cast<std::size_t>(start);
    const auto to = static_cast<std::size_t>(v.indptr[v.rows]);
    append_releasing(indptr, v.indptr.subspan(1),
                     [&](std::int64_t end) { return base + end - start; });
    append_releasing(indices, v.indices.subspan(from, to - from));
    append_releasing(values, v.values.subspan(from, to - from));
    p.features() = FeatureMatrix{};
  }
  return FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values), cols);
}

// The labels of `parts` stacked; each part's values are given back as they are copied (never read
// again).
// The part whose labels speak for all: the first with rows (a part without rows, such as an empty
// part of a file, has no label kind of its own), else the first.
const Dataset& label_reference(const std::vector<Dataset>& parts) {
  for (const Dataset& p : parts)
    if (p.num_rows() > 0) return p;
  return parts.front();
}

Labels stack_labels(std::vector<Dataset>& parts) {
  Labels out;
  out.kind = label_reference(parts).labels().kind;
  out.names = label_reference(parts).labels().names;
  // Binary labels from a positive value: a part names the negative class by the negative value
  // it saw (one) or "not POSITIVE" (several, or none); parts whose negatives are named
  // differently saw different values, and the whole text names the class as a reader seeing
  // several does.
  if (out.kind == LabelKind::kBinary && out.names.size() == 2) {
    bool named = false;
    for (const Dataset& p : parts) {
      const std::vector<std::string>& n = p.labels().names;
      if (n.size() != 2 || n[1] != out.names[1] ||
          std::ranges::find(p.labels().values, 0) == p.labels().values.end())
        continue;  // another coding, or no negative row: says nothing of the negative's name
      if (!named) {
        out.names[0] = n[0];
        named = true;
      } else if (n[0] != out.names[0]) {
        out.names[0] = "not " + out.names[1];
        break;
      }
    }
  }
  if (out.kind == LabelKind::kMultilabel) out.set_indptr.push_back(0);
  std::size_t rows = 0;
  for (const Dataset& p : parts) rows += p.labels().values.size();
  out.values.reserve(rows);
  for (Dataset& p : parts) {
    Labels& y = p.labels();
    if (out.kind == LabelKind::kMultilabel) {
      const std::int64_t base = out.set_indptr.back();
      for (std::size_t i = 1; i < y.set_indptr.size(); ++i)
        out.set_indptr.push_back(base + y.set_indptr[i] - y.set_indptr[0]);
      out.set_indices.insert(out.set_indices.end(), y.set_indices.begin(), y.set_indices.end());
    } else {
      append_releasing(out.values, std::span<const std::int32_t>(y.values));
      y.values = {};
    }
  }
  return out;
}

// One column of every part (the same name), levels merged in order of first appearance; each
// part's column is freed once copied.
Column stack_column(const std::vector<Column*>& parts) {
  Column out;
  out.name = parts.front()->name;
  // Numeric when every part with rows is (a part without rows says nothing, as in one read).
  bool any_rows = false;
  bool numeric = true;
  for (const Column* c : parts) {
    if (c->codes.empty()) continue;
    any_rows = true;
    numeric = numeric && c->is_numeric();
  }
  numeric = numeric && any_rows;
  std::map<std::string, std::int32_t, std::less<>> code_of;
  std::size_t rows = 0;
  for (const Column* c : parts) rows += c->codes.size();
  out.codes.reserve(rows);
  if (numeric) out.numeric.reserve(rows);
  for (Column* part : parts) {
    const Column& c = *part;
    std::vector<std::int32_t> remap(c.levels.size());
    for (std::size_t k = 0; k < c.levels.size(); ++k) {
      auto [it, added] = code_of.emplace(c.levels[k], static_cast<std::int32_t>(out.levels.size()));
      if (added) out.levels.push_back(c.levels[k]);
      remap[k] = it->second;
    }
    append_releasing(out.codes, std::span<const std::int32_t>(c.codes), [&](std::int32_t code) {
      return code < 0 ? -1 : remap[static_cast<std::size_t>(code)];
    });
    if (numeric) append_releasing(out.numeric, std::span<const double>(c.numeric));
    *part = Column{};
  }
  return out;
}

}  // namespace

Dataset concat_rows(std::vector<Dataset> parts, ConcatStorage storage) {
  RATEOPT_CHECK(!parts.empty(), "concat_rows needs at least one part");
  if (parts.size() == 1 && storage == ConcatStorage::kAsParts) return std::move(parts.front());
  const Dataset& first = parts.front();
  auto name = [](const Dataset& d) {
    return d.source().empty() ? std::string("a part") : d.source();
  };
  bool any_weights = false;
  for (const Dataset& p : parts) {
    RATEOPT_CHECK(p.num_features() == first.num_features(),
                  "{} has {} features, but {} has {}: read every part with one encoding", name(p),
                  p.num_features(), name(first), first.num_features());
    const Dataset& ref = label_reference(parts);
    if (p.num_rows() > 0) {
      RATEOPT_CHECK(p.labels().kind == ref.labels().kind, "{} has {} labels, but {} has {} labels",
                    name(p), to_string(p.labels().kind), name(ref), to_string(ref.labels().kind));
      RATEOPT_CHECK(p.labels().kind == LabelKind::kBinary || p.labels().names == ref.labels().names,
                    "{} names its {} labels differently from {}", name(p),
                    to_string(p.labels().kind), name(ref));
    }
    RATEOPT_CHECK(p.columns().size() == first.columns().size(),
                  "{} has {} slice columns, but {} has {}", name(p), p.columns().size(),
                  name(first), first.columns().size());
    for (const Column& c : first.columns())
      RATEOPT_CHECK(p.find_column(c.name) != nullptr, "{} has no column '{}' (as {} has)", name(p),
                    c.name, name(first));
    any_weights = any_weights || !p.weights().empty();
  }
  // One storage kind: CSR when any part is (a small file read dense beside large sparse ones),
  // unless asked otherwise; dense results from CSR parts are stacked part by part.
  const bool any_sparse =
      std::ranges::any_of(parts, [](const Dataset& p) { return p.features().is_sparse(); });
  const bool sparse =
      storage == ConcatStorage::kCsr || (storage == ConcatStorage::kAsParts && any_sparse);
  if (sparse || any_sparse) {
    for (Dataset& p : parts)
      if (!p.features().is_sparse()) p.features() = p.features().to_csr();
  }
  // Everything but the features first: stacking the features empties the parts.
  std::vector<std::size_t> row_parts;
  for (const Dataset& p : parts) {
    if (p.row_parts().empty()) {
      row_parts.push_back(p.num_rows());
    } else {
      row_parts.insert(row_parts.end(), p.row_parts().begin(), p.row_parts().end());
    }
  }
  Labels labels = stack_labels(parts);
  std::vector<double> w;
  if (any_weights) {
    std::size_t rows = 0;
    for (const Dataset& p : parts) rows += p.num_rows();
    w.reserve(rows);
    for (const Dataset& p : parts) {
      if (p.weights().empty()) {
        w.insert(w.end(), p.num_rows(), 1.0);
      } else {
        append_releasing(w, p.weights());  // the part's weights are never read again
      }
    }
  }
  // The columns, one at a time, each part's copy freed once stacked.
  std::vector<std::vector<Column>> part_columns;
  part_columns.reserve(parts.size());
  for (Dataset& p : parts) part_columns.push_back(p.take_columns());
  std::vector<Column> columns;
  for (const Column& c : part_columns.front()) {
    std::vector<Column*> same;
    for (std::vector<Column>& pc : part_columns)
      for (Column& other : pc)
        if (other.name == c.name) same.push_back(&other);
    columns.push_back(stack_column(same));
  }
  Encoding encoding = first.encoding();
  std::string source = first.source();
  std::vector<std::string> dropped = first.dropped_columns();
  Dataset out(stack_features(parts, sparse), std::move(labels));
  out.set_weights(std::move(w));
  for (Column& c : columns) out.add_column(std::move(c));
  out.encoding() = std::move(encoding);
  out.set_source(std::move(source));
  out.set_row_parts(std::move(row_parts));
  out.dropped_columns_ = std::move(dropped);
  return out;
}

Dataset select_rows(const Dataset& data, std::span<const std::size_t> rows) {
  const std::size_t n = data.num_rows();
  for (std::size_t r : rows) RATEOPT_CHECK(r < n, "row {} outside [0, {})", r, n);
  const Labels& y = data.labels();
  Labels labels;
  labels.kind = y.kind;
  labels.names = y.names;
  if (!y.values.empty())
    for (std::size_t r : rows) labels.values.push_back(y.values[r]);
  if (y.kind == LabelKind::kMultilabel) {
    labels.set_indptr.push_back(0);
    for (std::size_t r : rows) {
      const auto set = y.label_set(r);
      labels.set_indices.insert(labels.set_indices.end(), set.begin(), set.end());
      labels.set_indptr.push_back(static_cast<std::int64_t>(labels.set_indices.size()));
    }
  }
  Dataset out(data.features().select_rows(rows), std::move(labels));
  if (!data.weights().empty()) {
    std::vector<double> w;
    w.reserve(rows.size());
    for (std::size_t r : rows) w.push_back(data.weights()[r]);
    out.set_weights(std::move(w));
  }
  for (const Column& c : data.columns()) {
    Column part;
    part.name = c.name;
    part.levels = c.levels;
    part.codes.reserve(rows.size());
    for (std::size_t r : rows) part.codes.push_back(c.codes[r]);
    if (c.is_numeric())
      for (std::size_t r : rows) part.numeric.push_back(c.numeric[r]);
    out.add_column(std::move(part));
  }
  out.encoding() = data.encoding();
  out.set_source(data.source());
  out.dropped_columns_ = data.dropped_columns();
  // Increasing rows keep the parts: each part's selected rows, in order (training sums per part,
  // so a subset of files' rows sums alike in one process and over ranks holding whole files).
  if (!data.row_parts().empty() && std::is_sorted(rows.begin(), rows.end()) &&
      std::adjacent_find(rows.begin(), rows.end()) == rows.end()) {
    std::vector<std::size_t> parts;
    parts.reserve(data.row_parts().size());
    std::size_t end = 0;
    std::size_t at = 0;
    for (const std::size_t part : data.row_parts()) {
      end += part;
      std::size_t count = 0;
      for (; at < rows.size() && rows[at] < end; ++at) ++count;
      parts.push_back(count);
    }
    out.row_parts_ = std::move(parts);
  }
  return out;
}

}  // namespace rateopt
