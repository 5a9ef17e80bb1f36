// multilabel_scores and multiclass_scores: hand cases, dense naive oracles, validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

// Owning CSR label sets for tests.
struct Sets {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::size_t num_labels = 0;

  Sets(std::size_t labels, const std::vector<std::vector<std::int32_t>>& sets)
      : num_labels(labels) {
    for (const auto& s : sets) {
      indices.insert(indices.end(), s.begin(), s.end());
      indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
  }
  [[nodiscard]] LabelSetsView view() const { return LabelSetsView{indptr, indices, num_labels}; }
};

void expect_scores(const MultilabelScores& got, const MultilabelScores& want) {
  EXPECT_NEAR(got.instance_f1, want.instance_f1, 1e-14);
  EXPECT_NEAR(got.instance_jaccard, want.instance_jaccard, 1e-14);
  EXPECT_NEAR(got.micro_f1, want.micro_f1, 1e-14);
  EXPECT_NEAR(got.macro_f1, want.macro_f1, 1e-14);
  EXPECT_NEAR(got.hamming_loss, want.hamming_loss, 1e-14);
  EXPECT_NEAR(got.subset_accuracy, want.subset_accuracy, 1e-14);
}

// y = {0,1}, {}, {2};  h = {0}, {}, {1,2}.
//   example 0: |y&h| = 1, F1 = 2/3, J = 1/2, 1 wrong label, not exact
//   example 1: empty/empty: F1 = J = 1, exact
//   example 2: F1 = 2/3, J = 1/2, 1 wrong label
//   pooled: tp 2, fp 1, fn 1 -> micro F1 2/3
//   per label: 0 -> 1 (tp 1); 1 -> 0 (fp 1, fn 1); 2 -> 1 (tp 1); 3 (unused) -> 1
TEST(MultilabelHand, SmallCase) {
  const Sets y(3, {{0, 1}, {}, {2}});
  const Sets h(3, {{0}, {}, {1, 2}});
  expect_scores(multilabel_scores(y.view(), h.view()),
                MultilabelScores{7.0 / 9, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 9, 1.0 / 3});
  // Weights {1, 2, 1} (total 4): instance means reweighted, pooled counts unchanged (example 1
  // has no labels).
  const std::vector<double> w{1, 2, 1};
  expect_scores(multilabel_scores(y.view(), h.view(), w),
                MultilabelScores{5.0 / 6, 3.0 / 4, 2.0 / 3, 2.0 / 3, 1.0 / 6, 1.0 / 2});
  // A fourth, never used label: F1 = 1 for it; Hamming divides by 4 labels.
  const Sets y4(4, {{0, 1}, {}, {2}});
  const Sets h4(4, {{0}, {}, {1, 2}});
  expect_scores(multilabel_scores(y4.view(), h4.view()),
                MultilabelScores{7.0 / 9, 2.0 / 3, 2.0 / 3, 3.0 / 4, 1.0 / 6, 1.0 / 3});
  // Mask keeps examples 0 and 2 only.
  const std::vector<std::uint8_t> mask{1, 0, 1};
  expect_scores(multilabel_scores(y.view(), h.view(), {}, mask),
                MultilabelScores{2.0 / 3, 1.0 / 2, 2.0 / 3, 2.0 / 3, 1.0 / 3, 0});
}

TEST(MultilabelHand, EmptyConventions) {
  // Every set empty: F1 = J = 1 per example, micro = macro = 1, no errors.
  const Sets e(3, {{}, {}});
  expect_scores(multilabel_scores(e.view(), e.view()), MultilabelScores{1, 1, 1, 1, 0, 1});
  // Empty selection (zero total weight): instance means are 0, pooled F1s follow tp=fp=fn=0.
  const Sets y(2, {{0}, {1}});
  const Sets h(2, {{1}, {}});
  const std::vector<std::uint8_t> none{0, 0};
  expect_scores(multilabel_scores(y.view(), h.view(), {}, none),
                MultilabelScores{0, 0, 1, 1, 0, 0});
  // Predicting nothing against non-empty truth: F1 = J = 0.
  const Sets nothing(2, {{}, {}});
  expect_scores(multilabel_scores(y.view(), nothing.view()), MultilabelScores{0, 0, 0, 0, 0.5, 0});
  // No examples at all.
  const Sets zero(2, {});
  expect_scores(multilabel_scores(zero.view(), zero.view()), MultilabelScores{0, 0, 1, 1, 0, 0});
}

using test::expect_invalid;

TEST(MultilabelErrors, ValidatesShapes) {
  const Sets ok(3, {{0, 2}, {1}});
  const Sets unsorted(3, {{2, 0}, {1}});
  const Sets duplicate(3, {{1, 1}, {1}});
  const Sets out_of_range(3, {{0, 3}, {1}});
  const Sets negative(3, {{-1}, {1}});
  const Sets three(3, {{0}, {1}, {2}});
  const Sets other_width(4, {{0}, {1}});
  expect_invalid([&] { (void)multilabel_scores(ok.view(), unsorted.view()); }, "predicted");
  expect_invalid([&] { (void)multilabel_scores(unsorted.view(), ok.view()); }, "not sorted");
  expect_invalid([&] { (void)multilabel_scores(duplicate.view(), ok.view()); }, "not sorted");
  expect_invalid([&] { (void)multilabel_scores(out_of_range.view(), ok.view()); }, "label 3");
  expect_invalid([&] { (void)multilabel_scores(negative.view(), ok.view()); }, "label -1");
  expect_invalid([&] { (void)multilabel_scores(ok.view(), three.view()); },
                 "predicted has 3 label sets, expected 2");
  expect_invalid([&] { (void)multilabel_scores(ok.view(), other_width.view()); }, "num_labels");
  expect_invalid([&] { (void)multilabel_scores(ok.view(), ok.view(), std::vector<double>{1}); },
                 "weights");
  expect_invalid(
      [&] {
        (void)multilabel_scores(ok.view(), ok.view(), std::vector<double>{1, -1});
      },
      "weights[1]");
  expect_invalid(
      [&] { (void)multilabel_scores(ok.view(), ok.view(), {}, std::vector<std::uint8_t>{1}); },
      "mask");
  // Broken indptr: not starting at 0, decreasing, not ending at nnz.
  const std::vector<std::int32_t> idx{0, 1};
  const std::vector<std::int64_t> start1{1, 2}, decreasing{0, 2, 1, 2}, short_end{0, 1};
  expect_invalid([&] { (void)multilabel_scores({start1, idx, 3}, ok.view()); }, "indptr[0]");
  expect_invalid([&] { (void)multilabel_scores({decreasing, idx, 3}, ok.view()); }, "decreases");
  expect_invalid([&] { (void)multilabel_scores({short_end, idx, 3}, ok.view()); }, "ends at 1");
  const Sets no_labels(0, {{}, {}});
  expect_invalid([&] { (void)multilabel_scores(no_labels.view(), no_labels.view()); },
                 "num_labels");
}

// Dense 0/1 matrices and plain per-element loops.
MultilabelScores naive_multilabel(const std::vector<std::vector<int>>& y,
                                  const std::vector<std::vector<int>>& h,
                                  const std::vector<double>& w,
                                  const std::vector<std::uint8_t>& mask, std::size_t labels) {
  MultilabelScores s;
  double total = 0;
  std::vector<double> tp(labels), fp(labels), fn(labels);
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!mask[i]) continue;
    total += w[i];
    double both = 0, either = 0, wrong = 0, ny = 0, nh = 0;
    for (std::size_t j = 0; j < labels; ++j) {
      both += y[i][j] && h[i][j];
      either += y[i][j] || h[i][j];
      wrong += y[i][j] != h[i][j];
      ny += y[i][j];
      nh += h[i][j];
      tp[j] += w[i] * (y[i][j] && h[i][j]);
      fp[j] += w[i] * (!y[i][j] && h[i][j]);
      fn[j] += w[i] * (y[i][j] && !h[i][j]);
    }
    s.instance_f1 += w[i] * (ny + nh == 0 ? 1.0 : 2 * both / (ny + nh));
    s.instance_jaccard += w[i] * (either == 0 ? 1.0 : both / either);
    s.hamming_loss += w[i] * wrong / static_cast<double>(labels);
    s.subset_accuracy += w[i] * (wrong == 0 ? 1.0 : 0.0);
  }
  if (total > 0) {
    s.instance_f1 /= total;
    s.instance_jaccard /= total;
    s.hamming_loss /= total;
    s.subset_accuracy /= total;
  }
  double stp = 0, sfp = 0, sfn = 0;
  for (std::size_t j = 0; j < labels; ++j) {
    stp += tp[j];
    sfp += fp[j];
    sfn += fn[j];
    const double den = 2 * tp[j] + fp[j] + fn[j];
    s.macro_f1 += den == 0 ? 1.0 : 2 * tp[j] / den;
  }
  s.macro_f1 /= static_cast<double>(labels);
  const double den = 2 * stp + sfp + sfn;
  s.micro_f1 = den == 0 ? 1.0 : 2 * stp / den;
  return s;
}

Sets to_sets(const std::vector<std::vector<int>>& dense, std::size_t labels) {
  std::vector<std::vector<std::int32_t>> sets;
  for (const auto& row : dense) {
    sets.emplace_back();
    for (std::size_t j = 0; j < labels; ++j)
      if (row[j]) sets.back().push_back(static_cast<std::int32_t>(j));
  }
  return Sets(labels, sets);
}

TEST(MultilabelOracle, MatchesDenseLoops) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::size_t n = rng() % 40, labels = 1 + rng() % 7;
    const auto density = 1 + rng() % 4;  // P(label on) = 1/(density+1)
    std::vector<std::vector<int>> y(n, std::vector<int>(labels)), h = y;
    std::vector<double> w(n);
    std::vector<std::uint8_t> mask(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < labels; ++j) {
        y[i][j] = rng() % (density + 1) == 0;
        h[i][j] = rng() % 3 == 0 ? y[i][j] : rng() % (density + 1) == 0;
      }
      w[i] = rng() % 7 == 0 ? 0.0 : 0.5 * static_cast<double>(1 + rng() % 5);
      mask[i] = rng() % 6 != 0;
    }
    const Sets ys = to_sets(y, labels), hs = to_sets(h, labels);
    expect_scores(multilabel_scores(ys.view(), hs.view(), w, mask),
                  naive_multilabel(y, h, w, mask, labels));
  }
}

// truth {0,1,2,2,1}, predicted {0,2,2,1,1}, 4 classes: 3 right.
//   class 0: tp 1 -> 1;  class 1: tp 1, fp 1, fn 1 -> 1/2;  class 2: tp 1, fp 1, fn 1 -> 1/2;
//   class 3: unused -> 1.  macro = 3/4.
TEST(MulticlassHand, SmallCase) {
  const std::vector<std::int32_t> y{0, 1, 2, 2, 1}, h{0, 2, 2, 1, 1};
  auto s = multiclass_scores(y, h, 4);
  EXPECT_DOUBLE_EQ(s.accuracy, 3.0 / 5);
  EXPECT_DOUBLE_EQ(s.macro_f1, 3.0 / 4);
  // Weights {1, 1, 1, 1, 5}: accuracy 7/9; class 1: tp 5, fp 1, fn 1 -> 10/12.
  s = multiclass_scores(y, h, 4, std::vector<double>{1, 1, 1, 1, 5});
  EXPECT_DOUBLE_EQ(s.accuracy, 7.0 / 9);
  EXPECT_DOUBLE_EQ(s.macro_f1, (1 + 10.0 / 12 + 0.5 + 1) / 4);
  // Mask {1, 1, 0, 0, 0}: class 0 right; class 1 fn 1 -> 0; class 2 fp 1 -> 0; class 3 -> 1.
  s = multiclass_scores(y, h, 4, {}, std::vector<std::uint8_t>{1, 1, 0, 0, 0});
  EXPECT_DOUBLE_EQ(s.accuracy, 1.0 / 2);
  EXPECT_DOUBLE_EQ(s.macro_f1, 2.0 / 4);
  // Empty selection: accuracy 0, every class F1 = 1.
  s = multiclass_scores(y, h, 4, {}, std::vector<std::uint8_t>(5, 0));
  EXPECT_EQ(s.accuracy, 0.0);
  EXPECT_EQ(s.macro_f1, 1.0);
}

TEST(MulticlassErrors, ValidatesInput) {
  const std::vector<std::int32_t> y{0, 1}, h{0, 1}, h3{0, 1, 1}, bad{0, 3}, neg{-1, 0};
  expect_invalid([&] { (void)multiclass_scores(y, h3, 2); }, "predicted has 3 entries");
  expect_invalid([&] { (void)multiclass_scores(bad, h, 3); }, "truth[1] is 3");
  expect_invalid([&] { (void)multiclass_scores(y, neg, 3); }, "predicted[0] is -1");
  expect_invalid([&] { (void)multiclass_scores(y, h, 0); }, "num_classes");
  expect_invalid([&] { (void)multiclass_scores(y, h, 2, std::vector<double>{1}); }, "weights");
  expect_invalid([&] { (void)multiclass_scores(y, h, 2, {}, std::vector<std::uint8_t>{1}); },
                 "mask");
}

TEST(MulticlassOracle, MatchesOneVsRestLoops) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed + 77);
    const std::size_t n = rng() % 50, k = 1 + rng() % 6;
    std::vector<std::int32_t> y(n), h(n);
    std::vector<double> w(n);
    std::vector<std::uint8_t> mask(n);
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = static_cast<std::int32_t>(rng() % k);
      h[i] = rng() % 2 ? y[i] : static_cast<std::int32_t>(rng() % k);
      w[i] = 0.25 * static_cast<double>(rng() % 9);
      mask[i] = rng() % 5 != 0;
    }
    double total = 0, right = 0, macro = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (mask[i]) {
        total += w[i];
        right += w[i] * (y[i] == h[i]);
      }
    for (std::size_t c = 0; c < k; ++c) {
      double tp = 0, fp = 0, fn = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (!mask[i]) continue;
        const bool yt = y[i] == static_cast<std::int32_t>(c);
        const bool ht = h[i] == static_cast<std::int32_t>(c);
        tp += w[i] * (yt && ht);
        fp += w[i] * (!yt && ht);
        fn += w[i] * (yt && !ht);
      }
      macro += (2 * tp + fp + fn == 0) ? 1.0 : 2 * tp / (2 * tp + fp + fn);
    }
    const auto s = multiclass_scores(y, h, k, w, mask);
    EXPECT_NEAR(s.accuracy, total > 0 ? right / total : 0.0, 1e-14);
    EXPECT_NEAR(s.macro_f1, macro / static_cast<double>(k), 1e-14);
  }
}

}  // namespace
}  // namespace rateopt
