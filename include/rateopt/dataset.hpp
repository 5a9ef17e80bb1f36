// File: rateopt/dataset.hpp
// The data layer: feature matrices (dense or CSR), labels (binary, multiclass, multilabel),
// per-example weights, named slice columns (groups, a baseline model's predictions) and the
// feature encoding that produced the features, so that a model can be applied to new files.
//
// Layouts (documented once, used everywhere):
//   Dense:  row-major, x(i, j) = data[i * row_stride + j], row_stride >= cols.
//   CSR:    row i holds entries k in [indptr[i], indptr[i+1]); column indices[k], value values[k];
//           indices are 0-based, strictly increasing within a row; indptr has rows + 1 entries.
//
// Ownership: `Dataset` owns everything it holds; views (`DenseView`, `CsrView`) borrow and are
// valid while the owner lives and is not modified. Thread-safety: const methods may be called
// concurrently.
//
// Example:
//   rateopt::Dataset ds = rateopt::read_dataset("adult.csv.gz", opts);
//   std::size_t n = ds.num_rows();
//   const rateopt::Column& sex = ds.column("sex");   // throws NotFound if absent
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rateopt {

// Borrowed dense row-major matrix.
struct DenseView {
  const double* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t row_stride = 0;  // >= cols
  [[nodiscard]] double operator()(std::size_t i, std::size_t j) const {
    return data[i * row_stride + j];
  }
  [[nodiscard]] std::span<const double> row(std::size_t i) const {
    return {data + i * row_stride, cols};
  }
};

// Borrowed CSR matrix.
struct CsrView {
  std::span<const std::int64_t> indptr;   // rows + 1 entries
  std::span<const std::int32_t> indices;  // nnz entries, 0-based column indices
  std::span<const double> values;         // nnz entries
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// Owning feature matrix, dense or CSR. A default-constructed matrix is dense 0 x 0.
class FeatureMatrix {
 public:
  FeatureMatrix() = default;
  // Dense from row-major data (size must be rows * cols).
  static FeatureMatrix dense(std::vector<double> data, std::size_t rows, std::size_t cols);
  // CSR; validated (sizes, monotone indptr, indices in [0, cols) and increasing per row).
  static FeatureMatrix csr(std::vector<std::int64_t> indptr, std::vector<std::int32_t> indices,
                           std::vector<double> values, std::size_t cols);

  [[nodiscard]] bool is_sparse() const noexcept { return sparse_; }
  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::size_t nnz() const noexcept;
  // Throws InvalidArgument when called on the other storage kind.
  [[nodiscard]] DenseView dense_view() const;
  [[nodiscard]] CsrView csr_view() const;

  // x_i . w (w has cols() entries). O(cols) dense, O(nnz of row) sparse.
  [[nodiscard]] double row_dot(std::size_t i, std::span<const double> w) const;
  // out += alpha * x_i (out has cols() entries).
  void row_axpy(std::size_t i, double alpha, std::span<double> out) const;
  // Value of x(i, j); O(log nnz_i) for CSR.
  [[nodiscard]] double at(std::size_t i, std::size_t j) const;
  // Widens to `cols` columns (e.g. a9a.t lacks feature 123). Throws if cols < this->cols().
  void set_cols(std::size_t cols);
  // Rows `rows` (in that order) as a new matrix of the same storage kind.
  [[nodiscard]] FeatureMatrix select_rows(std::span<const std::size_t> rows) const;
  // The same matrix as CSR (a copy of the non-zero entries, values unchanged), or itself when it
  // is CSR already.
  [[nodiscard]] FeatureMatrix to_csr() const;

 private:
  bool sparse_ = false;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::vector<double> values_;  // dense data, or CSR values
  std::vector<std::int64_t> indptr_;
  std::vector<std::int32_t> indices_;
};

enum class LabelKind {
  kNone,        // unlabelled data (e.g. for coverage or churn rates)
  kBinary,      // y in {0, 1}
  kMulticlass,  // y in {0, ..., num_classes - 1}
  kMultilabel,  // y a subset of {0, ..., num_labels - 1}
};

[[nodiscard]] std::string_view to_string(LabelKind kind) noexcept;
// The LabelKind named `name` ("none", "binary", "multiclass", "multilabel"). Throws
// InvalidArgument listing the accepted names.
[[nodiscard]] LabelKind parse_label_kind(std::string_view name);

// Labels of n examples.
struct Labels {
  LabelKind kind = LabelKind::kNone;
  // kBinary: 0/1 per example; kMulticlass: class index per example; empty otherwise.
  std::vector<std::int32_t> values;
  // kMultilabel: label sets in CSR form (sorted indices per example); empty otherwise.
  std::vector<std::int64_t> set_indptr;
  std::vector<std::int32_t> set_indices;
  // Names: kBinary {negative, positive}; kMulticlass class names; kMultilabel label names.
  std::vector<std::string> names;

  [[nodiscard]] std::size_t size() const noexcept;
  // Number of classes (kMulticlass) or labels (kMultilabel); 2 for binary; 0 for none.
  [[nodiscard]] std::size_t num_outputs() const noexcept { return names.size(); }
  // Label set of example i (kMultilabel only).
  [[nodiscard]] std::span<const std::int32_t> label_set(std::size_t i) const;
};

// The texts of a numeric column's values, kept until its levels are built (src/io/io_util.hpp).
struct DeferredLevels;

// A named per-example column available for slicing (a group such as `sex`, a baseline model's
// prediction, an id). Values are stored as category codes into `levels`; a column whose every
// value parses as a number also keeps the numbers, so `age=30` and `baseline=1` match 30 and
// 1.0 numerically. Missing values have code -1 and never match a condition.
struct Column {
  std::string name;
  std::vector<std::string> levels;  // distinct values in order of first appearance
  std::vector<std::int32_t> codes;  // per example, index into levels or -1 (missing)
  std::vector<double> numeric;      // per example when the column is numeric; else empty
  // Set by the text readers on a numeric column: its levels and codes are not built yet (both
  // empty) but are built from the texts kept here when a Dataset first hands the column out
  // (columns(), find_column(), column(), take_columns()), so a Column a caller sees has them. A
  // file's numeric columns hold ~10^6 distinct values each, and building their levels was a third
  // of a read that keeps every column, mostly for columns nothing groups by.
  std::shared_ptr<const DeferredLevels> deferred{};

  [[nodiscard]] bool is_numeric() const noexcept { return !numeric.empty(); }
  // The number of examples (also while the levels are deferred).
  [[nodiscard]] std::size_t size() const noexcept {
    return deferred != nullptr ? numeric.size() : codes.size();
  }
  // Code of `value` or -1 when absent (numeric columns compare numerically).
  [[nodiscard]] std::int32_t find_level(std::string_view value) const;
  // Adds one value (used by readers and by attach_column).
  void push_back(std::string_view value, bool missing = false);
  // Builds the deferred levels and codes (as push_back would have, value by value) and drops the
  // texts; nothing when none are deferred.
  void build_deferred();
};

class Dataset;

namespace detail {
// Dataset's base: whether some of its columns still defer their levels. Copying a Dataset builds
// them in the source first (under a lock), so that the member-wise copy which follows never reads
// a column that another thread's first access is building.
class DeferredColumnsFlag {
 public:
  DeferredColumnsFlag() = default;
  DeferredColumnsFlag(const DeferredColumnsFlag& other);
  DeferredColumnsFlag(DeferredColumnsFlag&& other) noexcept : pending_(other.pending_.load()) {}
  DeferredColumnsFlag& operator=(const DeferredColumnsFlag& other);
  DeferredColumnsFlag& operator=(DeferredColumnsFlag&& other) noexcept {
    pending_.store(other.pending_.load());
    return *this;
  }
  ~DeferredColumnsFlag() = default;

 protected:
  mutable std::atomic<bool> pending_{false};
};
}  // namespace detail

// How raw input columns became features, saved with models so that `predict` re-applies it.
struct FeatureSpec {
  enum class Kind { kNumeric, kOneHot, kIndex };
  Kind kind = Kind::kNumeric;
  std::string source;               // raw column name (CSV/ARFF) or "" (LIBSVM)
  std::size_t first_feature = 0;    // first feature index it writes
  std::vector<std::string> levels;  // kOneHot: one feature per level, in order
  double offset = 0;                // kNumeric: feature = (raw - offset) / scale
  double scale = 1;
  double impute = 0;  // kNumeric: the raw value a missing entry stands for (the training mean)
};

struct Encoding {
  std::string format;  // "csv", "libsvm", "arff"
  std::size_t num_features = 0;
  std::vector<std::string> feature_names;     // one per feature ("age", "sex=Male", "f12")
  std::vector<FeatureSpec> specs;             // CSV/ARFF: one per raw feature column, in order
  std::string label_column;                   // CSV: label column name; ARFF: empty
  std::string positive_value;                 // CSV binary: the value meaning y = 1
  std::vector<std::string> excluded_columns;  // kept out of the features (slicing only)
  std::string missing_policy;                 // see CsvOptions::missing

  [[nodiscard]] std::string to_json() const;
  static Encoding from_json(std::string_view text);
  // The encoding of an in-memory matrix with `cols` features (the Python package), chosen so
  // that `rateopt predict` can apply a model fitted from it: with feature names (DataFrame
  // columns), a CSV encoding reading those numeric columns unscaled (missing values an error);
  // without, a LIBSVM encoding (feature j is index j + 1, named f<j+1>). Throws InvalidArgument
  // when the names are not one per feature.
  static Encoding for_matrix(std::size_t cols, std::vector<std::string> feature_names = {});
};

// The storage of concat_rows' result: as the parts (CSR when any part is), or always dense, or
// always CSR (values unchanged either way).
enum class ConcatStorage { kAsParts, kDense, kCsr };

class Dataset : private detail::DeferredColumnsFlag {
 public:
  Dataset() = default;
  Dataset(FeatureMatrix features, Labels labels);

  [[nodiscard]] std::size_t num_rows() const noexcept { return features_.rows(); }
  [[nodiscard]] std::size_t num_features() const noexcept { return features_.cols(); }
  [[nodiscard]] const FeatureMatrix& features() const noexcept { return features_; }
  [[nodiscard]] FeatureMatrix& features() noexcept { return features_; }
  [[nodiscard]] const Labels& labels() const noexcept { return labels_; }
  [[nodiscard]] Labels& labels() noexcept { return labels_; }

  // Per-example weights; empty means all 1.
  [[nodiscard]] std::span<const double> weights() const noexcept { return weights_; }
  // Throws InvalidArgument on wrong size, negative, NaN or infinite weights.
  void set_weights(std::vector<double> weights);
  [[nodiscard]] double weight(std::size_t i) const noexcept {
    return weights_.empty() ? 1.0 : weights_[i];
  }

  // The slice columns, their levels built (Column::deferred).
  [[nodiscard]] const std::vector<Column>& columns() const {
    if (pending_.load(std::memory_order_acquire)) build_deferred_columns();
    return columns_;
  }
  // The slice columns' names, in order (no deferred level is built).
  [[nodiscard]] std::vector<std::string> column_names() const;
  [[nodiscard]] const Column* find_column(std::string_view name) const;
  // Throws NotFound listing the available columns.
  [[nodiscard]] const Column& column(std::string_view name) const;
  // Adds or replaces a column (size must equal num_rows()). O(log columns), as is find_column.
  void add_column(Column column);
  // Moves the slice columns out, leaving the dataset without any (concat_rows frees them so).
  [[nodiscard]] std::vector<Column> take_columns();
  // Drops every slice column not named in `keep` (names it lacks are ignored); column() then
  // lists the dropped ones, and `dropped_before` (columns a reader never stored), as "not kept"
  // when asked for one. A column costs 4 bytes a row, 12 when numeric: readers drop the columns
  // no expression names (ReadOptions::keep_columns).
  void keep_columns(std::span<const std::string> keep,
                    std::span<const std::string> dropped_before = {});
  // The names of the columns keep_columns dropped, in their order.
  [[nodiscard]] const std::vector<std::string>& dropped_columns() const noexcept {
    return dropped_columns_;
  }

  [[nodiscard]] const Encoding& encoding() const noexcept { return encoding_; }
  [[nodiscard]] Encoding& encoding() noexcept { return encoding_; }

  // Source path, for messages.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // The rows of each file this dataset was read from, in order (concat_rows sets them; empty: one
  // part). Training sums over rows per part, so that the same files give the same bits in one
  // process and over MPI ranks each holding whole files (rateopt/distributed.hpp).
  [[nodiscard]] std::span<const std::size_t> row_parts() const noexcept { return row_parts_; }
  // Throws InvalidArgument when the parts do not add up to num_rows().
  void set_row_parts(std::vector<std::size_t> parts);

 private:
  FeatureMatrix features_;
  Labels labels_;
  std::vector<double> weights_;
  // Builds every column's deferred levels, once, under a lock (const methods may run at once).
  void build_deferred_columns() const;
  // take_columns without building the deferred levels.
  std::vector<Column> take_columns_as_they_are();
  friend class detail::DeferredColumnsFlag;

  mutable std::vector<Column> columns_;                           // mutable: build_deferred_columns
  std::map<std::string, std::size_t, std::less<>> column_index_;  // name -> index in columns_
  std::vector<std::string> dropped_columns_;
  Encoding encoding_;
  friend Dataset concat_rows(std::vector<Dataset> parts, ConcatStorage storage);
  friend Dataset select_rows(const Dataset& data, std::span<const std::size_t> rows);
  std::string source_;
  std::vector<std::size_t> row_parts_;
};

// The rows of `parts`, in order, as one Dataset (the files of a `--data 'part-*.csv'` pattern, or
// one rank's shard of them). The parts must have been read with one encoding: the same feature
// count, label kind and slice columns. When some parts are CSR and others dense (a reader stores
// a small file dense and a large sparse one as CSR), the result is CSR: the dense parts are
// converted, values unchanged. Weights are 1 where a part has none;
// a slice column's levels are merged in order of first appearance. The result keeps the first
// part's encoding. Throws InvalidArgument naming the first part that differs (by its source).
// Memory: each part's features, labels, weights and columns go back to the system as they are
// copied (Linux), so that the peak stays near the result's size rather than twice it.
[[nodiscard]] Dataset concat_rows(std::vector<Dataset> parts,
                                  ConcatStorage storage = ConcatStorage::kAsParts);

// The rows `rows` of `data`, in that order (repeats allowed): features, labels, weights and every
// slice column (with all its levels), the encoding, source and dropped columns; when `rows`
// increase strictly, each row part's selected rows as the row parts (some possibly empty), else
// one row part. Throws InvalidArgument for a row outside [0, num_rows()).
[[nodiscard]] Dataset select_rows(const Dataset& data, std::span<const std::size_t> rows);

}  // namespace rateopt
