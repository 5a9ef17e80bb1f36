// LIBSVM / SVMlight reader: `label idx:val ...` with 1-based strictly increasing indices.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "io/text_records.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxLabelId = (std::int64_t{1} << 20) - 1;  // multilabel ids
constexpr std::size_t kMaxNamedFeatures = std::size_t{1} << 20;    // f1..fD listed up to this D

struct LabelField {
  std::string_view text;  // empty for an empty multilabel set
  std::size_t line = 0;
  std::size_t column = 0;
};

// The number of features the matrix must have (0: the largest index seen).
std::size_t declared_features(const LibsvmOptions& options, const Encoding* encoding) {
  std::size_t declared = options.num_features;
  if (encoding != nullptr) {
    check_encoding(*encoding, "libsvm");
    RATEOPT_CHECK(declared == 0 || declared == encoding->num_features,
                  "LibsvmOptions::num_features = {} differs from the encoding's {} features",
                  declared, encoding->num_features);
    declared = encoding->num_features;
  }
  RATEOPT_CHECK(declared <= static_cast<std::size_t>(kMaxIndex),
                "LibsvmOptions::num_features = {} is larger than the largest feature index {}",
                declared, kMaxIndex);
  return declared;
}

// The records of a LIBSVM file: label fields (parsed later, once the label kind is known) and
// the feature rows.
class LibsvmRecords {
 public:
  LibsvmRecords(const std::string& name, std::size_t declared) : name_(name), declared_(declared) {}

  // first_line: the number of the text's first line.
  void read(std::string_view text, std::size_t first_line) {
    LineCursor lines(text, first_line);
    std::string_view line;
    while (lines.next(line)) {
      const std::size_t hash = line.find('#');
      if (hash != std::string_view::npos) line = line.substr(0, hash);
      read_record(line, lines.line_no());
    }
  }

  SparseRows rows;
  std::vector<LabelField> labels_text;
  bool any_comma = false;
  std::size_t first_empty = 0;  // row index + 1 of the first row without a label
  std::string_view first_empty_token;
  std::int64_t max_index = 0;

 private:
  void read_record(std::string_view line, std::size_t line_no) {
    std::size_t p = 0;
    std::string_view tok;
    std::size_t col = 0;
    if (!next_word(line, p, tok, col)) return;  // blank or comment line
    bool have_token = true;
    if (tok.find(':') != std::string_view::npos) {
      labels_text.push_back({{}, line_no, col});  // no label field: only valid for multilabel
      if (first_empty == 0) {
        first_empty = labels_text.size();
        first_empty_token = tok;
      }
    } else {
      labels_text.push_back({tok, line_no, col});
      any_comma = any_comma || tok.find(',') != std::string_view::npos;
      have_token = next_word(line, p, tok, col);
    }
    std::int64_t prev = 0;
    while (have_token) {
      prev = read_feature(tok, line_no, col, prev);
      have_token = next_word(line, p, tok, col);
    }
    rows.end_row();
  }

  // Appends the feature `index:value` to the current row; returns its index.
  std::int64_t read_feature(std::string_view tok, std::size_t line_no, std::size_t col,
                            std::int64_t prev) {
    auto fail = [&](const std::string& what) { throw ParseError(name_, line_no, col, what); };
    const std::size_t colon = tok.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == tok.size())
      fail(fmt::format("expected 'index:value', found {}", io_detail::quoted(tok)));
    std::int64_t idx = 0;
    if (!parse_int64(tok.substr(0, colon), idx))
      fail(fmt::format("expected an integer feature index in 'index:value', found {}",
                       io_detail::quoted(tok)));
    if (idx <= 0)
      fail(fmt::format("expected a positive feature index, found {}", io_detail::quoted(tok)));
    if (idx > kMaxIndex)
      fail(fmt::format("expected a feature index of at most {}, found {}", kMaxIndex,
                       io_detail::quoted(tok)));
    if (declared_ != 0 && idx > static_cast<std::int64_t>(declared_))
      fail(fmt::format("feature index {} exceeds num_features = {}", idx, declared_));
    if (idx <= prev)
      fail(
          fmt::format("expected a feature index greater than {} (indices must be strictly "
                      "increasing), found {}",
                      prev, io_detail::quoted(tok)));
    double value = 0;
    const NumberKind kind = parse_double(tok.substr(colon + 1), value);
    if (kind != NumberKind::kFinite)
      fail(fmt::format("expected a {}number after '{}:', found {}", finite_word(kind), idx,
                       io_detail::quoted(tok)));
    max_index = std::max(max_index, idx);
    rows.indices.push_back(static_cast<std::int32_t>(idx - 1));
    rows.values.push_back(value);
    return idx;
  }

  const std::string& name_;
  std::size_t declared_;
};

// Appends the sorted label ids of one comma-separated label list to `set`.
void parse_label_set(const LabelField& lf, const std::string& name, std::vector<std::int32_t>& set,
                     std::int64_t& max_label) {
  if (lf.text.empty()) return;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = lf.text.find(',', start);
    const std::string_view part = lf.text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::int64_t id = 0;
    if (!parse_int64(part, id) || id < 0 || id > kMaxLabelId) {
      detail::throw_parse_error(name, lf.line, lf.column + start,
                                "expected a label id in [0, {}] in the label list {}, found {}",
                                kMaxLabelId, io_detail::quoted(lf.text), io_detail::quoted(part));
    }
    set.push_back(static_cast<std::int32_t>(id));
    max_label = std::max(max_label, id);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

void set_multilabel_labels(const std::vector<LabelField>& labels_text, const std::string& name,
                           Labels& labels) {
  labels.kind = LabelKind::kMultilabel;
  labels.set_indptr.reserve(labels_text.size() + 1);
  labels.set_indptr.push_back(0);
  std::int64_t max_label = -1;
  std::vector<std::int32_t> set;
  for (const auto& lf : labels_text) {
    set.clear();
    parse_label_set(lf, name, set, max_label);
    std::sort(set.begin(), set.end());
    const auto dup = std::adjacent_find(set.begin(), set.end());
    if (dup != set.end()) {
      detail::throw_parse_error(name, lf.line, lf.column, "label {} appears twice in {}", *dup,
                                io_detail::quoted(lf.text));
    }
    labels.set_indices.insert(labels.set_indices.end(), set.begin(), set.end());
    labels.set_indptr.push_back(static_cast<std::int64_t>(labels.set_indices.size()));
  }
  for (std::int64_t k = 0; k <= max_label; ++k) labels.names.push_back(std::to_string(k));
}

// Binary (0/1, -1/+1) or multiclass labels; returns the encoding's positive value.
std::string set_class_labels(const std::vector<LabelField>& labels_text, const std::string& name,
                             Labels& labels) {
  const std::size_t n = labels_text.size();
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& lf = labels_text[i];
    const NumberKind kind = parse_double(lf.text, y[i]);
    const double v = y[i];
    const bool integral = kind == NumberKind::kFinite && std::trunc(v) == v &&
                          std::fabs(v) <= 9007199254740992.0;  // 2^53
    if (!integral) {
      detail::throw_parse_error(name, lf.line, lf.column,
                                "expected an integer label (-1/+1, 0/1 or a class number), "
                                "found {}",
                                io_detail::quoted(lf.text));
    }
  }
  labels.values.reserve(n);
  const BinaryCoding coding = binary_coding(y);
  if (coding != BinaryCoding::kNone) return set_binary_labels(y, coding, labels);
  std::vector<std::int64_t> classes(n);
  for (std::size_t i = 0; i < n; ++i) classes[i] = static_cast<std::int64_t>(y[i]);
  set_multiclass_labels(
      classes, [](std::int64_t c) { return std::to_string(c); }, labels);
  return {};
}

Encoding libsvm_encoding(std::size_t cols) {
  Encoding enc;
  enc.format = "libsvm";
  enc.num_features = cols;
  if (cols <= kMaxNamedFeatures) {
    enc.feature_names.reserve(cols);
    for (std::size_t j = 1; j <= cols; ++j) enc.feature_names.push_back("f" + std::to_string(j));
  }
  FeatureSpec spec;
  spec.kind = FeatureSpec::Kind::kIndex;
  enc.specs.push_back(spec);
  return enc;
}

}  // namespace

Dataset parse_libsvm_impl(std::string_view text, const LibsvmOptions& options,
                          const std::string& name, const Encoding* encoding, ReadStats* stats,
                          std::size_t records_line) {
  text = skip_bom(text);
  ReadStats local_stats;
  (void)begin_stats(stats, local_stats, text);
  const std::size_t declared = declared_features(options, encoding);
  LibsvmRecords rec(name, declared);
  rec.read(text, records_line > 0 ? records_line : 1);
  const std::size_t cols = declared != 0 ? declared : static_cast<std::size_t>(rec.max_index);

  Labels labels;
  std::string positive;
  const bool multilabel = options.multilabel || rec.any_comma;
  if (!multilabel && rec.first_empty != 0) {
    const auto& lf = rec.labels_text[rec.first_empty - 1];
    detail::throw_parse_error(name, lf.line, lf.column,
                              "expected a label before the features, found {}",
                              io_detail::quoted(rec.first_empty_token));
  }
  if (rec.labels_text.empty()) {
    labels.kind = LabelKind::kNone;
  } else if (multilabel) {
    set_multilabel_labels(rec.labels_text, name, labels);
  } else {
    positive = set_class_labels(rec.labels_text, name, labels);
  }

  FeatureMatrix matrix = make_matrix(std::move(rec.rows), cols, Storage::kSparse);
  Encoding enc = libsvm_encoding(cols);
  enc.positive_value = std::move(positive);
  Dataset ds(std::move(matrix), std::move(labels));
  finish_dataset(ds, std::move(enc), name);
  return ds;
}

std::vector<FilePart> libsvm_file_parts(const std::string& path, std::size_t part_bytes,
                                        std::size_t count, std::uint64_t size) {
  RATEOPT_CHECK(part_bytes > 0, "part_bytes is 0, expected a positive size");
  std::vector<FilePart> parts(count);
  std::size_t next = 0;      // the first part whose begin is not known yet
  std::uint64_t offset = 0;  // of the next line's first byte in the file
  LineReader reader(path);
  std::string_view line;
  while (reader.next_raw(line)) {
    const std::uint64_t start = offset;
    offset += line.size() + 1;
    // One record per line: this one begins every part not yet begun up to its own.
    for (const std::uint64_t own = start / part_bytes; next < count && next <= own; ++next) {
      parts[next].begin = start;
      parts[next].first_line = reader.line_number();
    }
  }
  finish_file_parts(parts, next, 0, reader.line_number() + 1, size);
  return parts;
}

}  // namespace rateopt::io_detail
