// The binary dataset cache (io.hpp: write_dataset_binary, read_dataset_binary): a parsed Dataset
// stored as its arrays, so that a large text file is parsed once (`rateopt convert`).
//
// Layout (little-endian; docs/data-formats.md, "Binary dataset cache"):
//   magic "\x89RODS\r\n\x1a" (8 bytes), u32 version (1), u32 flags (0)
//   features: u8 sparse, u64 rows, u64 cols; dense: f64[rows * cols];
//             CSR: i64[rows + 1] indptr, u64 nnz, i32[nnz] indices, f64[nnz] values
//   labels:   u8 kind, array<i32> values, array<i64> set_indptr, array<i32> set_indices,
//             strings names
//   weights:  array<f64>
//   columns:  u64 count, then per column: string name, strings levels, array<i32> codes,
//             array<f64> numeric
//   encoding: string (Encoding::to_json)
//   u32 CRC-32 (zlib) of every byte after the magic and before the CRC
// where array<T> is u64 n then n values, string is u64 n then n bytes, strings is u64 n then n
// strings. Every count is checked against the bytes left in the file before anything is
// allocated, so a corrupt or truncated file is a ParseError, never a huge allocation.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace rateopt {
namespace {

constexpr std::string_view kMagic{"\x89RODS\r\n\x1a", 8};
constexpr std::uint32_t kVersion = 1;

void require_little_endian() {
  if constexpr (std::endian::native != std::endian::little)
    throw IoError("the binary dataset cache is little-endian; this host is not");
}

// zlib's CRC-32 of `bytes` bytes continued from `crc` (zlib takes at most a uInt at a time).
uLong crc_update(uLong crc, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const uInt chunk = bytes > (1U << 30) ? (1U << 30) : static_cast<uInt>(bytes);
    crc = crc32(crc, p, chunk);
    p += chunk;
    bytes -= chunk;
  }
  return crc;
}

// Appends to an AtomicFileWriter through a 1 MiB buffer and keeps the CRC of what it wrote.
class BinaryWriter {
 public:
  explicit BinaryWriter(const std::string& path) : out_(path) {}

  void raw(const void* data, std::size_t bytes) {
    crc_ = crc_update(crc_, data, bytes);
    out_.write(std::string_view(static_cast<const char*>(data), bytes));
  }
  template <typename T>
  void value(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(&v, sizeof v);
  }
  template <typename T>
  void array(std::span<const T> v) {
    value<std::uint64_t>(v.size());
    if (!v.empty()) raw(v.data(), v.size() * sizeof(T));
  }
  void string(std::string_view s) {
    value<std::uint64_t>(s.size());
    if (!s.empty()) raw(s.data(), s.size());
  }
  void strings(const std::vector<std::string>& v) {
    value<std::uint64_t>(v.size());
    for (const std::string& s : v) string(s);
  }
  void magic() { out_.write(kMagic); }  // outside the CRC
  void finish() {
    const auto crc = static_cast<std::uint32_t>(crc_);
    out_.write(std::string_view(reinterpret_cast<const char*>(&crc), sizeof crc));
    out_.commit();
  }

 private:
  AtomicFileWriter out_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
};

// Reads the file with every count checked against the bytes left; errors name the file and the
// byte offset.
class BinaryReader {
 public:
  explicit BinaryReader(const std::string& path) : path_(path) {
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_)
      throw IoError(
          fmt::format("cannot open '{}': {}", path, std::generic_category().message(errno)));
    if (std::fseek(file_.get(), 0, SEEK_END) != 0)
      throw IoError(fmt::format("cannot read '{}': not a seekable file", path));
    const long size = std::ftell(file_.get());
    if (size < 0 || std::fseek(file_.get(), 0, SEEK_SET) != 0)
      throw IoError(fmt::format("cannot read '{}': not a seekable file", path));
    size_ = static_cast<std::uint64_t>(size);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(path_, 0, 0, fmt::format("binary dataset, byte {}: {}", pos_, what));
  }

  void raw(void* data, std::size_t bytes, bool with_crc = true) {
    if (bytes > left())
      fail(fmt::format("the file ends {} bytes early (truncated?)", bytes - left()));
    if (bytes > 0 && std::fread(data, 1, bytes, file_.get()) != bytes)
      throw IoError(
          fmt::format("cannot read '{}': {}", path_, std::generic_category().message(errno)));
    if (with_crc) crc_ = crc_update(crc_, data, bytes);
    pos_ += bytes;
  }
  template <typename T>
  T value() {
    T v{};
    raw(&v, sizeof v);
    return v;
  }
  // A count of items of `size` bytes each that must fit in what is left of the file.
  std::uint64_t count(std::size_t size, const char* what) {
    const auto n = value<std::uint64_t>();
    if (n > left() / size)
      fail(fmt::format("{} claims {} entries, more than the {} bytes left hold", what, n, left()));
    return n;
  }
  template <typename T>
  std::vector<T> array(const char* what) {
    std::vector<T> v(count(sizeof(T), what));
    if (!v.empty()) raw(v.data(), v.size() * sizeof(T));
    return v;
  }
  std::string string(const char* what) {
    std::string s(count(1, what), '\0');
    if (!s.empty()) raw(s.data(), s.size());
    return s;
  }
  std::vector<std::string> strings(const char* what) {
    std::vector<std::string> v(count(8, what));  // each string takes at least its 8-byte length
    for (std::string& s : v) s = string(what);
    return v;
  }
  // Skips `n` items of `size` bytes (they must fit in what is left), outside the checksum.
  void skip(std::uint64_t n, std::size_t size, const char* what) {
    if (n > left() / size)
      fail(fmt::format("{} claims {} entries, more than the {} bytes left hold", what, n, left()));
    const std::uint64_t bytes = n * size;
    if (bytes > 0 && std::fseek(file_.get(), static_cast<long>(bytes), SEEK_CUR) != 0)
      throw IoError(fmt::format("cannot read '{}': not a seekable file", path_));
    pos_ += bytes;
  }
  template <typename T>
  void skip_array(const char* what) {
    skip(count(sizeof(T), what), sizeof(T), what);
  }
  void skip_strings(const char* what) {
    const std::uint64_t n = count(8, what);
    for (std::uint64_t k = 0; k < n; ++k) skip(count(1, what), 1, what);
  }
  void check_crc() {
    const auto expected = static_cast<std::uint32_t>(crc_);
    std::uint32_t stored = 0;
    raw(&stored, sizeof stored, false);
    if (stored != expected)
      fail(fmt::format("checksum mismatch (stored {:08x}, computed {:08x}): the file is corrupt",
                       stored, expected));
    if (left() != 0) fail(fmt::format("{} unexpected bytes after the checksum", left()));
  }
  [[nodiscard]] std::uint64_t left() const noexcept { return size_ - pos_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  struct Close {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Close> file_;
  std::uint64_t size_ = 0, pos_ = 0;
  uLong crc_ = crc32(0L, Z_NULL, 0);
};

void write_features(BinaryWriter& w, const FeatureMatrix& x) {
  w.value<std::uint8_t>(x.is_sparse() ? 1 : 0);
  w.value<std::uint64_t>(x.rows());
  w.value<std::uint64_t>(x.cols());
  if (!x.is_sparse()) {
    const DenseView v = x.dense_view();
    for (std::size_t i = 0; i < v.rows; ++i) w.raw(v.row(i).data(), v.cols * sizeof(double));
    return;
  }
  const CsrView v = x.csr_view();
  w.raw(v.indptr.data(), v.indptr.size() * sizeof(std::int64_t));
  w.value<std::uint64_t>(v.indices.size());
  w.raw(v.indices.data(), v.indices.size() * sizeof(std::int32_t));
  w.raw(v.values.data(), v.values.size() * sizeof(double));
}

// Features are finite, as every text reader makes them.
void check_finite(const BinaryReader& r, const std::vector<double>& values) {
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!std::isfinite(values[k]))
      r.fail(fmt::format("feature value {} of the matrix is {}, expected a finite number", k,
                         values[k]));
}

FeatureMatrix read_features(BinaryReader& r) {
  const auto sparse = r.value<std::uint8_t>();
  if (sparse > 1) r.fail(fmt::format("storage flag is {}, expected 0 (dense) or 1 (CSR)", sparse));
  const auto rows = r.value<std::uint64_t>();
  const auto cols = r.value<std::uint64_t>();
  // Every row of a dataset costs bytes somewhere (features, a label, a column code), so a row
  // count above the bytes left is corrupt, even for a 0-column matrix.
  if (rows > r.left())
    r.fail(fmt::format("the matrix claims {} rows, more than the {} bytes left", rows, r.left()));
  if (sparse == 0) {
    if (cols != 0 && rows > r.left() / sizeof(double) / cols)
      r.fail(fmt::format("a dense {} x {} matrix does not fit in the {} bytes left", rows, cols,
                         r.left()));
    std::vector<double> data(rows * cols);
    if (!data.empty()) r.raw(data.data(), data.size() * sizeof(double));
    check_finite(r, data);
    return FeatureMatrix::dense(std::move(data), rows, cols);
  }
  if (rows >= r.left() / sizeof(std::int64_t))
    r.fail(
        fmt::format("a CSR matrix of {} rows does not fit in the {} bytes left", rows, r.left()));
  std::vector<std::int64_t> indptr(rows + 1);
  r.raw(indptr.data(), indptr.size() * sizeof(std::int64_t));
  const auto nnz = r.count(sizeof(std::int32_t) + sizeof(double), "CSR entries");
  std::vector<std::int32_t> indices(nnz);
  std::vector<double> values(nnz);
  if (nnz > 0) {
    r.raw(indices.data(), nnz * sizeof(std::int32_t));
    r.raw(values.data(), nnz * sizeof(double));
  }
  check_finite(r, values);
  try {  // validates indptr and the column indices
    return FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values), cols);
  } catch (const InvalidArgument& e) {
    r.fail(e.what());
  }
}

void check_labels(const BinaryReader& r, const Labels& y, std::size_t rows) {
  const std::size_t n_out = y.names.size();
  const bool sets = !y.set_indptr.empty() || !y.set_indices.empty();
  if ((y.kind != LabelKind::kMultilabel && sets) ||
      (y.kind != LabelKind::kBinary && y.kind != LabelKind::kMulticlass && !y.values.empty()))
    r.fail(fmt::format("{} labels with arrays of another label kind", to_string(y.kind)));
  switch (y.kind) {
    case LabelKind::kNone:
      return;
    case LabelKind::kBinary:
    case LabelKind::kMulticlass: {
      if (y.values.size() != rows)
        r.fail(fmt::format("{} labels for {} rows", y.values.size(), rows));
      if (y.kind == LabelKind::kBinary && n_out != 2)
        r.fail(fmt::format("binary labels have {} names, expected 2", n_out));
      const std::int32_t hi =
          y.kind == LabelKind::kBinary ? 1 : static_cast<std::int32_t>(n_out) - 1;
      for (std::size_t i = 0; i < rows; ++i)
        if (y.values[i] < 0 || y.values[i] > hi)
          r.fail(fmt::format("label of row {} is {}, expected 0..{}", i + 1, y.values[i], hi));
      return;
    }
    case LabelKind::kMultilabel: {
      if (y.set_indptr.size() != rows + 1 || y.set_indptr.front() != 0 ||
          static_cast<std::uint64_t>(y.set_indptr.back()) != y.set_indices.size())
        r.fail("label sets: indptr does not match the rows and the label indices");
      for (std::size_t i = 0; i < rows; ++i)  // with the ends checked: every offset in range
        if (y.set_indptr[i + 1] < y.set_indptr[i])
          r.fail(fmt::format("label sets: indptr decreases at row {}", i + 1));
      for (std::size_t i = 0; i < rows; ++i) {
        for (auto k = y.set_indptr[i]; k < y.set_indptr[i + 1]; ++k) {
          const std::int32_t l = y.set_indices[static_cast<std::size_t>(k)];
          if (l < 0 || static_cast<std::size_t>(l) >= n_out ||
              (k > y.set_indptr[i] && l <= y.set_indices[static_cast<std::size_t>(k) - 1]))
            r.fail(fmt::format("label set of row {}: label {} out of range or out of order", i + 1,
                               l));
        }
      }
      return;
    }
  }
  r.fail("unknown label kind");
}

Labels read_labels(BinaryReader& r, std::size_t rows) {
  Labels y;
  const auto kind = r.value<std::uint8_t>();
  if (kind > static_cast<std::uint8_t>(LabelKind::kMultilabel))
    r.fail(fmt::format("label kind is {}, expected 0..3", kind));
  y.kind = static_cast<LabelKind>(kind);
  y.values = r.array<std::int32_t>("labels");
  y.set_indptr = r.array<std::int64_t>("label-set offsets");
  y.set_indices = r.array<std::int32_t>("label-set entries");
  y.names = r.strings("label names");
  check_labels(r, y, rows);
  return y;
}

Column read_column(BinaryReader& r, std::size_t rows) {
  Column c;
  c.name = r.string("column name");
  c.levels = r.strings("column levels");
  c.codes = r.array<std::int32_t>("column codes");
  c.numeric = r.array<double>("column numbers");
  if (c.codes.size() != rows || (!c.numeric.empty() && c.numeric.size() != rows))
    r.fail(fmt::format("column '{}' has {} values for {} rows", c.name, c.codes.size(), rows));
  for (std::size_t i = 0; i < rows; ++i)
    if (c.codes[i] < -1 || c.codes[i] >= static_cast<std::int64_t>(c.levels.size()))
      r.fail(fmt::format("column '{}', row {}: code {} outside -1..{}", c.name, i + 1, c.codes[i],
                         c.levels.size()));
  return c;
}

bool same_spec(const FeatureSpec& a, const FeatureSpec& b) {
  return a.kind == b.kind && a.source == b.source && a.first_feature == b.first_feature &&
         a.levels == b.levels && a.offset == b.offset && a.scale == b.scale && a.impute == b.impute;
}

// Whether features built with `a` and with `b` are the same: the label fields and the missing-
// value policy (which rows a reader kept, not how it encoded them) may differ.
bool same_features(const Encoding& a, const Encoding& b) {
  return a.format == b.format && a.num_features == b.num_features &&
         a.feature_names == b.feature_names &&
         std::equal(a.specs.begin(), a.specs.end(), b.specs.begin(), b.specs.end(), same_spec);
}

// The magic bytes, the format version and the flags.
void read_header(BinaryReader& r) {
  char magic[8] = {};
  r.raw(magic, sizeof magic, false);
  if (std::string_view(magic, sizeof magic) != kMagic)
    r.fail("not a rateopt binary dataset (write one with `rateopt convert`)");
  if (const auto version = r.value<std::uint32_t>(); version != kVersion)
    r.fail(fmt::format("format version {}, this build reads version {}", version, kVersion));
  if (const auto flags = r.value<std::uint32_t>(); flags != 0)
    r.fail(fmt::format("unknown flags {:#x}", flags));
}

}  // namespace

bool io_detail::has_dataset_binary_magic(std::string_view bytes) noexcept {
  return bytes.substr(0, kMagic.size()) == kMagic;
}

bool is_dataset_binary(const std::string& path) {
  // Only a regular file is looked into: a pipe or FIFO (/dev/stdin, <(zcat ...)) cannot be read
  // twice, and its head, once read here, would be lost to the reader that opens it next.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return false;
  char head[8] = {};
  return std::fread(head, 1, sizeof head, f.get()) == sizeof head &&
         std::string_view(head, sizeof head) == kMagic;
}

void write_dataset_binary(const Dataset& data, const std::string& path) {
  require_little_endian();
  BinaryWriter w(path);
  w.magic();
  w.value<std::uint32_t>(kVersion);
  w.value<std::uint32_t>(0);
  write_features(w, data.features());
  const Labels& y = data.labels();
  w.value<std::uint8_t>(static_cast<std::uint8_t>(y.kind));
  w.array<std::int32_t>(y.values);
  w.array<std::int64_t>(y.set_indptr);
  w.array<std::int32_t>(y.set_indices);
  w.strings(y.names);
  w.array<double>(data.weights());
  w.value<std::uint64_t>(data.columns().size());
  for (const Column& c : data.columns()) {
    w.string(c.name);
    w.strings(c.levels);
    w.array<std::int32_t>(c.codes);
    w.array<double>(c.numeric);
  }
  w.string(data.encoding().to_json());
  w.finish();
}

Encoding read_dataset_binary_encoding(const std::string& path) {
  require_little_endian();
  BinaryReader r(path);
  read_header(r);
  // Skip the arrays by their counts: features, labels, weights, columns.
  const auto sparse = r.value<std::uint8_t>();
  const auto rows = r.value<std::uint64_t>();
  const auto cols = r.value<std::uint64_t>();
  if (sparse == 0) {
    if (cols != 0 && rows > r.left() / 8 / cols)
      r.fail(fmt::format("the dense features claim {} x {} values, more than the file holds", rows,
                         cols));
    r.skip(rows * cols, sizeof(double), "dense features");
  } else {
    if (rows >= r.left() / 8) r.fail(fmt::format("the CSR features claim {} rows", rows));
    r.skip(rows + 1, sizeof(std::int64_t), "CSR row offsets");
    r.skip(r.count(sizeof(std::int32_t) + sizeof(double), "CSR entries"),
           sizeof(std::int32_t) + sizeof(double), "CSR entries");
  }
  (void)r.value<std::uint8_t>();  // label kind
  r.skip_array<std::int32_t>("labels");
  r.skip_array<std::int64_t>("label-set offsets");
  r.skip_array<std::int32_t>("label-set entries");
  r.skip_strings("label names");
  r.skip_array<double>("weights");
  const auto n_columns = r.count(32, "columns");
  for (std::uint64_t k = 0; k < n_columns; ++k) {
    r.skip(r.count(1, "column name"), 1, "column name");
    r.skip_strings("column levels");
    r.skip_array<std::int32_t>("column codes");
    r.skip_array<double>("column numbers");
  }
  try {
    return Encoding::from_json(r.string("encoding"));
  } catch (const InvalidArgument& e) {
    r.fail(e.what());
  }
}

Dataset read_dataset_binary(const std::string& path, const Encoding* encoding,
                            const std::vector<std::string>* keep_columns) {
  require_little_endian();
  BinaryReader r(path);
  read_header(r);
  FeatureMatrix x = read_features(r);
  const std::size_t rows = x.rows();
  Labels y = read_labels(r, rows);
  std::vector<double> weights = r.array<double>("weights");
  const auto n_columns = r.count(32, "columns");  // a column takes at least 32 bytes
  std::vector<Column> columns;
  std::vector<std::string> dropped;  // names of the columns not kept
  columns.reserve(n_columns);
  for (std::uint64_t k = 0; k < n_columns; ++k) {
    Column c = read_column(r, rows);
    if (keep_columns == nullptr ||
        std::find(keep_columns->begin(), keep_columns->end(), c.name) != keep_columns->end()) {
      columns.push_back(std::move(c));
    } else {
      dropped.push_back(std::move(c.name));
    }
  }
  const std::string stored_encoding = r.string("encoding");
  r.check_crc();
  Dataset ds;
  try {
    ds = Dataset(std::move(x), std::move(y));
    ds.set_weights(std::move(weights));
    for (Column& c : columns) ds.add_column(std::move(c));
    if (keep_columns != nullptr) ds.keep_columns(*keep_columns, dropped);
    ds.encoding() = Encoding::from_json(stored_encoding);
  } catch (const InvalidArgument& e) {
    r.fail(e.what());
  }
  const Encoding& stored = ds.encoding();
  if (stored.num_features != ds.num_features() ||
      (!stored.feature_names.empty() && stored.feature_names.size() != ds.num_features()))
    r.fail(fmt::format("the encoding describes {} features ({} names), the matrix has {} columns",
                       stored.num_features, stored.feature_names.size(), ds.num_features()));
  ds.set_source(path);
  if (encoding != nullptr && !same_features(*encoding, ds.encoding()))
    throw InvalidArgument(fmt::format(
        "{} is a binary dataset whose features were encoded otherwise than the model's (its own "
        "encoding: {} features); convert the text file with the model's encoding: rateopt "
        "convert --model MODEL",
        path, ds.encoding().num_features));
  return ds;
}

}  // namespace rateopt
