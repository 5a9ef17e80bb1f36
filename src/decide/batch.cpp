// Batches of decide instances, parallel over instances with the one parallel_for.
#include <fmt/format.h>

#include <exception>
#include <string>
#include <utility>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

// Every instance is decided; when some fail, the error of the first failing instance (lowest
// index) is thrown, whatever the thread count and the order in which threads failed.
template <typename Fn>
std::vector<Decision> run_batch(std::size_t count, int n_threads, Fn&& one) {
  std::vector<Decision> out(count);
  std::vector<std::exception_ptr> errors(count);
  detail::parallel_for(count, n_threads, [&](std::size_t i) {
    try {
      out[i] = one(i);
    } catch (const std::invalid_argument& e) {
      std::string_view what = e.what();
      constexpr std::string_view kPrefix = "[rateopt.invalid_argument] ";
      if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
      errors[i] = std::make_exception_ptr(BatchInstanceError(i, std::string(what)));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace

BatchInstanceError::BatchInstanceError(std::size_t instance, std::string detail)
    : InvalidArgument(fmt::format("instance {}: {}", instance, detail)),
      instance_(instance),
      detail_(std::move(detail)) {}

std::vector<Decision> decide_batch(DecideModel model,
                                   std::span<const std::span<const double>> instances,
                                   const DecideMetric& metric, const DecideOptions& options,
                                   int n_threads) {
  return run_batch(instances.size(), n_threads, [&](std::size_t i) {
    return model == DecideModel::kMulticlass ? decide_multiclass(instances[i], metric, options)
                                             : decide_independent(instances[i], metric, options);
  });
}

std::vector<Decision> decide_batch(DecideModel model,
                                   std::span<const std::vector<double>> instances,
                                   const DecideMetric& metric, const DecideOptions& options,
                                   int n_threads) {
  const std::vector<std::span<const double>> views(instances.begin(), instances.end());
  return decide_batch(model, std::span<const std::span<const double>>(views), metric, options,
                      n_threads);
}

std::vector<Decision> decide_gfm_batch(std::span<const GfmInput> instances,
                                       const DecideMetric& metric, const DecideOptions& options,
                                       int n_threads) {
  return run_batch(instances.size(), n_threads,
                   [&](std::size_t i) { return decide_gfm(instances[i], metric, options); });
}

std::vector<Decision> decide_gfm_samples_batch(std::span<const LabelSetsView> samples,
                                               std::span<const std::span<const double>> weights,
                                               std::size_t m, const DecideMetric& metric,
                                               const DecideOptions& options, int n_threads) {
  RATEOPT_CHECK(weights.size() == samples.size(),
                "decide_gfm_samples_batch: {} sample sets but {} weight vectors", samples.size(),
                weights.size());
  return run_batch(samples.size(), n_threads, [&](std::size_t i) {
    return decide_gfm_samples(samples[i], weights[i], m, metric, options);
  });
}

}  // namespace rateopt
