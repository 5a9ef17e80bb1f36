// Batches of decide instances, parallel over instances with the one parallel_for.
#include <fmt/format.h>

#include <string>
#include <utility>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

template <typename Fn>
std::vector<Decision> run_batch(std::size_t count, int n_threads, Fn&& one) {
  std::vector<Decision> out(count);
  detail::parallel_for(count, n_threads, [&](std::size_t i) {
    try {
      out[i] = one(i);
    } catch (const std::invalid_argument& e) {
      std::string_view what = e.what();
      constexpr std::string_view kPrefix = "[rateopt.invalid_argument] ";
      if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
      throw BatchInstanceError(i, std::string(what));
    }
  });
  return out;
}

}  // namespace

BatchInstanceError::BatchInstanceError(std::size_t instance, std::string detail)
    : InvalidArgument(fmt::format("instance {}: {}", instance, detail)),
      instance_(instance),
      detail_(std::move(detail)) {}

std::vector<Decision> decide_batch(DecideModel model,
                                   std::span<const std::vector<double>> instances,
                                   const DecideMetric& metric, const DecideOptions& options,
                                   int n_threads) {
  return run_batch(instances.size(), n_threads, [&](std::size_t i) {
    return model == DecideModel::kMulticlass ? decide_multiclass(instances[i], metric, options)
                                             : decide_independent(instances[i], metric, options);
  });
}

std::vector<Decision> decide_gfm_batch(std::span<const GfmInput> instances,
                                       const DecideMetric& metric, const DecideOptions& options,
                                       int n_threads) {
  return run_batch(instances.size(), n_threads,
                   [&](std::size_t i) { return decide_gfm(instances[i], metric, options); });
}

}  // namespace rateopt
