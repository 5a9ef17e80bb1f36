// libFuzzer target for rateopt decide's GFM input: JSON Lines with a P matrix, label-index samples
// or indicator rows (decide_input.hpp), at most 12 labels, then decide_gfm. The first input byte
// picks beta and all_k; the rest is the file. Only ParseError may escape the parser, nothing may
// escape decide_gfm. Every parsed P must pass check_gfm_distribution (P counted from samples is a
// distribution by construction). On success the selected labels are in range and unique, the
// expectation is finite and in [0, 1] (within the tolerance P is accepted with), it equals the
// value of the selected set, and for m <= 10 no other set scores more (all 2^m sets, with
// E[F(y, h)] = sum_{i in h} sum_s P[i][s] (1 + b^2) / (b^2 (s + 1) + |h|), P(y = 0) for h empty).
// Every line is also read by parse_gfm_record with the fast reader and with the nlohmann::json
// reference alone: both must give the same record bit for bit, or the same error text; and a
// samples record decided without P (decide_gfm_record) must equal decide_gfm on the P formed.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/error.hpp"

namespace {

using rateopt::fuzz::require;

constexpr std::array<std::string_view, 4> kMetrics{"f1", "fbeta:0.5", "fbeta:2", "fbeta:1"};

double value_of(const rateopt::GfmInput& g, const std::vector<char>& on, double b2) {
  const std::size_t m = g.m;
  double k = 0;
  for (char c : on) k += c;
  if (k == 0) return g.p_zero;
  double e = 0;
  for (std::size_t i = 0; i < m; ++i) {
    if (on[i] == 0) continue;
    for (std::size_t s = 0; s < m; ++s)
      e += g.p[i * m + s] * (1 + b2) / (b2 * static_cast<double>(s + 1) + k);
  }
  return e;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) return false;
  return true;
}

// The fast reader and the reference agree on `line` (the same record or the same error).
void check_fast_reader(std::string_view line, const rateopt::DecideMetric& metric,
                       const rateopt::DecideOptions& options) {
  rateopt::GfmLimits fast{12, 12, true};
  rateopt::GfmLimits reference{12, 12, false};
  std::string fast_error, reference_error;
  rateopt::GfmRecord a, b;
  try {
    a = rateopt::parse_gfm_record(line, "fuzz.jsonl", 1, fast);
  } catch (const rateopt::ParseError& e) {
    fast_error = e.what();
  }
  try {
    b = rateopt::parse_gfm_record(line, "fuzz.jsonl", 1, reference);
  } catch (const rateopt::ParseError& e) {
    reference_error = e.what();
  }
  require(fast_error == reference_error, "fast reader and reference give the same error");
  if (!fast_error.empty()) return;
  require(a.is_samples == b.is_samples && a.m == b.m && a.matrix.m == b.matrix.m &&
              same_bits(a.matrix.p, b.matrix.p) &&
              std::bit_cast<std::uint64_t>(a.matrix.p_zero) ==
                  std::bit_cast<std::uint64_t>(b.matrix.p_zero) &&
              a.indptr == b.indptr && a.indices == b.indices && same_bits(a.weights, b.weights),
          "fast reader and reference give the same record");
  if (!a.is_samples) return;
  const rateopt::Decision via_samples = rateopt::decide_gfm_record(a, metric, options);
  const rateopt::Decision via_p =
      rateopt::decide_gfm(rateopt::gfm_from_samples(a.samples(), a.weights, a.m), metric, options);
  require(via_samples.selected == via_p.selected &&
              std::bit_cast<std::uint64_t>(via_samples.expected) ==
                  std::bit_cast<std::uint64_t>(via_p.expected) &&
              same_bits(via_samples.expected_by_k, via_p.expected_by_k),
          "samples decided without P equal the P formed from them, bit for bit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const rateopt::DecideMetric metric = rateopt::DecideMetric::from_name(kMetrics[sel & 3]);
  const double b2 = metric.beta() * metric.beta();
  rateopt::DecideOptions options;
  options.all_k = (sel & 4) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  for (std::size_t pos = 0, lines = 0; pos < text.size() && lines < 16; ++lines) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    check_fast_reader(line, metric, options);
    pos = end + 1;
  }
  rateopt::GfmInstances in;
  try {
    in = rateopt::parse_gfm_lines(text, "fuzz.jsonl", 12);
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the GFM parser threw something other than ParseError");
  }
  require(in.instances.size() == in.lines.size(), "one line number per instance");
  for (const rateopt::GfmInput& g : in.instances) {
    require(g.m <= 12 && g.p.size() == g.m * g.m, "P is m x m, m <= max_labels");
    require(rateopt::check_gfm_distribution(g).empty(), "every parsed P is a distribution");
    rateopt::Decision d;
    try {
      d = rateopt::decide_gfm(g, metric, options);
    } catch (...) {
      rateopt::fuzz::fail("decide_gfm threw on a parsed input");
    }
    std::vector<char> on(g.m, 0);
    for (std::size_t idx : d.selected) {
      require(idx < g.m, "selected label in range");
      require(on[idx] == 0, "selected labels unique");
      on[idx] = 1;
    }
    require(std::isfinite(d.expected), "expected is finite");
    // P is accepted within rounding slack, so E may exceed 1 by about as much.
    require(d.expected >= -1e-9 && d.expected <= 1 + 1e-5, "expected in [0, 1]");
    if (options.all_k) {
      require(d.expected_by_k.size() == g.m + 1, "expected_by_k has m + 1 entries");
      for (double e : d.expected_by_k) require(e <= d.expected + 1e-12, "expected is the max");
    }
    const double tol = 1e-9 * std::max(1.0, std::abs(d.expected));
    require(std::abs(value_of(g, on, b2) - d.expected) <= tol, "expected is the selected value");
    if (g.m > 10) continue;
    for (std::uint32_t h = 0; h < (1u << g.m); ++h) {
      for (std::size_t i = 0; i < g.m; ++i) on[i] = static_cast<char>((h >> i) & 1u);
      require(value_of(g, on, b2) <= d.expected + tol, "no set scores more than the decision");
    }
  }
  return 0;
}
