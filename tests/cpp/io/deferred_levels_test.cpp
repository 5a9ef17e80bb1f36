// Column::deferred: a numeric slice column's levels and codes, left by the text readers
// (ColumnBuilder) to be built when a Dataset first hands the column out. Runs threads: in
// rateopt_threaded_tests too (ThreadSanitizer stage of scripts/test.sh).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/io_util.hpp"
#include "rateopt/dataset.hpp"

namespace rateopt {
namespace {

// A numeric column's deferred levels (Column::deferred): a Dataset hands the column out built,
// to threads asking at once, to a copy, and after keep_columns, always as Column::push_back
// builds it; the builder's texts need not outlive it.
TEST(ColumnBuilder, DeferredLevelsAreBuiltWhenTheDatasetHandsTheColumnOut) {
  constexpr std::size_t kRows = 20000;
  Column reference;
  reference.name = "x";
  const auto deferred_dataset = [&](bool fill_reference) -> Dataset {
    Dataset ds(FeatureMatrix::dense(std::vector<double>(kRows, 0.0), kRows, 1), Labels{});
    std::mt19937_64 r(5);
    io_detail::ColumnBuilder x("x", kRows);
    io_detail::ColumnBuilder y("y", kRows);
    for (std::size_t i = 0; i < kRows; ++i) {
      // Several spellings of one value, texts over 8 bytes, and missing values.
      const auto pick = r() % 8;
      const std::string text = pick == 0   ? std::string("1.0")
                               : pick == 1 ? std::string("1")
                                           : fmt::format("{:.9f}", static_cast<double>(r() % 3000));
      const bool missing = pick == 2;
      double number = 0;
      EXPECT_EQ(io_detail::parse_double(text, number), io_detail::NumberKind::kFinite);
      if (missing) {
        x.push(text, true);
      } else {
        x.push_number(text, number);
      }
      y.push(std::to_string(i % 7), false);
      if (fill_reference) reference.push_back(text, missing);
    }  // `text` is gone: the builder keeps its own copy
    Column built = std::move(x).finish();
    EXPECT_NE(built.deferred, nullptr);
    ds.add_column(std::move(built));
    ds.add_column(std::move(y).finish());
    return ds;
  };
  const Dataset ds = deferred_dataset(true);
  ASSERT_GT(reference.levels.size(), 1000u);
  const auto same = [&](const Column& c) {
    EXPECT_EQ(c.deferred, nullptr);
    EXPECT_EQ(c.levels, reference.levels);
    EXPECT_EQ(c.codes, reference.codes);
    ASSERT_EQ(c.numeric.size(), reference.numeric.size());
    for (std::size_t i = 0; i < kRows; ++i)
      EXPECT_EQ(std::isnan(c.numeric[i]) ? -1.0 : c.numeric[i],
                std::isnan(reference.numeric[i]) ? -1.0 : reference.numeric[i]);
  };
  // Four threads ask at once (TSan watches the build).
  std::vector<const Column*> seen(4, nullptr);
  {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < seen.size(); ++t)
      threads.emplace_back([&, t] { seen[t] = ds.find_column("x"); });
    for (std::thread& t : threads) t.join();
  }
  for (const Column* c : seen) {
    ASSERT_NE(c, nullptr);
    same(*c);
  }
  // A copy of a dataset whose levels are deferred, and one assigned over another.
  const Dataset fresh = deferred_dataset(false);
  const Dataset copy = fresh;  // NOLINT(performance-unnecessary-copy-initialization)
  same(copy.column("x"));
  same(fresh.column("x"));
  Dataset assigned = deferred_dataset(false);
  assigned = deferred_dataset(false);
  same(assigned.columns().front());
  // keep_columns drops y and keeps x deferred; take_columns hands it out built.
  Dataset kept = deferred_dataset(false);
  EXPECT_EQ(kept.column_names(), (std::vector<std::string>{"x", "y"}));
  const std::vector<std::string> keep{"x"};
  kept.keep_columns(keep);
  EXPECT_EQ(kept.column_names(), std::vector<std::string>{"x"});
  ASSERT_EQ(kept.dropped_columns(), std::vector<std::string>{"y"});
  std::vector<Column> taken = kept.take_columns();
  ASSERT_EQ(taken.size(), 1u);
  same(taken.front());
}

}  // namespace
}  // namespace rateopt
