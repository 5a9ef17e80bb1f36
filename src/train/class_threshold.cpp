// Exact threshold searches over rows in classes, by score buckets (see class_threshold.hpp).
#include "train/class_threshold.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "rateopt/distributed.hpp"

namespace rateopt::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Buckets per open range; fewer when many ranges are open, so that one pass's counts stay under
// kMaxCells doubles (8 MB).
constexpr std::size_t kBuckets = 2048;
constexpr std::size_t kMaxCells = std::size_t{1} << 20;

struct Cut {
  double f = 0;
  double upper = kInf;   // the lowest score above the cut (+inf: no row above)
  double lower = -kInf;  // the highest score below it (-inf: no row below)
  // Smaller F, then fewer rows above (a higher lowest score above).
  [[nodiscard]] bool better_than(const Cut& o) const {
    return f < o.f || (f == o.f && upper > o.upper);
  }
  [[nodiscard]] double threshold() const {
    if (upper == kInf) return lower + 1;
    if (lower == -kInf) return upper - 1;
    return 0.5 * (lower + upper);
  }
};

// An open range of one search: its rows with lo <= score <= hi, counted in `buckets` buckets.
struct Range {
  std::size_t search = 0;
  double lo = -kInf, hi = kInf;
  std::size_t buckets = 1;
  std::vector<double> above;  // per member class of the search: its rows with score > hi
  std::size_t offset = 0;     // where the range's cells start in a pass's counts
};

// The bucket of a score in [lo, hi]: 0 holds hi, buckets - 1 holds lo; non-increasing in s, so
// buckets are score intervals in decreasing order.
std::size_t bucket_of(double s, const Range& r) {
  if (r.buckets == 1) return 0;
  double d = r.hi - s, w = r.hi - r.lo;
  if (!std::isfinite(w)) {  // wider than the largest double: in halves (far from subnormals)
    d = 0.5 * r.hi - 0.5 * s;
    w = 0.5 * r.hi - 0.5 * r.lo;
  }
  const double b = d / w * static_cast<double>(r.buckets);
  return b >= static_cast<double>(r.buckets - 1) ? r.buckets - 1 : static_cast<std::size_t>(b);
}

class Searcher {
 public:
  Searcher(const FeatureMatrix& x, const LinearModel& model, const ClassThresholdSearch& s,
           int n_threads)
      : x_(x), model_(model), s_(s), n_threads_(n_threads), members_(s.searches) {
    RATEOPT_CHECK(s.classes.size() == x.rows(),
                  "class_thresholds: {} row classes for {} rows of features", s.classes.size(),
                  x.rows());
    RATEOPT_CHECK(s.searches_of.size() == s.cost.size(),
                  "class_thresholds: {} classes with searches, {} with costs", s.searches_of.size(),
                  s.cost.size());
    local_.resize(s.cost.size());
    for (std::size_t c = 0; c < s.cost.size(); ++c) {
      RATEOPT_CHECK(std::isfinite(s.cost[c]), "class_thresholds: class {} costs {}", c, s.cost[c]);
      for (const std::size_t k : s.searches_of[c]) {
        RATEOPT_CHECK(k < s.searches, "class_thresholds: class {} takes part in search {} of {}", c,
                      k, s.searches);
        local_[c].push_back(members_[k].size());
        members_[k].push_back(c);
      }
    }
    for (const std::uint8_t c : s.classes)
      RATEOPT_CHECK(c < s.cost.size(), "class_thresholds: a row of class {} of {}", c,
                    s.cost.size());
  }

  std::vector<std::optional<double>> run() {
    std::vector<Cut> best(s_.searches);
    std::vector<bool> has_rows(s_.searches, false);
    std::vector<Range> open;
    for (std::size_t k = 0; k < s_.searches; ++k)
      if (!members_[k].empty())
        open.push_back(Range{k, -kInf, kInf, 1, std::vector<double>(members_[k].size(), 0.0), 0});
    bool root = true;
    while (!open.empty()) {
      const std::vector<double> cells = count(open);
      // Every cut between two non-empty buckets of a range (the cut below its last bucket was
      // evaluated with the range's parent).
      for (const Range& r : open) {
        const std::size_t m = members_[r.search].size();
        Cut& b = best[r.search];
        std::vector<double> cum = r.above;
        double prev_min = kInf;
        bool prev = false;
        for (std::size_t k = 0; k < r.buckets; ++k) {
          const double* cell = &cells[r.offset + k * (m + 2)];
          if (!any_rows(cell, m)) continue;
          if (root) {  // the range is the search's rows: "none above" and "all above"
            has_rows[r.search] = true;
            b = Cut{0.0, kInf, cell[m + 1]};
            const Cut all{value(r.search, std::span<const double>(cell, m)), cell[m], -kInf};
            if (all.better_than(b)) b = all;
          }
          if (prev) {
            const Cut c{value(r.search, cum), prev_min, cell[m + 1]};
            if (c.better_than(b)) b = c;
          }
          for (std::size_t j = 0; j < m; ++j) cum[j] += cell[j];
          prev_min = cell[m];
          prev = true;
        }
      }
      // Buckets whose inner cuts could beat the best cut: those with several scores whose lower
      // bound (every negative-cost row of the bucket above the cut, no positive-cost one) is
      // below the best F, or equal to it with a cut of fewer rows above possible.
      std::vector<Range> next;
      for (const Range& r : open) {
        const std::size_t m = members_[r.search].size();
        const Cut& b = best[r.search];
        std::vector<double> cum = r.above, bound(m);
        for (std::size_t k = 0; k < r.buckets; ++k) {
          const double* cell = &cells[r.offset + k * (m + 2)];
          if (!any_rows(cell, m)) continue;
          if (cell[m] < cell[m + 1]) {
            for (std::size_t j = 0; j < m; ++j)
              bound[j] = cum[j] + (s_.cost[members_[r.search][j]] < 0 ? cell[j] : 0.0);
            const double lb = value(r.search, bound);
            if (lb < b.f || (lb == b.f && cell[m + 1] > b.upper))
              next.push_back(Range{r.search, cell[m], cell[m + 1], 0, cum, 0});
          }
          for (std::size_t j = 0; j < m; ++j) cum[j] += cell[j];
        }
      }
      open = std::move(next);
      root = false;
    }
    std::vector<std::optional<double>> out(s_.searches);
    for (std::size_t k = 0; k < s_.searches; ++k)
      if (has_rows[k]) out[k] = best[k].threshold();
    return out;
  }

 private:
  // F of search k at per-member counts (in member order, the classes' order).
  [[nodiscard]] double value(std::size_t k, std::span<const double> counts) const {
    double f = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) f += counts[j] * s_.cost[members_[k][j]];
    return f;
  }

  [[nodiscard]] static bool any_rows(const double* cell, std::size_t m) {
    for (std::size_t j = 0; j < m; ++j)
      if (cell[j] != 0) return true;
    return false;
  }

  // One pass over the rows: for each open range and bucket, the rows of each member class and
  // their smallest and largest score ([counts..., min, max] per bucket), over every rank. Sets
  // the ranges' buckets (when 0) and offsets.
  std::vector<double> count(std::vector<Range>& open) const {
    std::size_t per_range = 0;
    for (const Range& r : open) per_range = std::max(per_range, members_[r.search].size() + 2);
    const std::size_t buckets =
        std::clamp<std::size_t>(kMaxCells / (open.size() * per_range), 2, kBuckets);
    std::size_t size = 0;
    std::vector<double> identity;
    std::vector<std::vector<std::size_t>> ranges_of(s_.searches);  // by decreasing scores
    for (std::size_t i = 0; i < open.size(); ++i) {
      Range& r = open[i];
      if (r.buckets == 0) r.buckets = buckets;
      r.offset = size;
      const std::size_t m = members_[r.search].size();
      size += r.buckets * (m + 2);
      for (std::size_t k = 0; k < r.buckets; ++k) {
        identity.insert(identity.end(), m, 0.0);
        identity.push_back(kInf);
        identity.push_back(-kInf);
      }
      ranges_of[r.search].push_back(i);
    }
    for (std::vector<std::size_t>& rs : ranges_of)
      std::sort(rs.begin(), rs.end(),
                [&](std::size_t a, std::size_t b) { return open[a].hi > open[b].hi; });
    // Classes with a search that has an open range (other rows need no score).
    std::vector<bool> active(s_.cost.size(), false);
    for (std::size_t c = 0; c < s_.cost.size(); ++c)
      for (const std::size_t k : s_.searches_of[c]) active[c] = active[c] || !ranges_of[k].empty();

    const std::span<const double> w(model_.weights);
    const auto used = w.first(std::min(x_.cols(), w.size()));
    const std::size_t rows = x_.rows();
    const auto tasks = static_cast<std::size_t>(resolve_threads(n_threads_));
    std::vector<std::vector<double>> part(tasks);
    parallel_for(tasks, n_threads_, [&](std::size_t t) {
      std::vector<double> cells = identity;
      for (std::size_t i = rows * t / tasks; i < rows * (t + 1) / tasks; ++i) {
        const std::uint8_t c = s_.classes[i];
        if (!active[c]) continue;
        const double score = x_.row_dot(i, used) + model_.bias;
        RATEOPT_CHECK(std::isfinite(score), "class_thresholds: the score of row {} is {}", i,
                      score);
        const std::vector<std::size_t>& ks = s_.searches_of[c];
        for (std::size_t q = 0; q < ks.size(); ++q) {
          const std::vector<std::size_t>& rs = ranges_of[ks[q]];
          // The first range (by decreasing scores) that starts at or below the score.
          const auto it = std::partition_point(rs.begin(), rs.end(),
                                               [&](std::size_t j) { return open[j].lo > score; });
          if (it == rs.end() || open[*it].hi < score) continue;
          const Range& r = open[*it];
          const std::size_t m = members_[r.search].size();
          double* cell = &cells[r.offset + bucket_of(score, r) * (m + 2)];
          cell[local_[c][q]] += 1;
          cell[m] = std::min(cell[m], score);
          cell[m + 1] = std::max(cell[m + 1], score);
        }
      }
      part[t] = std::move(cells);
    });
    // Counts, minima and maxima: exact whatever the order of the parts and ranks.
    const auto merge = [&](std::vector<double>& into) {
      for (const std::vector<double>& p : part)
        for (const Range& r : open) {
          const std::size_t m = members_[r.search].size();
          for (std::size_t k = 0; k < r.buckets; ++k) {
            const std::size_t at = r.offset + k * (m + 2);
            for (std::size_t j = 0; j < m; ++j) into[at + j] += p[at + j];
            into[at + m] = std::min(into[at + m], p[at + m]);
            into[at + m + 1] = std::max(into[at + m + 1], p[at + m + 1]);
          }
        }
    };
    return fold_over_ranks(std::move(identity), merge);
  }

  const FeatureMatrix& x_;
  const LinearModel& model_;
  const ClassThresholdSearch& s_;
  int n_threads_;
  std::vector<std::vector<std::size_t>> members_;  // per search: its classes, increasing
  std::vector<std::vector<std::size_t>> local_;    // per class and search of it: member index
};

}  // namespace

std::vector<std::optional<double>> class_thresholds(const FeatureMatrix& x,
                                                    const LinearModel& model,
                                                    const ClassThresholdSearch& search,
                                                    int n_threads) {
  return Searcher(x, model, search, n_threads).run();
}

}  // namespace rateopt::detail
