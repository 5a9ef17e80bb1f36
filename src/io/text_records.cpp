#include "io/text_records.hpp"

#include <algorithm>

namespace rateopt::io_detail {

std::string_view skip_bom(std::string_view text) noexcept {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

ReadStats& begin_stats(ReadStats* stats, ReadStats& local, std::string_view text) {
  ReadStats& st = stats != nullptr ? *stats : local;
  st = ReadStats{};
  st.lines = count_lines(text);
  return st;
}

void finish_file_parts(std::vector<FilePart>& parts, std::size_t begun, std::uint64_t header_end,
                       std::size_t next_line, std::uint64_t size) {
  // The parts from `begun` on start after the last record: empty, at the end of the file.
  for (std::size_t k = begun; k < parts.size(); ++k) {
    parts[k].begin = size;
    parts[k].first_line = next_line;
  }
  // min: a last line without a newline was counted one byte longer.
  header_end = std::min(header_end, size);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    parts[k].header_end = header_end;
    parts[k].begin = std::min(parts[k].begin, size);
    parts[k].end = k + 1 < parts.size() ? std::min(parts[k + 1].begin, size) : size;
  }
}

void finish_dataset(Dataset& ds, Encoding&& encoding, const std::string& name) {
  ds.encoding() = std::move(encoding);
  ds.set_source(name);
}

std::size_t line_end(std::string_view text, std::size_t pos) noexcept {
  const std::size_t eol = text.find('\n', pos);
  return eol == std::string_view::npos ? text.size() : eol;
}

std::size_t find_closing_quote(std::string_view s, std::size_t open, QuoteStyle style,
                               bool& escaped) noexcept {
  const char q = s[open];
  escaped = false;
  if (style == QuoteStyle::kDoubled) {
    std::size_t from = open + 1;
    while (true) {
      const std::size_t e = s.find(q, from);
      if (e == std::string_view::npos) return e;
      if (e + 1 < s.size() && s[e + 1] == q) {
        escaped = true;
        from = e + 2;
        continue;
      }
      return e;
    }
  }
  for (std::size_t i = open + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      escaped = true;
      ++i;
      continue;
    }
    if (s[i] == q) return i;
  }
  return std::string_view::npos;
}

std::string_view unescape(std::string_view inner, QuoteStyle style, TextArena& arena) {
  std::string out;
  out.reserve(inner.size());
  for (std::size_t k = 0; k < inner.size(); ++k) {
    char c = inner[k];
    if (style == QuoteStyle::kDoubled) {
      if (c == '"') ++k;  // "" -> "
    } else if (c == '\\' && k + 1 < inner.size()) {
      c = inner[++k];
      if (c == 'n') {
        c = '\n';
      } else if (c == 't') {
        c = '\t';
      } else if (c == 'r') {
        c = '\r';
      }
    }
    out += c;
  }
  arena.push_back(std::move(out));
  return arena.back();
}

BinaryCoding binary_coding(std::span<const double> y) noexcept {
  bool all01 = true;
  bool allpm = true;
  for (const double v : y) {
    all01 = all01 && (v == 0.0 || v == 1.0);
    allpm = allpm && (v == -1.0 || v == 1.0);
    if (!all01 && !allpm) return BinaryCoding::kNone;
  }
  return all01 ? BinaryCoding::kZeroOne : BinaryCoding::kPlusMinusOne;
}

std::string set_binary_labels(std::span<const double> y, BinaryCoding coding, Labels& labels) {
  const bool zero_one = coding == BinaryCoding::kZeroOne;
  labels.kind = LabelKind::kBinary;
  for (const double v : y) labels.values.push_back(v == 1.0 ? 1 : 0);
  labels.names =
      zero_one ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{"-1", "+1"};
  return zero_one ? "1" : "+1";
}

void append_row(SparseRows& rows, RowEntries& entries) {
  // The CSV reader's rows come sorted: the check is cheaper than the sort.
  if (!std::is_sorted(entries.begin(), entries.end())) std::sort(entries.begin(), entries.end());
  for (const auto& [idx, val] : entries) {
    rows.indices.push_back(idx);
    rows.values.push_back(val);
  }
  rows.end_row();
}

}  // namespace rateopt::io_detail
