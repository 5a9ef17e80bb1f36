#include "io/io_util.hpp"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <system_error>

#include "common/check.hpp"
#include "common/csr.hpp"

namespace rateopt::io_detail {

NumberKind parse_double(std::string_view s, double& out) noexcept {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) return NumberKind::kNotNumber;
  }
  if (s.empty()) return NumberKind::kNotNumber;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  double value = 0;
  // fast_float, correctly rounded: an overflow gives an infinity, an underflow 0 or a subnormal.
  const auto [ptr, ec] = fast_float::from_chars(first, last, value);
  if (ptr != last || ec != std::errc()) return NumberKind::kNotNumber;
  out = value;
  return std::isfinite(value) ? NumberKind::kFinite : NumberKind::kNonFinite;
}

bool parse_int64(std::string_view s, std::int64_t& out) noexcept {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;
  }
  if (s.empty()) return false;
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), last, out);
  return ec == std::errc() && ptr == last;
}

std::string_view trim(std::string_view s) noexcept {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) noexcept {
  if (s.size() < suffix.size()) return false;
  const std::string_view tail = s.substr(s.size() - suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char a = tail[i];
    char b = suffix[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

std::string quoted(std::string_view s, std::size_t max_chars) {
  std::string out = "'";
  const bool cut = s.size() > max_chars;
  if (cut) s = s.substr(0, max_chars);
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  out += cut ? "...'" : "'";
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string join_limited(const std::vector<std::string>& items, std::size_t max_items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max_items; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > max_items) out += ", ...";
  return out.empty() ? std::string("none") : out;
}

std::string_view missing_policy_name(MissingPolicy policy) noexcept {
  switch (policy) {
    case MissingPolicy::kDrop:
      return "drop";
    case MissingPolicy::kZero:
      return "zero";
    case MissingPolicy::kError:
      return "error";
  }
  return "drop";
}

std::size_t count_lines(std::string_view text) noexcept {
  // 8 bytes at a time: a byte of `x` is 0 where the text has '\n'; `zero` gets its top bit set
  // for exactly those bytes (no carry between bytes: each is at most 0x7F + 0x7F).
  constexpr std::uint64_t kNewlines = 0x0A0A0A0A0A0A0A0AULL;
  constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  std::size_t n = 0;
  std::size_t k = 0;
  for (; k + 8 <= text.size(); k += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + k, 8);
    const std::uint64_t x = word ^ kNewlines;
    const std::uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    // The flags moved to each byte's low bit, summed into the top byte by one multiply (a
    // popcount is a libgcc call in a build for the baseline x86-64, 2% of a CSV read).
    n += static_cast<std::size_t>(((zero >> 7) * 0x0101010101010101ULL) >> 56);
  }
  for (; k < text.size(); ++k) n += (text[k] == '\n');
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

// ---- feature matrices and encodings -------------------------------------------------------------

bool keep_dense(std::size_t rows, std::size_t cols, std::size_t nnz) noexcept {
  const double cells = static_cast<double>(rows) * static_cast<double>(cols);
  // The solvers' own threshold (kSparseCopyDensity): a matrix they would fit from a CSR copy is
  // kept as CSR, so that no process ever holds both.
  return cells <= static_cast<double>(1 << 22) ||
         static_cast<double>(nnz) > detail::kSparseCopyDensity * cells;
}

FeatureMatrix make_matrix(SparseRows&& rows, std::size_t cols, Storage storage) {
  const std::size_t n = rows.indptr.size() - 1;
  bool dense = storage == Storage::kDense;
  if (storage == Storage::kAuto) dense = keep_dense(n, cols, rows.indices.size());
  if (!dense) {
    return FeatureMatrix::csr(std::move(rows.indptr), std::move(rows.indices),
                              std::move(rows.values), cols);
  }
  std::vector<double> data(n * cols, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto k = rows.indptr[i]; k < rows.indptr[i + 1]; ++k)
      data[i * cols + static_cast<std::size_t>(rows.indices[k])] = rows.values[k];
  }
  return FeatureMatrix::dense(std::move(data), n, cols);
}

void check_encoding(const Encoding& encoding, std::string_view format) {
  RATEOPT_CHECK(encoding.format == format,
                "the encoding is for format '{}', it cannot be applied to a {} file",
                encoding.format, format);
  RATEOPT_CHECK(
      encoding.feature_names.empty() || encoding.feature_names.size() == encoding.num_features,
      "the encoding has {} feature names, expected num_features = {}",
      encoding.feature_names.size(), encoding.num_features);
  RATEOPT_CHECK(encoding.num_features < (std::size_t{1} << 31),
                "the encoding has {} features, more than a feature index can hold",
                encoding.num_features);
  if (format == "libsvm") return;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // [first, end) per spec
  for (const auto& s : encoding.specs) {
    RATEOPT_CHECK(s.kind != FeatureSpec::Kind::kIndex,
                  "an index feature spec cannot be applied to a {} file", format);
    const std::size_t width = s.kind == FeatureSpec::Kind::kNumeric ? 1 : s.levels.size();
    RATEOPT_CHECK(s.first_feature <= encoding.num_features &&
                      width <= encoding.num_features - s.first_feature,
                  "the feature spec of column '{}' writes features [{}, {}), outside [0, {})",
                  s.source, s.first_feature, s.first_feature + width, encoding.num_features);
    if (s.kind == FeatureSpec::Kind::kNumeric)
      RATEOPT_CHECK(std::isfinite(s.offset) && std::isfinite(s.scale) && s.scale != 0,
                    "the numeric spec of column '{}' has offset {} and scale {}, expected finite "
                    "values and a nonzero scale",
                    s.source, s.offset, s.scale);
    if (width > 0) ranges.emplace_back(s.first_feature, s.first_feature + width);
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t k = 1; k < ranges.size(); ++k)
    RATEOPT_CHECK(ranges[k].first >= ranges[k - 1].second,
                  "the encoding's feature specs overlap at feature {}", ranges[k].first);
}

// ---- LevelIndex ---------------------------------------------------------------------------------

namespace {

// splitmix64's finaliser: a multiply and folds, every input bit reaching the low bits.
std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

// A hash of a text read 8 bytes at a time (levels, labels: most are at most 8 bytes, one word):
// std::hash's byte loop was a twentieth of a CSV read. Codes do not depend on it.
std::size_t text_hash(std::string_view s) noexcept {
  std::uint64_t h = mix64(s.size());
  std::size_t k = 0;
  for (; k + 8 <= s.size(); k += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, s.data() + k, 8);
    h = mix64(h ^ word);
  }
  if (k < s.size()) {
    std::uint64_t word = 0;
    for (std::size_t i = k; i < s.size(); ++i)
      word |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i])) << (8 * (i - k));
    h = mix64(h ^ word);
  }
  return static_cast<std::size_t>(h);
}

}  // namespace

void LevelIndex::rehash(std::size_t slots) {
  slots_.assign(slots, Slot{});
  const std::size_t mask = slots - 1;
  for (std::size_t code = 0; code < keys_.size(); ++code) {
    std::size_t i = hashes_[code] & mask;
    while (slots_[i].code >= 0) i = (i + 1) & mask;
    slots_[i] = {static_cast<std::uint32_t>(hashes_[code]), static_cast<std::int32_t>(code)};
  }
}

std::int32_t LevelIndex::find(std::string_view value) const noexcept {
  if (slots_.empty()) return -1;
  const std::size_t h = text_hash(value);
  const auto low = static_cast<std::uint32_t>(h);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot slot = slots_[i];
    if (slot.code < 0) return -1;
    if (slot.hash == low && same_text(keys_[static_cast<std::size_t>(slot.code)], value))
      return slot.code;
  }
}

std::int32_t LevelIndex::find_or_add(std::string_view value, bool& inserted) {
  if (slots_.empty()) rehash(16);
  const std::size_t h = text_hash(value);
  const auto low = static_cast<std::uint32_t>(h);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = h & mask;
  for (;;) {
    const Slot slot = slots_[i];
    if (slot.code < 0) break;
    if (slot.hash == low && same_text(keys_[static_cast<std::size_t>(slot.code)], value)) {
      inserted = false;
      return slot.code;
    }
    i = (i + 1) & mask;
  }
  inserted = true;
  const auto code = static_cast<std::int32_t>(keys_.size());
  keys_.push_back(value);
  hashes_.push_back(h);
  if (2 * keys_.size() > slots_.size()) {
    rehash(2 * slots_.size());
  } else {
    slots_[i] = {low, code};
  }
  return code;
}

// ---- NumberIndex --------------------------------------------------------------------------------

NumberIndex::Slot NumberIndex::slot_of(std::uint64_t bits, std::string_view text) noexcept {
  Slot slot;
  slot.bits = bits;
  const std::size_t n = std::min<std::size_t>(text.size(), 8);
  for (std::size_t i = 0; i < n; ++i)
    slot.head |= static_cast<std::uint64_t>(static_cast<unsigned char>(text[i])) << (8 * i);
  slot.size = static_cast<std::uint32_t>(std::min<std::size_t>(text.size(), UINT32_MAX));
  return slot;
}

std::size_t NumberIndex::hash_of(std::uint64_t bits) noexcept {
  return static_cast<std::size_t>(mix64(bits));  // the low bits pick the slot
}

void NumberIndex::rehash(std::size_t slots) {
  slots_.assign(slots, Slot{});
  const std::size_t mask = slots - 1;
  constexpr std::size_t kAhead = 16;  // codes between a slot's prefetch and its write
  for (std::size_t code = 0; code < keys_.size(); ++code) {
    if (code + kAhead < keys_.size())
      __builtin_prefetch(&slots_[hash_of(bits_[code + kAhead]) & mask], 1);
    std::size_t i = hash_of(bits_[code]) & mask;
    while (slots_[i].code >= 0) i = (i + 1) & mask;
    slots_[i] = slot_of(bits_[code], keys_[code]);
    slots_[i].code = static_cast<std::int32_t>(code);
  }
}

void NumberIndex::prefetch(double value) const noexcept {
  if (slots_.empty()) return;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  __builtin_prefetch(&slots_[hash_of(bits) & (slots_.size() - 1)]);
}

std::int32_t NumberIndex::find_or_add(double value, std::string_view text, bool& inserted) {
  if (slots_.empty()) rehash(16);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const Slot want = slot_of(bits, text);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash_of(bits) & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.code < 0) break;
    if (slot.bits == want.bits && slot.size == want.size && slot.head == want.head &&
        (text.size() <= 8 || same_text(keys_[static_cast<std::size_t>(slot.code)], text))) {
      inserted = false;
      return slot.code;
    }
  }
  inserted = true;
  const auto code = static_cast<std::int32_t>(keys_.size());
  keys_.push_back(text);
  bits_.push_back(bits);
  if (2 * keys_.size() > slots_.size()) {
    rehash(2 * slots_.size());
  } else {
    slots_[i] = want;
    slots_[i].code = code;
  }
  return code;
}

// ---- ColumnBuilder ------------------------------------------------------------------------------

ColumnBuilder::ColumnBuilder(std::string name, std::size_t expected_rows)
    : texts_(std::make_shared<DeferredLevels>()), expected_rows_(expected_rows) {
  column_.name = std::move(name);
  column_.numeric.reserve(expected_rows);
  texts_->ends.reserve(expected_rows);
}

void ColumnBuilder::push(std::string_view value, bool missing) {
  if (missing) {
    if (numeric_) {
      column_.numeric.push_back(std::nan(""));
    } else {
      column_.codes.push_back(-1);
    }
    return;
  }
  double x = 0;
  if (numeric_ && parse_double(trim(value), x) == NumberKind::kFinite) {
    push_number(value, x);
    return;
  }
  if (numeric_) to_text();
  push_text(value);
}

void ColumnBuilder::push_number(std::string_view value, double number) {
  if (!numeric_) {
    push_text(value);
    return;
  }
  texts_->text.append(value);
  texts_->ends.push_back(texts_->text.size());
  column_.numeric.push_back(number);
}

void ColumnBuilder::to_text() {
  // The codes of the rows so far by their texts: the same codes, in the same order, as by value
  // and text (a text has one value). index_'s keys view texts_, which no longer grows.
  numeric_ = false;
  column_.codes.reserve(std::max(expected_rows_, column_.numeric.size()));
  std::size_t k = 0;
  for (const double x : column_.numeric) {
    if (std::isnan(x)) {
      column_.codes.push_back(-1);
    } else {
      push_text(texts_->at(k++));
    }
  }
  column_.numeric.clear();
  column_.numeric.shrink_to_fit();
}

void ColumnBuilder::push_text(std::string_view value) {
  bool inserted = false;
  const std::int32_t code = index_.find_or_add(value, inserted);
  if (inserted) column_.levels.emplace_back(value);
  column_.codes.push_back(code);
}

Column ColumnBuilder::finish() && {
  if (numeric_ && !column_.numeric.empty()) column_.deferred = std::move(texts_);
  return std::move(column_);
}

void build_deferred_levels(Column& column) {
  const DeferredLevels& texts = *column.deferred;
  const std::vector<double>& numbers = column.numeric;
  const std::size_t n = numbers.size();
  NumberIndex index;
  column.levels.clear();
  column.codes.clear();
  column.codes.reserve(n);
  constexpr std::size_t kAhead = 16;  // rows between a prefetch and its lookup
  std::size_t k = 0;                  // present values so far
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) index.prefetch(numbers[i + kAhead]);
    if (std::isnan(numbers[i])) {
      column.codes.push_back(-1);
      continue;
    }
    RATEOPT_CHECK(k < texts.ends.size(), "column '{}': {} deferred texts for more present values",
                  column.name, texts.ends.size());
    const std::string_view text = texts.at(k++);
    bool inserted = false;
    const std::int32_t code = index.find_or_add(numbers[i], text, inserted);
    if (inserted) column.levels.emplace_back(text);
    column.codes.push_back(code);
  }
  RATEOPT_CHECK(k == texts.ends.size(), "column '{}': {} deferred texts for {} present values",
                column.name, texts.ends.size(), k);
}

}  // namespace rateopt::io_detail
