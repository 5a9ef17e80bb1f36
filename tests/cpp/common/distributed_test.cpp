// The rank-ordered reductions of rateopt/distributed.hpp over a group of ranks run as threads of
// this process (ThreadGroup below), at 1 to 7 ranks: sums in rank order on every rank, gathers in
// rank order, broadcasts from every root, and the errors of mismatched calls. The MPI group runs
// the same code over MPI messages (tests/cli/test_mpi_cli.py).
#include "common/distributed.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "rateopt/error.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

// Mailboxes between n ranks; a rank that fails wakes every waiting receiver with an error, as
// MPI_Abort ends every process.
class Mailboxes {
 public:
  explicit Mailboxes(int n) : n_(n), boxes_(static_cast<std::size_t>(n * n)) {}
  void post(int from, int to, std::vector<std::byte> bytes) {
    {
      const std::lock_guard lock(m_);
      box(from, to).push_back(std::move(bytes));
    }
    cv_.notify_all();
  }
  std::vector<std::byte> take(int from, int to) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return failed_ || !box(from, to).empty(); });
    if (failed_) throw std::runtime_error("another rank failed");
    std::vector<std::byte> bytes = std::move(box(from, to).front());
    box(from, to).pop_front();
    return bytes;
  }
  void fail() {
    {
      const std::lock_guard lock(m_);
      failed_ = true;
    }
    cv_.notify_all();
  }
  [[nodiscard]] int size() const { return n_; }

 private:
  std::deque<std::vector<std::byte>>& box(int from, int to) {
    return boxes_[static_cast<std::size_t>(from * n_ + to)];
  }
  int n_;
  std::vector<std::deque<std::vector<std::byte>>> boxes_;
  std::mutex m_;
  std::condition_variable cv_;
  bool failed_ = false;
};

class ThreadRank final : public ProcessGroup {
 public:
  ThreadRank(Mailboxes& boxes, int rank) : boxes_(boxes), rank_(rank) {}
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return boxes_.size(); }
  void send(int to, std::span<const std::byte> bytes) override {
    ASSERT_TRUE(to >= 0 && to < size() && to != rank_);
    boxes_.post(rank_, to, {bytes.begin(), bytes.end()});
  }
  std::vector<std::byte> receive(int from) override { return boxes_.take(from, rank_); }
  [[noreturn]] void abort(int code) override {
    boxes_.fail();
    throw std::runtime_error("abort " + std::to_string(code));
  }
  [[nodiscard]] std::string name() const override { return "threads"; }

 private:
  Mailboxes& boxes_;
  int rank_;
};

// Runs fn(rank) on n threads, each with its own rank installed; returns each rank's error text
// ("" when it returned normally).
std::vector<std::string> run_ranks(int n, const std::function<void(int)>& fn) {
  Mailboxes boxes(n);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      ThreadRank group(boxes, r);
      detail::set_thread_process_group(&group);
      try {
        fn(r);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
        boxes.fail();
      }
      detail::set_thread_process_group(nullptr);
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

TEST(Distributed, AloneEverythingIsTheIdentity) {
  EXPECT_FALSE(is_distributed());
  EXPECT_EQ(process_group().size(), 1);
  std::vector<double> v{1.5, -2};
  sum_over_ranks(v);
  EXPECT_EQ(v, (std::vector<double>{1.5, -2}));
  EXPECT_EQ(gather_over_ranks("x"), std::vector<std::string>{"x"});
  EXPECT_EQ(broadcast_from(0, "y"), "y");
}

TEST(Distributed, SumsInRankOrderOnEveryRank) {
  for (int n = 1; n <= 7; ++n) {
    // Rank r holds values that make the order visible: 1e16, then 1, then -1e16, ...:
    // ((1e16 + 1) - 1e16) = 0 in doubles, while any other order of the first three gives 1.
    auto local = [](int r) {
      const double lead = r == 0 ? 1e16 : r == 1 ? 1.0 : r == 2 ? -1e16 : 0.1 * r;
      return std::vector<double>{lead, 0.1 * (r + 1), static_cast<double>(r)};
    };
    std::vector<double> expected = local(0);
    for (int r = 1; r < n; ++r)
      for (std::size_t k = 0; k < expected.size(); ++k) expected[k] = expected[k] + local(r)[k];
    std::vector<std::vector<double>> got(static_cast<std::size_t>(n));
    const auto errors = run_ranks(n, [&](int r) {
      std::vector<double> v = local(r);
      EXPECT_EQ(is_distributed(), n > 1);
      sum_over_ranks(v);
      got[static_cast<std::size_t>(r)] = v;
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "n=" << n << " rank " << r;
      EXPECT_TRUE(test::same_bits(got[static_cast<std::size_t>(r)], expected))
          << "n=" << n << " rank " << r;
    }
    if (n == 3) {
      EXPECT_EQ(got[0][0], 0.0);  // rank order, not any other
    }
  }
}

TEST(Distributed, EmptySumsAndRepeatedCallsStayInStep) {
  const auto errors = run_ranks(4, [](int r) {
    for (int round = 0; round < 50; ++round) {
      std::vector<double> none;
      sum_over_ranks(none);
      std::vector<double> v{static_cast<double>(r + round)};
      sum_over_ranks(v);
      EXPECT_EQ(v[0], 6.0 + 4.0 * round);
    }
  });
  for (const auto& e : errors) EXPECT_EQ(e, "");
}

TEST(Distributed, GathersInRankOrder) {
  for (int n = 1; n <= 6; ++n) {
    const auto errors = run_ranks(n, [n](int r) {
      const std::string mine = r % 2 == 0 ? std::string(static_cast<std::size_t>(r), 'a')
                                          : "rank " + std::to_string(r) + std::string(1, '\0');
      const std::vector<std::string> all = gather_over_ranks(mine);
      ASSERT_EQ(all.size(), static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k)
        EXPECT_EQ(all[static_cast<std::size_t>(k)],
                  k % 2 == 0 ? std::string(static_cast<std::size_t>(k), 'a')
                             : "rank " + std::to_string(k) + std::string(1, '\0'));
    });
    for (const auto& e : errors) EXPECT_EQ(e, "");
  }
}

TEST(Distributed, BroadcastsFromEveryRoot) {
  for (int n = 1; n <= 7; ++n) {
    for (int root = 0; root < n; ++root) {
      const auto errors = run_ranks(n, [root](int r) {
        const std::string got = broadcast_from(root, r == root ? "from the root" : "wrong");
        EXPECT_EQ(got, "from the root") << "rank " << r << " root " << root;
      });
      for (const auto& e : errors) EXPECT_EQ(e, "");
    }
  }
}

TEST(Distributed, MismatchedLengthsAreAnErrorNotGarbage) {
  const auto errors = run_ranks(3, [](int r) {
    std::vector<double> v(r == 1 ? 2 : 3, 1.0);
    sum_over_ranks(v);
  });
  EXPECT_NE(errors[1].find("3 values on rank 0 but 2 on rank 1"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2], "");  // woken by the failure instead of waiting forever
}

TEST(Distributed, RootOutsideTheGroupIsAnError) {
  const auto errors = run_ranks(2, [](int) { (void)broadcast_from(2, "x"); });
  EXPECT_NE(errors[0].find("root rank 2 is not in [0, 2)"), std::string::npos) << errors[0];
}

TEST(Distributed, FoldContinuesRankAfterRankAsOneProcessWould) {
  // Rank r holds rows [starts[r], starts[r+1]) of a sequential sum: the fold over ranks is the
  // one-process loop to the bit, for any split.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  std::vector<double> rows(101);
  for (double& x : rows) x = u(rng) * std::pow(10.0, static_cast<double>(rng() % 12));
  double one = 0.1;
  for (const double x : rows) one += x;
  for (const std::vector<std::size_t>& starts :
       {std::vector<std::size_t>{0, 101}, {0, 50, 101}, {0, 0, 7, 101}, {0, 30, 31, 90, 101}}) {
    const int n = static_cast<int>(starts.size()) - 1;
    const auto errors = run_ranks(n, [&](int r) {
      const auto k = static_cast<std::size_t>(r);
      const std::vector<double> got = fold_over_ranks({0.1}, [&](std::vector<double>& v) {
        for (std::size_t i = starts[k]; i < starts[k + 1]; ++i) v[0] += rows[i];
      });
      EXPECT_TRUE(test::same_bits(got, {one})) << n << " ranks";
    });
    for (const auto& e : errors) EXPECT_EQ(e, "");
  }
}

TEST(Distributed, SumsOverPartsGiveOneProcessBitsForAnyRankCount) {
  // Five parts (one empty) of widely scaled values: each part summed from zero in row order, the
  // parts added in order. One process holding every part, and ranks holding runs of whole parts,
  // get the same bits; a plain sequential sum is one part in one process.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<std::size_t> parts{40, 0, 13, 77, 5};
  std::vector<double> rows;
  for (const std::size_t p : parts)
    for (std::size_t i = 0; i < p; ++i)
      rows.push_back(u(rng) * std::pow(10.0, static_cast<double>(rng() % 15)));
  const auto sum_rows = [&](std::size_t offset) {
    return [&rows, offset](std::size_t begin, std::size_t end, std::span<double> out) {
      for (std::size_t i = begin; i < end; ++i) {
        out[0] += rows[offset + i];
        out[1] += 1;
      }
    };
  };
  const std::vector<double> one = sum_over_parts(parts, rows.size(), 2, sum_rows(0));
  double want = 0;  // the same additions by hand
  std::size_t at = 0;
  for (const std::size_t p : parts) {
    double part = 0;
    for (std::size_t i = 0; i < p; ++i) part += rows[at + i];
    want += part;
    at += p;
  }
  EXPECT_TRUE(test::same_bits(one, {want, static_cast<double>(rows.size())}));
  double sequential = 0;
  for (const double x : rows) sequential += x;
  EXPECT_TRUE(test::same_bits({sum_over_parts({}, rows.size(), 2, sum_rows(0))[0]}, {sequential}));
  // Rank r holds parts [groups[r], groups[r + 1]).
  for (const std::vector<std::size_t>& groups :
       {std::vector<std::size_t>{0, 5}, {0, 2, 5}, {0, 1, 2, 4, 5}, {0, 3, 4, 5}}) {
    const int ranks = static_cast<int>(groups.size()) - 1;
    const auto errors = run_ranks(ranks, [&](int r) {
      const auto k = static_cast<std::size_t>(r);
      std::size_t offset = 0, n = 0;
      for (std::size_t p = 0; p < groups[k]; ++p) offset += parts[p];
      const std::vector<std::size_t> mine(
          parts.begin() + static_cast<std::ptrdiff_t>(groups[k]),
          parts.begin() + static_cast<std::ptrdiff_t>(groups[k + 1]));
      for (const std::size_t p : mine) n += p;
      EXPECT_TRUE(test::same_bits(sum_over_parts(mine, n, 2, sum_rows(offset)), one))
          << ranks << " ranks";
    });
    for (const auto& e : errors) EXPECT_EQ(e, "") << ranks << " ranks";
  }
  // Parts that do not add up to the rows are an error.
  const std::string msg = test::error_of<InvalidArgument>(
      [&] { (void)sum_over_parts(parts, rows.size() + 1, 2, sum_rows(0)); });
  EXPECT_TRUE(test::contains(msg, "add up to 135 rows, expected 136")) << msg;
}

TEST(Distributed, GathersToTheFirstRankInRankOrder) {
  for (const int n : {1, 2, 3, 5}) {
    std::vector<std::vector<std::int64_t>> got(static_cast<std::size_t>(n));
    const auto errors = run_ranks(n, [&](int r) {
      std::vector<std::int64_t> mine(static_cast<std::size_t>(r == 1 ? 0 : r + 2));
      for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = 100 * r + static_cast<std::int64_t>(i);
      got[static_cast<std::size_t>(r)] = detail::gather_to_first_rank(std::move(mine));
    });
    for (const auto& e : errors) EXPECT_EQ(e, "");
    std::vector<std::int64_t> want;
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < (r == 1 ? 0 : r + 2); ++i) want.push_back(100 * r + i);
    EXPECT_EQ(got[0], want) << n << " ranks";
    for (int r = 1; r < n; ++r) EXPECT_TRUE(got[static_cast<std::size_t>(r)].empty());
  }
}

TEST(Distributed, LogisticRegressionOverRanksIsTheOneProcessFitToTheBit) {
  // Three parts of unequal sizes (one smaller than a reduction block, one empty): one process
  // with row_parts and three ranks, each holding its part, fit the same bits; so do 2 ranks with
  // parts {0, 1} and {2}.
  const std::vector<std::size_t> parts{9000, 0, 5000, 37};
  std::size_t n = 0;
  for (const std::size_t p : parts) n += p;
  const std::size_t d = 6;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g;
  std::vector<double> x(n * d);
  std::vector<std::int32_t> y(n);
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    double z = 0.3;
    for (std::size_t j = 0; j < d; ++j) {
      x[i * d + j] = g(rng);
      z += x[i * d + j] * (static_cast<double>(j) - 2.5) * 0.4;
    }
    y[i] = g(rng) < z ? 1 : 0;
    w[i] = 0.5 + static_cast<double>(rng() % 3);
  }
  LogisticRegressionOptions options;
  options.n_threads = 2;
  options.row_parts = parts;
  const auto one = fit_logistic_regression(FeatureMatrix::dense(x, n, d), y, w, options);
  ASSERT_EQ(one.status, Termination::kConverged);
  // Rank r holds parts [groups[r], groups[r + 1]).
  for (const std::vector<std::size_t>& groups :
       {std::vector<std::size_t>{0, 1, 2, 3, 4}, {0, 2, 4}, {0, 4}}) {
    const int ranks = static_cast<int>(groups.size()) - 1;
    std::vector<LinearModel> models(static_cast<std::size_t>(ranks));
    const auto errors = run_ranks(ranks, [&](int r) {
      const auto k = static_cast<std::size_t>(r);
      std::size_t begin = 0;
      for (std::size_t p = 0; p < groups[k]; ++p) begin += parts[p];
      LogisticRegressionOptions mine = options;
      mine.row_parts.assign(parts.begin() + static_cast<std::ptrdiff_t>(groups[k]),
                            parts.begin() + static_cast<std::ptrdiff_t>(groups[k + 1]));
      std::size_t rows = 0;
      for (const std::size_t p : mine.row_parts) rows += p;
      const std::vector<double> xs(x.begin() + static_cast<std::ptrdiff_t>(begin * d),
                                   x.begin() + static_cast<std::ptrdiff_t>((begin + rows) * d));
      const std::vector<std::int32_t> ys(y.begin() + static_cast<std::ptrdiff_t>(begin),
                                         y.begin() + static_cast<std::ptrdiff_t>(begin + rows));
      const std::vector<double> ws(w.begin() + static_cast<std::ptrdiff_t>(begin),
                                   w.begin() + static_cast<std::ptrdiff_t>(begin + rows));
      models[k] = fit_logistic_regression(FeatureMatrix::dense(xs, rows, d), ys, ws, mine).model;
    });
    for (const auto& e : errors) EXPECT_EQ(e, "") << ranks << " ranks";
    for (const LinearModel& m : models) {
      EXPECT_TRUE(test::same_bits(m.weights, one.model.weights)) << ranks << " ranks";
      EXPECT_TRUE(test::same_bits({m.bias}, {one.model.bias})) << ranks << " ranks";
    }
  }
}

// Rows [begin, end) of a dense dataset with its columns, labels and encoding.
Dataset rows_of(const Dataset& ds, std::size_t begin, std::size_t end) {
  const DenseView v = ds.features().dense_view();
  std::vector<double> x;
  for (std::size_t i = begin; i < end; ++i)
    for (std::size_t j = 0; j < v.cols; ++j) x.push_back(v.data[i * v.row_stride + j]);
  Labels y = ds.labels();
  y.values.assign(ds.labels().values.begin() + static_cast<std::ptrdiff_t>(begin),
                  ds.labels().values.begin() + static_cast<std::ptrdiff_t>(end));
  Dataset out(FeatureMatrix::dense(std::move(x), end - begin, v.cols), y);
  for (const Column& c : ds.columns()) {
    Column part;
    part.name = c.name;
    for (std::size_t i = begin; i < end; ++i)
      part.push_back(c.levels[static_cast<std::size_t>(c.codes[i])]);
    out.add_column(std::move(part));
  }
  out.encoding() = ds.encoding();
  return out;
}

TEST(Distributed, RateConstrainedTrainingOverRanksIsTheOneProcessModelToTheBit) {
  // Error under a demographic-parity constraint (the cutting-plane solver with its logistic
  // oracle, the exact intercept and the per-group thresholds of the one-hot group features):
  // four files of unequal sizes, read by one process and by 3, 2 and 1 ranks, give the same
  // model, mixture and training values, bit for bit.
  const Dataset base = test::synthetic(2600, 5, false, 1);
  // Features [s, x1, g=a, g=b]: the group's one-hot pair lets the oracle add group thresholds.
  const DenseView bv = base.features().dense_view();
  const Column& g = base.column("g");
  std::vector<double> x;
  for (std::size_t i = 0; i < base.num_rows(); ++i) {
    x.push_back(bv.data[i * bv.row_stride]);
    x.push_back(bv.data[i * bv.row_stride + 1]);
    const bool a = g.levels[static_cast<std::size_t>(g.codes[i])] == "a";
    x.push_back(a ? 1 : 0);
    x.push_back(a ? 0 : 1);
  }
  Dataset whole(FeatureMatrix::dense(std::move(x), base.num_rows(), 4), base.labels());
  whole.add_column(g);
  whole.encoding().num_features = 4;
  whole.encoding().feature_names = {"s", "x1", "g=a", "g=b"};
  const std::vector<std::size_t> bounds{0, 1200, 1201, 2100, 2600};
  std::vector<Dataset> files;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
    files.push_back(rows_of(whole, bounds[k], bounds[k + 1]));

  const ProblemSpec spec =
      test::spec("error", {"ppr[g=a] >= 0.9 * ppr[g=b]", "ppr[g=b] >= 0.9 * ppr[g=a]"});
  TrainOptions options;
  options.n_threads = 2;
  const auto fit = [&](const Dataset& ds) {
    return train_rate_constrained(RateProblem::build(spec, {{"train", &ds}}), options);
  };
  const Dataset all = concat_rows(files);
  const TrainResult one = fit(all);
  ASSERT_NE(one.status, Termination::kInfeasible);
  ASSERT_GE(one.classifier.components.size(), 2u);

  // Rank r holds files [groups[r], groups[r + 1]).
  for (const std::vector<std::size_t>& groups :
       {std::vector<std::size_t>{0, 1, 2, 4}, {0, 2, 4}, {0, 4}}) {
    const int ranks = static_cast<int>(groups.size()) - 1;
    std::vector<TrainResult> results(static_cast<std::size_t>(ranks));
    const auto errors = run_ranks(ranks, [&](int r) {
      const auto k = static_cast<std::size_t>(r);
      const Dataset mine = concat_rows(
          std::vector<Dataset>(files.begin() + static_cast<std::ptrdiff_t>(groups[k]),
                               files.begin() + static_cast<std::ptrdiff_t>(groups[k + 1])));
      results[k] = fit(mine);
    });
    for (const auto& e : errors) EXPECT_EQ(e, "") << ranks << " ranks";
    for (const TrainResult& r : results) {
      EXPECT_EQ(r.status, one.status) << ranks << " ranks";
      EXPECT_EQ(r.iterations, one.iterations) << ranks << " ranks";
      EXPECT_TRUE(test::same_bits(r.classifier.mixture, one.classifier.mixture)) << ranks;
      ASSERT_EQ(r.classifier.components.size(), one.classifier.components.size()) << ranks;
      for (std::size_t c = 0; c < one.classifier.components.size(); ++c) {
        EXPECT_TRUE(test::same_bits(r.classifier.components[c].linear().weights,
                                    one.classifier.components[c].linear().weights))
            << ranks << " ranks, component " << c;
        EXPECT_TRUE(test::same_bits({r.classifier.components[c].linear().bias},
                                    {one.classifier.components[c].linear().bias}))
            << ranks << " ranks, component " << c;
      }
      EXPECT_EQ(r.classifier.best, one.classifier.best);
      EXPECT_TRUE(test::same_bits({r.stochastic.objective, r.lower_bound},
                                  {one.stochastic.objective, one.lower_bound}))
          << ranks << " ranks";
      EXPECT_TRUE(test::same_bits(r.stochastic.constraints, one.stochastic.constraints));
    }
  }
}

TEST(Distributed, MpiSessionWithoutMpiSaysHowToGetIt) {
  if (mpi_available()) GTEST_SKIP() << "this build has MPI (tests/cli/test_mpi_cli.py runs it)";
  int argc = 0;
  char** argv = nullptr;
  try {
    MpiSession session(&argc, &argv);
    FAIL() << "MpiSession without MPI must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("built without MPI"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rateopt
