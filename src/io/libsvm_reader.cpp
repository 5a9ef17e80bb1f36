// LIBSVM / SVMlight reader: `label idx:val ...` with 1-based strictly increasing indices.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/check.hpp"
#include "io/io_util.hpp"
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

}  // namespace

Dataset parse_libsvm_impl(std::string_view text, const LibsvmOptions& options,
                          const std::string& name, const Encoding* encoding, ReadStats* stats) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  ReadStats local_stats;
  ReadStats& st = stats != nullptr ? *stats : local_stats;
  st = ReadStats{};
  st.lines = count_lines(text);
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

  SparseRows rows;
  std::vector<LabelField> labels_text;
  bool any_comma = false;
  std::size_t first_empty = 0;  // row index + 1 of the first row without a label
  std::string_view first_empty_token;
  std::int64_t max_index = 0;

  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const std::size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    std::size_t p = 0;
    auto next_token = [&](std::string_view& tok, std::size_t& col) {
      while (p < line.size() && is_space(line[p])) ++p;
      if (p >= line.size()) return false;
      const std::size_t start = p;
      while (p < line.size() && !is_space(line[p])) ++p;
      tok = line.substr(start, p - start);
      col = start + 1;
      return true;
    };
    std::string_view tok;
    std::size_t col = 0;
    if (!next_token(tok, col)) continue;  // blank or comment line

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
      have_token = next_token(tok, col);
    }
    std::int64_t prev = 0;
    while (have_token) {
      auto fail = [&](const std::string& what) { throw ParseError(name, line_no, col, what); };
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
      if (declared != 0 && idx > static_cast<std::int64_t>(declared))
        fail(fmt::format("feature index {} exceeds num_features = {}", idx, declared));
      if (idx <= prev)
        fail(
            fmt::format("expected a feature index greater than {} (indices must be strictly "
                        "increasing), found {}",
                        prev, io_detail::quoted(tok)));
      double value = 0;
      const NumberKind kind = parse_double(tok.substr(colon + 1), value);
      if (kind != NumberKind::kFinite)
        fail(fmt::format("expected a {}number after '{}:', found {}",
                         kind == NumberKind::kNonFinite ? "finite " : "", idx,
                         io_detail::quoted(tok)));
      prev = idx;
      max_index = std::max(max_index, idx);
      rows.indices.push_back(static_cast<std::int32_t>(idx - 1));
      rows.values.push_back(value);
      have_token = next_token(tok, col);
    }
    rows.end_row();
  }
  const std::size_t n = labels_text.size();
  const std::size_t cols = declared != 0 ? declared : static_cast<std::size_t>(max_index);

  // ---- labels -----------------------------------------------------------------------------------
  Encoding enc;
  enc.format = "libsvm";
  Labels labels;
  const bool multilabel = options.multilabel || any_comma;
  if (!multilabel && first_empty != 0) {
    const auto& lf = labels_text[first_empty - 1];
    detail::throw_parse_error(name, lf.line, lf.column,
                              "expected a label before the features, found {}",
                              io_detail::quoted(first_empty_token));
  }
  if (n == 0) {
    labels.kind = LabelKind::kNone;
  } else if (multilabel) {
    labels.kind = LabelKind::kMultilabel;
    labels.set_indptr.reserve(n + 1);
    labels.set_indptr.push_back(0);
    std::int64_t max_label = -1;
    std::vector<std::int32_t> set;
    for (const auto& lf : labels_text) {
      set.clear();
      if (!lf.text.empty()) {
        std::size_t start = 0;
        while (true) {
          const std::size_t comma = lf.text.find(',', start);
          const std::string_view part = lf.text.substr(
              start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
          std::int64_t id = 0;
          if (!parse_int64(part, id) || id < 0 || id > kMaxLabelId) {
            detail::throw_parse_error(name, lf.line, lf.column + start,
                                      "expected a label id in [0, {}] in the label list {}, "
                                      "found {}",
                                      kMaxLabelId, io_detail::quoted(lf.text),
                                      io_detail::quoted(part));
          }
          set.push_back(static_cast<std::int32_t>(id));
          max_label = std::max(max_label, id);
          if (comma == std::string_view::npos) break;
          start = comma + 1;
        }
      }
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
  } else {
    std::vector<double> y(n);
    bool all01 = true;
    bool allpm = true;
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
      all01 = all01 && (v == 0.0 || v == 1.0);
      allpm = allpm && (v == -1.0 || v == 1.0);
    }
    labels.values.reserve(n);
    if (all01 || allpm) {
      labels.kind = LabelKind::kBinary;
      for (double v : y) labels.values.push_back(v == 1.0 ? 1 : 0);
      labels.names =
          all01 ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{"-1", "+1"};
      enc.positive_value = all01 ? "1" : "+1";
    } else {
      labels.kind = LabelKind::kMulticlass;
      std::map<std::int64_t, std::int32_t> classes;
      for (double v : y) classes.emplace(static_cast<std::int64_t>(v), 0);
      std::int32_t k = 0;
      for (auto& [cls, idx] : classes) {
        idx = k++;
        labels.names.push_back(std::to_string(cls));
      }
      for (double v : y) labels.values.push_back(classes[static_cast<std::int64_t>(v)]);
    }
  }

  // ---- features and encoding ------------------------------------------------------------------
  FeatureMatrix matrix = make_matrix(std::move(rows), cols, Storage::kSparse);
  enc.num_features = cols;
  if (cols <= kMaxNamedFeatures) {
    enc.feature_names.reserve(cols);
    for (std::size_t j = 1; j <= cols; ++j) enc.feature_names.push_back("f" + std::to_string(j));
  }
  FeatureSpec spec;
  spec.kind = FeatureSpec::Kind::kIndex;
  enc.specs.push_back(spec);
  Dataset ds(std::move(matrix), std::move(labels));
  ds.encoding() = std::move(enc);
  ds.set_source(name);
  return ds;
}

}  // namespace rateopt::io_detail
