// Poisson-binomial rows by multiplication only; checkpointed reverse access (decide-notes 4.0,
// 4.9).
#include "decide/poisson_binomial.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace rateopt::detail {
namespace {

// Rows kept as a full table while their total size stays under this many doubles (32 MiB).
constexpr std::size_t kFullTableBudget = std::size_t{1} << 22;

// Drops entries below DBL_MIN from both ends of `row`.
void trim(PbRow& row) {
  std::size_t first = 0;
  std::size_t last = row.mass.size();
  while (first < last && !(row.mass[first] >= DBL_MIN)) ++first;
  while (last > first && !(row.mass[last - 1] >= DBL_MIN)) --last;
  if (last < row.mass.size()) row.mass.resize(last);
  if (first > 0) {
    row.mass.erase(row.mass.begin(), row.mass.begin() + static_cast<std::ptrdiff_t>(first));
    row.lo += first;
  }
}

double pairwise_log1m(std::span<const double> p) {
  if (p.size() <= 32) {
    double s = 0;
    for (const double v : p) s += std::log1p(-v);
    return s;
  }
  const std::size_t half = p.size() / 2;
  return pairwise_log1m(p.first(half)) + pairwise_log1m(p.subspan(half));
}

}  // namespace

PbRow pb_unit_row() {
  PbRow row;
  row.mass.assign(1, 1.0);
  return row;
}

void pb_extend(const PbRow& in, double p, PbRow& out) {
  const std::size_t w = in.mass.size();
  const double q = 1.0 - p;
  out.lo = in.lo;
  out.mass.resize(w + 1);
  const double* src = in.mass.data();
  double* dst = out.mass.data();
  dst[0] = q * src[0];
  for (std::size_t i = 1; i < w; ++i) dst[i] = q * src[i] + p * src[i - 1];
  dst[w] = p * src[w - 1];
  trim(out);
}

PbWindow pb_window(const PbRow& row, double tail) {
  PbWindow win{row.lo, row.end(), 0.0};
  if (!(tail > 0)) return win;
  const std::size_t w = row.mass.size();
  std::size_t first = 0;
  double left = 0;
  while (first < w && left + row.mass[first] <= tail) left += row.mass[first++];
  std::size_t last = w;
  double right = 0;
  while (last > first && right + row.mass[last - 1] <= tail) right += row.mass[--last];
  if (first == last) {  // only when tail >= 1/2: keep the largest entry
    const auto it = std::max_element(row.mass.begin(), row.mass.end());
    first = static_cast<std::size_t>(it - row.mass.begin());
    last = first + 1;
    left = right = 0;
    for (std::size_t i = 0; i < w; ++i)
      if (i != first) left += row.mass[i];
  }
  win.first = row.lo + first;
  win.last = row.lo + last;
  win.dropped = left + right;
  return win;
}

ReversePbRows::ReversePbRows(std::span<const double> items, std::size_t block)
    : items_(items.begin(), items.end()) {
  const std::size_t n = items_.size();
  const std::size_t sqrt_block =
      std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(std::sqrt(double(n) + 1))));
  bool full = block == 0 || block > n;
  block_ = full ? n + 1 : block;
  std::size_t stored = 0;
  PbRow current = pb_unit_row();
  PbRow next;
  const auto keep = [&](std::size_t j, const PbRow& r) {
    if (full) {
      rows_.push_back(r);
      stored += r.mass.size();
      if (block == 0 && stored > kFullTableBudget) {  // too big: switch to checkpoints
        full = false;
        block_ = sqrt_block;
        for (std::size_t i = 0; i < rows_.size(); i += block_)
          checkpoints_.push_back(std::move(rows_[i]));
        rows_.clear();
      }
    } else if (j % block_ == 0) {
      checkpoints_.push_back(r);
    }
  };
  keep(0, current);
  for (std::size_t j = 1; j <= n; ++j) {
    pb_extend(current, items_[j - 1], next);
    std::swap(current, next);
    keep(j, current);
  }
  if (!full) rows_.assign(block_, PbRow{});
}

void ReversePbRows::load_block(std::size_t b) {
  const std::size_t first = b * block_;
  const std::size_t count = std::min(block_, items_.size() + 1 - first);
  rows_[0] = checkpoints_[b];
  for (std::size_t i = 1; i < count; ++i) pb_extend(rows_[i - 1], items_[first + i - 1], rows_[i]);
  loaded_ = b;
}

const PbRow& ReversePbRows::row(std::size_t j) {
  if (full_table()) return rows_[j];
  const std::size_t b = j / block_;
  if (b != loaded_) load_block(b);
  return rows_[j - b * block_];
}

double log_prob_no_success(std::span<const double> p) {
  for (const double v : p)
    if (v >= 1.0) return -std::numeric_limits<double>::infinity();
  return pairwise_log1m(p);
}

}  // namespace rateopt::detail
