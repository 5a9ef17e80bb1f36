// Private: Poisson-binomial distributions (the number of successes among independent Bernoulli
// trials), built by multiplication only (decide-notes section 4.0 and 4.9).
//
// Every row is produced from the previous one by convolving with one Bernoulli(p); no row is
// ever obtained by dividing a factor back out (polynomial deflation is exponentially unstable).
// Rows that are needed in the direction opposite to the recursion are served from a full table
// or recomputed block by block from checkpoints (O(n^1.5) memory).
//
// Storage: a row keeps only the counts whose probability is a normal double (>= DBL_MIN);
// smaller entries are flushed to zero. A Poisson-binomial row is log-concave, hence unimodal,
// so the kept entries form one contiguous window. Flushing changes any expectation by at most
// n * DBL_MIN (< 1e-300).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace rateopt::detail {

// P(count = lo + i) = mass[i]; counts outside [lo, lo + mass.size()) have probability < DBL_MIN.
struct PbRow {
  std::size_t lo = 0;
  std::vector<double> mass;

  [[nodiscard]] std::size_t end() const noexcept { return lo + mass.size(); }  // one past
  [[nodiscard]] double at(std::size_t count) const noexcept {
    return count >= lo && count < end() ? mass[count - lo] : 0.0;
  }
};

// The row of zero trials: P(count = 0) = 1.
[[nodiscard]] PbRow pb_unit_row();

// out = in convolved with Bernoulli(p), p in [0, 1]. `out` must not alias `in`; its storage is
// reused. O(width).
void pb_extend(const PbRow& in, double p, PbRow& out);

// The counts [first, last) that remain after dropping at most `tail` probability from each end
// (largest such prefix / suffix whose mass is <= tail); `dropped` is the mass removed.
// tail = 0 keeps the whole stored row.
struct PbWindow {
  std::size_t first = 0;
  std::size_t last = 0;
  double dropped = 0;
};
[[nodiscard]] PbWindow pb_window(const PbRow& row, double tail);

// Rows j = 0..n of the recursion row_0 = unit, row_j = row_{j-1} * Bernoulli(items[j-1]),
// served in non-increasing j. With block = 0 the class picks a full table when it is small
// (under ~32 MiB) and checkpoints every ceil(sqrt(n)) rows otherwise; block > n stores the full
// table; any other block size checkpoints every `block` rows. Both give bit-identical rows.
class ReversePbRows {
 public:
  ReversePbRows(std::span<const double> items, std::size_t block = 0);

  // Row j, valid until the next call. Any order works; non-increasing j recomputes each
  // checkpoint block at most once.
  [[nodiscard]] const PbRow& row(std::size_t j);

  [[nodiscard]] std::size_t block() const noexcept { return block_; }
  [[nodiscard]] bool full_table() const noexcept { return block_ > items_.size(); }

 private:
  void load_block(std::size_t b);

  std::vector<double> items_;
  std::size_t block_ = 0;
  std::vector<PbRow> checkpoints_;  // row b * block_ (checkpoint mode)
  std::vector<PbRow> rows_;         // full table, or the rows of the loaded block
  std::size_t loaded_ = static_cast<std::size_t>(-1);
};

// log P(no success) = sum_i log(1 - p_i), pairwise summation (-inf when some p_i = 1).
[[nodiscard]] double log_prob_no_success(std::span<const double> p);

}  // namespace rateopt::detail
