// count_slice: hand-computed counts, brute-force expectation oracle, dataset overload, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::expect_invalid;

TEST(ConfusionCounts, HardPredictionsHand) {
  const std::vector<std::int32_t> y{1, 1, 0, 0, 1, 0};
  const std::vector<double> p{1, 0, 1, 0, 1, 0};
  const std::vector<double> w{1, 2, 3, 1, 0.5, 2};
  const auto s = count_slice(y, p, w);
  EXPECT_DOUBLE_EQ(s.confusion.tp, 1.5);  // rows 0 and 4
  EXPECT_DOUBLE_EQ(s.confusion.fn, 2.0);  // row 1
  EXPECT_DOUBLE_EQ(s.confusion.fp, 3.0);  // row 2
  EXPECT_DOUBLE_EQ(s.confusion.tn, 3.0);  // rows 3 and 5
  EXPECT_DOUBLE_EQ(s.total, 9.5);
  EXPECT_FALSE(s.has_baseline());
  EXPECT_TRUE(std::isnan(s.changes));
  EXPECT_TRUE(std::isnan(s.wins));
  EXPECT_TRUE(std::isnan(s.losses));

  // Unweighted, masked to rows {0, 1, 2}.
  const std::vector<std::uint8_t> mask{1, 1, 1, 0, 0, 0};
  const auto m = count_slice(y, p, {}, mask);
  EXPECT_EQ(m.confusion.tp, 1.0);
  EXPECT_EQ(m.confusion.fn, 1.0);
  EXPECT_EQ(m.confusion.fp, 1.0);
  EXPECT_EQ(m.confusion.tn, 0.0);
  EXPECT_EQ(m.total, 3.0);
}

TEST(ConfusionCounts, ProbabilisticHand) {
  // y = 1, p = 1/4, w = 2: tp = 1/2, fn = 3/2.  y = 0, p = 1/2, w = 1: fp = 1/2, tn = 1/2.
  const std::vector<std::int32_t> y{1, 0};
  const std::vector<double> p{0.25, 0.5};
  const std::vector<double> w{2, 1};
  const auto s = count_slice(y, p, w);
  EXPECT_DOUBLE_EQ(s.confusion.tp, 0.5);
  EXPECT_DOUBLE_EQ(s.confusion.fn, 1.5);
  EXPECT_DOUBLE_EQ(s.confusion.fp, 0.5);
  EXPECT_DOUBLE_EQ(s.confusion.tn, 0.5);
  EXPECT_DOUBLE_EQ(s.total, 3.0);
  EXPECT_DOUBLE_EQ(compute_metric("ppr", s), 1.0 / 3);  // (1/2 + 1/2) / 3
}

TEST(ConfusionCounts, BaselineHand) {
  // Hard: every prediction differs from the baseline. Row 0 win (new right), row 1 loss,
  // row 2 loss (y = 0, new says 1), row 3 win.
  const std::vector<std::int32_t> y{1, 1, 0, 0};
  const std::vector<double> p{1, 0, 1, 0};
  const std::vector<double> b{0, 1, 0, 1};
  const auto s = count_slice(y, p, {}, {}, b);
  ASSERT_TRUE(s.has_baseline());
  EXPECT_EQ(s.changes, 4.0);
  EXPECT_EQ(s.wins, 2.0);
  EXPECT_EQ(s.losses, 2.0);
  // Agreeing predictions: no change, no win, no loss.
  const auto same = count_slice(y, p, {}, {}, p);
  EXPECT_EQ(same.changes, 0.0);
  EXPECT_EQ(same.wins, 0.0);
  EXPECT_EQ(same.losses, 0.0);

  // Probabilistic: y = 1, p = 1/2, b = 1/4, w = 2.
  //   changes = 2 (1/2 * 3/4 + 1/2 * 1/4) = 1; wins = 2 * 1/2 * 3/4 = 3/4;
  //   losses = 2 * 1/2 * 1/4 = 1/4.
  const std::vector<std::int32_t> y1{1};
  const std::vector<double> p1{0.5}, b1{0.25}, w1{2};
  const auto t = count_slice(y1, p1, w1, {}, b1);
  EXPECT_DOUBLE_EQ(t.changes, 1.0);
  EXPECT_DOUBLE_EQ(t.wins, 0.75);
  EXPECT_DOUBLE_EQ(t.losses, 0.25);
  // y = 0, p = 1/4, b = 1: new right w.p. 3/4, baseline always wrong -> wins = 3/4, losses 0.
  const std::vector<std::int32_t> y0{0};
  const std::vector<double> p0{0.25}, b0{1.0};
  const auto u = count_slice(y0, p0, {}, {}, b0);
  EXPECT_DOUBLE_EQ(u.changes, 0.75);
  EXPECT_DOUBLE_EQ(u.wins, 0.75);
  EXPECT_DOUBLE_EQ(u.losses, 0.0);
}

TEST(ConfusionCounts, EmptyInputs) {
  const auto s = count_slice({}, {});
  EXPECT_EQ(s.total, 0.0);
  EXPECT_EQ(s.confusion.total(), 0.0);
  const std::vector<std::int32_t> y{1, 0};
  const std::vector<double> p{1, 0};
  const std::vector<std::uint8_t> none{0, 0};
  const auto m = count_slice(y, p, {}, none, p);
  EXPECT_EQ(m.total, 0.0);
  EXPECT_EQ(m.changes, 0.0);
  EXPECT_EQ(compute_metric("churn", m), 0.0);
}

TEST(ConfusionCounts, RejectsBadArguments) {
  const std::vector<std::int32_t> y{1, 0};
  const std::vector<double> p{0.5, 0.5};
  const std::vector<double> bad_p{0.5, 1.5}, neg_p{-0.1, 0.5}, nan_p{std::nan(""), 0.5};
  const std::vector<double> w3{1, 1, 1}, neg_w{1, -1}, nan_w{std::nan(""), 1};
  const std::vector<double> inf_w{1, std::numeric_limits<double>::infinity()};
  const std::vector<std::uint8_t> mask1{1};
  const std::vector<double> b1{1}, bad_b{0, 2}, nan_b{0, std::nan("")};
  const std::vector<std::int32_t> y3{1, 0, 1}, y_bad{2, 0};
  expect_invalid([&] { (void)count_slice(y, bad_p); }, "predictions[1] is 1.5");
  expect_invalid([&] { (void)count_slice(y, neg_p); }, "predictions[0]");
  expect_invalid([&] { (void)count_slice(y, nan_p); }, "predictions[0] is nan");
  expect_invalid([&] { (void)count_slice(y3, p); }, "labels have 3 entries, expected 2");
  expect_invalid([&] { (void)count_slice(y_bad, p); }, "labels[0] is 2");
  expect_invalid([&] { (void)count_slice(y, p, w3); }, "weights have 3 entries, expected 2");
  expect_invalid([&] { (void)count_slice(y, p, neg_w); }, "weights[1] is -1");
  expect_invalid([&] { (void)count_slice(y, p, nan_w); }, "weights[0]");
  expect_invalid([&] { (void)count_slice(y, p, inf_w); }, "weights[1]");
  expect_invalid([&] { (void)count_slice(y, p, {}, mask1); }, "mask has 1 entries, expected 2");
  expect_invalid([&] { (void)count_slice(y, p, {}, {}, b1); }, "baseline has 1 entries");
  expect_invalid([&] { (void)count_slice(y, p, {}, {}, bad_b); }, "baseline[1] is 2");
  expect_invalid([&] { (void)count_slice(y, p, {}, {}, nan_b); }, "baseline[1]");
}

// ---- oracle: expectation over all joint outcomes of independent Bernoulli predictions ----

struct HardCounts {
  double tp = 0, fp = 0, fn = 0, tn = 0, total = 0, changes = 0, wins = 0, losses = 0;
};

// Counts of hard predictions z and hard baseline c (0/1 each), by the plain definitions.
HardCounts hard_counts(const std::vector<std::int32_t>& y, const std::vector<int>& z,
                       const std::vector<int>& c, const std::vector<double>& w,
                       const std::vector<std::uint8_t>& mask) {
  HardCounts h;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (mask[i] == 0) continue;
    h.total += w[i];
    if (y[i] == 1 && z[i] == 1) h.tp += w[i];
    if (y[i] == 0 && z[i] == 1) h.fp += w[i];
    if (y[i] == 1 && z[i] == 0) h.fn += w[i];
    if (y[i] == 0 && z[i] == 0) h.tn += w[i];
    if (z[i] != c[i]) h.changes += w[i];
    const bool new_right = z[i] == y[i];
    const bool base_right = c[i] == y[i];
    if (new_right && !base_right) h.wins += w[i];
    if (!new_right && base_right) h.losses += w[i];
  }
  return h;
}

TEST(ConfusionOracle, ExpectedCountsMatchEnumeration) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    const std::size_t n = 1 + rng() % 10;
    std::vector<std::int32_t> y(n);
    std::vector<double> p(n), w(n), b(n);
    std::vector<std::uint8_t> mask(n);
    std::vector<std::size_t> random_baseline;  // rows whose baseline is a probability (<= 4)
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = static_cast<std::int32_t>(rng() % 2);
      const auto kind = rng() % 4;  // some hard predictions too
      p[i] = kind == 0 ? 0.0 : kind == 1 ? 1.0 : unif(rng);
      w[i] = (rng() % 5 == 0) ? 0.0 : 0.1 + 3 * unif(rng);
      const auto bkind = rng() % 3;
      b[i] = bkind == 0 ? 0.0 : 1.0;
      if (bkind == 2 && random_baseline.size() < 4) {
        b[i] = unif(rng);
        random_baseline.push_back(i);
      }
      mask[i] = (rng() % 4 == 0) ? 0 : 1;
    }
    // Enumerate the n predictions and the random baselines, all independent Bernoulli.
    HardCounts expected;
    const std::size_t bits = n + random_baseline.size();
    std::vector<int> z(n), c(n);
    for (std::uint64_t o = 0; o < (std::uint64_t{1} << bits); ++o) {
      double prob = 1;
      for (std::size_t i = 0; i < n; ++i) {
        z[i] = static_cast<int>((o >> i) & 1);
        prob *= z[i] ? p[i] : 1 - p[i];
        c[i] = static_cast<int>(b[i]);
      }
      for (std::size_t r = 0; r < random_baseline.size(); ++r) {
        const std::size_t i = random_baseline[r];
        c[i] = static_cast<int>((o >> (n + r)) & 1);
        prob *= c[i] ? b[i] : 1 - b[i];
      }
      if (prob == 0) continue;
      const HardCounts h = hard_counts(y, z, c, w, mask);
      expected.tp += prob * h.tp;
      expected.fp += prob * h.fp;
      expected.fn += prob * h.fn;
      expected.tn += prob * h.tn;
      expected.total += prob * h.total;
      expected.changes += prob * h.changes;
      expected.wins += prob * h.wins;
      expected.losses += prob * h.losses;
    }
    const auto s = count_slice(y, p, w, mask, b);
    const double tol = 1e-12 * (1 + expected.total);
    EXPECT_NEAR(s.confusion.tp, expected.tp, tol);
    EXPECT_NEAR(s.confusion.fp, expected.fp, tol);
    EXPECT_NEAR(s.confusion.fn, expected.fn, tol);
    EXPECT_NEAR(s.confusion.tn, expected.tn, tol);
    EXPECT_NEAR(s.total, expected.total, tol);
    EXPECT_NEAR(s.changes, expected.changes, tol);
    EXPECT_NEAR(s.wins, expected.wins, tol);
    EXPECT_NEAR(s.losses, expected.losses, tol);
    // Linear proportions are expectations of the hard proportions too (total is fixed).
    if (expected.total > 0) {
      EXPECT_NEAR(compute_metric("ppr", s), (expected.tp + expected.fp) / expected.total, 1e-12);
      EXPECT_NEAR(compute_metric("error", s), (expected.fp + expected.fn) / expected.total, 1e-12);
      EXPECT_NEAR(compute_metric("churn", s), expected.changes / expected.total, 1e-12);
    }
  }
}

TEST(ConfusionOracle, HardPredictionsMatchNaiveLoopOnLargerInstances) {
  std::mt19937_64 rng(7);
  const std::size_t n = 1000;
  std::vector<std::int32_t> y(n);
  std::vector<double> p(n), w(n), b(n);
  std::vector<std::uint8_t> mask(n);
  std::vector<int> z(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = static_cast<std::int32_t>(rng() % 2);
    z[i] = static_cast<int>(rng() % 2);
    c[i] = static_cast<int>(rng() % 2);
    p[i] = z[i];
    b[i] = c[i];
    w[i] = static_cast<double>(rng() % 4);  // integer weights: sums are exact
    mask[i] = static_cast<std::uint8_t>(rng() % 2);
  }
  const HardCounts h = hard_counts(y, z, c, w, mask);
  const auto s = count_slice(y, p, w, mask, b);
  EXPECT_EQ(s.confusion.tp, h.tp);
  EXPECT_EQ(s.confusion.fp, h.fp);
  EXPECT_EQ(s.confusion.fn, h.fn);
  EXPECT_EQ(s.confusion.tn, h.tn);
  EXPECT_EQ(s.total, h.total);
  EXPECT_EQ(s.changes, h.changes);
  EXPECT_EQ(s.wins, h.wins);
  EXPECT_EQ(s.losses, h.losses);
}

// ---- dataset overload
// ----------------------------------------------------------------------------

using test::make_column;

Dataset binary_dataset(std::vector<std::int32_t> y, std::vector<std::string> names = {"0", "1"}) {
  Labels labels;
  labels.kind = LabelKind::kBinary;
  labels.values = std::move(y);
  labels.names = std::move(names);
  const std::size_t n = labels.values.size();
  return Dataset(FeatureMatrix::dense(std::vector<double>(n, 0.0), n, 1), labels);
}

TEST(ConfusionDataset, MatchesSpanOverload) {
  Dataset ds = binary_dataset({1, 0, 1, 0, 1});
  ds.set_weights({1, 2, 0.5, 1, 3});
  ds.add_column(make_column("baseline", {"1", "0.5", "0", "1.0", "0.25"}));
  const std::vector<double> p{0.9, 0.2, 1, 0, 0.5};
  const std::vector<std::uint8_t> mask{1, 1, 0, 1, 1};
  const auto got = count_slice(ds, mask, p);
  const std::vector<std::int32_t> y{1, 0, 1, 0, 1};
  const std::vector<double> w{1, 2, 0.5, 1, 3}, b{1, 0.5, 0, 1, 0.25};
  const auto want = count_slice(y, p, w, mask, b);
  EXPECT_EQ(got.confusion.tp, want.confusion.tp);
  EXPECT_EQ(got.confusion.fp, want.confusion.fp);
  EXPECT_EQ(got.confusion.fn, want.confusion.fn);
  EXPECT_EQ(got.confusion.tn, want.confusion.tn);
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.changes, want.changes);
  EXPECT_EQ(got.wins, want.wins);
  EXPECT_EQ(got.losses, want.losses);
  // Without a baseline column the baseline fields are NaN.
  const auto plain = count_slice(binary_dataset({1, 0}), {}, std::vector<double>{1, 1});
  EXPECT_FALSE(plain.has_baseline());
  EXPECT_EQ(plain.confusion.tp, 1.0);
  EXPECT_EQ(plain.confusion.fp, 1.0);
}

TEST(ConfusionDataset, BaselineAsLabelNames) {
  Dataset ds = binary_dataset({1, 0, 0}, {"no", "yes"});
  ds.add_column(make_column("baseline", {"yes", "yes", "no"}));
  const auto s = count_slice(ds, {}, std::vector<double>{1, 0, 0});
  // Row 1 changes (baseline yes, new 0) and is a win (y = 0).
  EXPECT_EQ(s.changes, 1.0);
  EXPECT_EQ(s.wins, 1.0);
  EXPECT_EQ(s.losses, 0.0);
  ds.add_column(make_column("baseline", {"yes", "maybe", "no"}));
  expect_invalid([&] { (void)count_slice(ds, {}, std::vector<double>{1, 0, 0}); }, "maybe");
}

TEST(ConfusionDataset, MissingBaselineOnlyMattersInsideTheSlice) {
  Dataset ds = binary_dataset({1, 0, 1});
  ds.add_column(make_column("baseline", {"1", "?", "0"}));
  const std::vector<double> p{1, 1, 1};
  expect_invalid([&] { (void)count_slice(ds, {}, p); }, "row 1");
  const std::vector<std::uint8_t> mask{1, 0, 1};
  const auto s = count_slice(ds, mask, p);
  EXPECT_EQ(s.changes, 1.0);
  EXPECT_EQ(s.total, 2.0);
}

TEST(ConfusionDataset, UnlabelledDataCountsEverythingAsNegative) {
  // kNone: y = 0 for every row, so ppr, npr and churn are meaningful; label metrics are not
  // (MetricInfo::needs_labels tells the caller to refuse them).
  Dataset ds(FeatureMatrix::dense({0, 0, 0}, 3, 1), Labels{});
  ds.add_column(make_column("baseline", {"1", "0", "0"}));
  const auto s = count_slice(ds, {}, std::vector<double>{1, 0.5, 0});
  EXPECT_EQ(s.confusion.tp, 0.0);
  EXPECT_EQ(s.confusion.fn, 0.0);
  EXPECT_DOUBLE_EQ(s.confusion.fp, 1.5);
  EXPECT_DOUBLE_EQ(compute_metric("ppr", s), 0.5);
  EXPECT_DOUBLE_EQ(compute_metric("churn", s), 0.5 / 3);
}

// Hard predictions as bytes give the double overload's counts bit for bit: non-integer weights
// (the sums round), a baseline of probabilities and label names, slices, file parts, unlabelled
// data.
TEST(ConfusionDataset, BytePredictionsMatchDoubles) {
  std::mt19937_64 rng(41);
  const std::size_t n = 3001;
  std::vector<std::int32_t> y(n);
  std::vector<double> w(n), p(n);
  std::vector<std::uint8_t> z(n);
  std::vector<std::string> base(n);
  const std::vector<std::string> levels{"0", "1", "0.3", "0.85", "no", "yes"};
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = static_cast<std::int32_t>(rng() % 2);
    z[i] = static_cast<std::uint8_t>(rng() % 2);
    p[i] = z[i];
    w[i] = 0.1 + static_cast<double>(rng() % 1000) / 7.0;
    base[i] = levels[rng() % levels.size()];
  }
  Dataset ds = binary_dataset(y, {"no", "yes"});
  ds.set_weights(w);
  ds.set_row_parts({1000, 1, 2000});
  Dataset unlabelled(FeatureMatrix::dense(std::vector<double>(n, 0.0), n, 1), Labels{});
  Dataset plain = binary_dataset(y);
  ds.add_column(make_column("baseline", base));
  std::vector<std::uint8_t> half(n);
  for (std::size_t i = 0; i < n; ++i) half[i] = static_cast<std::uint8_t>(rng() % 2);
  for (const Dataset* data : {&ds, &unlabelled, &plain}) {
    for (const std::vector<std::uint8_t>& mask : {std::vector<std::uint8_t>(), half}) {
      const auto want = count_slice(*data, mask, p);
      const auto got = count_slice(*data, mask, z);
      // The same predictions coded as levels {0, 1}, and probabilities coded as levels.
      const std::vector<double> bits{0.0, 1.0}, probs{0.25, 0.6};
      const auto coded = count_slice(*data, mask, z, bits);
      EXPECT_EQ(std::memcmp(&coded, &want, sizeof(SliceCounts)), 0);
      std::vector<double> soft(n);
      for (std::size_t i = 0; i < n; ++i) soft[i] = probs[z[i]];
      const auto soft_want = count_slice(*data, mask, soft);
      const auto soft_got = count_slice(*data, mask, z, probs);
      EXPECT_EQ(std::memcmp(&soft_got, &soft_want, sizeof(SliceCounts)), 0);
      EXPECT_THROW((void)count_slice(*data, mask, z, std::vector<double>{0.5}), InvalidArgument);
      EXPECT_THROW((void)count_slice(*data, mask, z, std::vector<double>{0.5, 1.5}),
                   InvalidArgument);
      // Bit for bit, NaN baseline fields included.
      EXPECT_EQ(std::memcmp(&got, &want, sizeof(SliceCounts)), 0);
      EXPECT_EQ(got.confusion.tp, want.confusion.tp);
      EXPECT_EQ(got.confusion.tn, want.confusion.tn);
      EXPECT_EQ(got.total, want.total);
      EXPECT_EQ(got.has_baseline(), data == &ds);
      if (data == &ds) {
        EXPECT_EQ(got.changes, want.changes);
        EXPECT_EQ(got.wins, want.wins);
        EXPECT_EQ(got.losses, want.losses);
      }
    }
  }
  // Errors: one byte per row, each 0 or 1.
  expect_invalid([&] { (void)count_slice(ds, {}, std::vector<std::uint8_t>(n - 1)); },
                 "predictions have 3000 entries, expected 3001");
  std::vector<std::uint8_t> two = z;
  two[5] = 2;
  expect_invalid([&] { (void)count_slice(ds, {}, two); }, "predictions[5] is 2, expected 0 or 1");
}

TEST(ConfusionDataset, RejectsBadArguments) {
  Labels multi;
  multi.kind = LabelKind::kMulticlass;
  multi.values = {0, 2};
  multi.names = {"a", "b", "c"};
  const Dataset mc(FeatureMatrix::dense({0, 0}, 2, 1), multi);
  expect_invalid([&] { (void)count_slice(mc, {}, std::vector<double>{0, 1}); }, "multiclass");
  const Dataset ds = binary_dataset({1, 0});
  expect_invalid([&] { (void)count_slice(ds, {}, std::vector<double>{0}); },
                 "predictions have 1 entries, expected 2");
  expect_invalid(
      [&] {
        (void)count_slice(ds, std::vector<std::uint8_t>{1}, std::vector<double>{0, 1});
      },
      "mask has 1 entries");
  expect_invalid([&] { (void)count_slice(ds, {}, std::vector<double>{0, 2}); }, "predictions[1]");
}

}  // namespace
}  // namespace rateopt
