// rateopt train --multilabel-model and rateopt predict on the joint multi-label models: see
// multilabel_cli.hpp, rateopt/multilabel.hpp and docs/models.md ("Multi-label joint models").
#include "multilabel_cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "rateopt/error.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt::cli {

namespace {

constexpr const char* kGroup = "Multi-label joint models";

nlohmann::json fits_json(const std::vector<BaseModelFit>& fits,
                         const std::vector<std::string>& names) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t k = 0; k < fits.size(); ++k)
    out.push_back({{"model", k < names.size() ? names[k] : std::string("y = 0")},
                   {"c", fits[k].c},
                   {"cv_log_loss", fits[k].cv_log_loss},
                   {"status", std::string(to_string(fits[k].status))},
                   {"iterations", fits[k].iterations}});
  return out;
}

// Appends a label set as a JSON array of indices.
void append_set(std::string& text, const std::int32_t* begin, const std::int32_t* end) {
  text += '[';
  for (const std::int32_t* p = begin; p != end; ++p) {
    if (p != begin) text += ',';
    text += fmt::format("{}", *p);
  }
  text += ']';
}

void append_gfm_line(std::string& text, const GfmInput& in) {
  text += fmt::format(R"({{"p0": {:.17g}, "P": [)", in.p_zero);
  for (std::size_t i = 0; i < in.m; ++i) {
    if (i > 0) text += ", ";
    text += '[';
    for (std::size_t s = 0; s < in.m; ++s) {
      if (s > 0) text += ',';
      text += fmt::format("{:.17g}", in.p[i * in.m + s]);
    }
    text += ']';
  }
  text += "]}\n";
}

void append_probabilities(std::string& text, const std::vector<double>& p) {
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (j > 0) text += ' ';
    text += fmt::format("{:.17g}", p[j]);
  }
  text += '\n';
}

// P(y_i = 1) from GFM parameters: the row sums of P.
std::vector<double> row_sums(const GfmInput& in) {
  std::vector<double> out(in.m, 0.0);
  for (std::size_t i = 0; i < in.m; ++i)
    for (std::size_t s = 0; s < in.m; ++s) out[i] += in.p[i * in.m + s];
  return out;
}

constexpr std::size_t kRowChunk = 256;  // rows sampled at once (memory: chunk x samples sets)

std::string predict_chain(const ClassifierChain& chain, const Dataset& ds, const std::string& mode,
                          const JointPredictFlags& f, std::uint64_t seed, int threads) {
  const std::size_t m = chain.num_labels();
  const std::size_t n = ds.num_rows();
  const FeatureMatrix& x = ds.features();
  if (f.exact && m > ClassifierChain::kMaxExactLabels)
    throw InvalidArgument(fmt::format(
        "--exact enumerates all 2^m label vectors: the chain has m = {} labels, at most {}; "
        "leave --exact out to sample (--samples N)",
        m, ClassifierChain::kMaxExactLabels));
  std::string text;
  if (mode == "mode") {
    std::size_t budget_hits = 0;
    for (std::size_t begin = 0; begin < n; begin += kRowChunk) {
      const std::size_t end = std::min(n, begin + kRowChunk);
      for (const JointModeResult& r :
           chain.joint_mode_rows(x, begin, end, f.max_expanded, threads)) {
        budget_hits += r.status == SearchStatus::kBudgetExceeded ? 1 : 0;
        for (std::size_t k = 0; k < r.labels.size(); ++k)
          text += fmt::format("{}{}", k > 0 ? " " : "", r.labels[k]);
        text += '\n';
      }
    }
    if (budget_hits > 0)
      fmt::print(stderr,
                 "warning: the joint-mode search ran out of its node budget on {} of {} rows; "
                 "those rows hold the greedy chain prediction (raise --max-expanded)\n",
                 budget_hits, n);
    return text;
  }
  if (f.exact) {
    for (std::size_t begin = 0; begin < n; begin += kRowChunk) {
      const std::size_t end = std::min(n, begin + kRowChunk);
      for (const GfmInput& in : chain.exact_joint_rows(x, begin, end, threads)) {
        if (mode == "joint")
          append_gfm_line(text, in);
        else
          append_probabilities(text, row_sums(in));
      }
    }
    return text;
  }
  if (f.samples == 0) throw InvalidArgument("--samples must be at least 1");
  for (std::size_t begin = 0; begin < n; begin += kRowChunk) {
    const std::size_t end = std::min(n, begin + kRowChunk);
    const LabelSets s = chain.sample_rows(x, begin, end, f.samples, seed, threads);
    for (std::size_t r = 0; r < end - begin; ++r) {
      const std::size_t first = r * f.samples;
      if (mode == "joint") {
        text += "{\"samples\": [";
        for (std::size_t k = first; k < first + f.samples; ++k) {
          if (k > first) text += ',';
          append_set(text, s.indices.data() + s.indptr[k], s.indices.data() + s.indptr[k + 1]);
        }
        text += fmt::format("], \"format\": \"indices\", \"m\": {}}}\n", m);
      } else {
        const LabelSetsView all = s.view();
        const LabelSetsView rows{all.indptr.subspan(first, f.samples + 1), all.indices, m};
        append_probabilities(text, marginals_from_samples(rows));
      }
    }
  }
  return text;
}

std::string predict_efp(const ExactFPlugin& efp, const Dataset& ds, const std::string& mode,
                        const JointPredictFlags& f, int threads) {
  std::string text;
  const std::size_t n = ds.num_rows();
  // joint: P made consistent unless --raw-p; probability: the raw estimate's row sums.
  const bool consistent = mode == "joint" && !f.raw_p;
  for (std::size_t begin = 0; begin < n; begin += kRowChunk) {
    const std::size_t end = std::min(n, begin + kRowChunk);
    for (const GfmInput& in :
         efp.predict_gfm_rows(ds.features(), begin, end, consistent, threads)) {
      if (mode == "joint")
        append_gfm_line(text, in);
      else
        append_probabilities(text, row_sums(in));
    }
  }
  return text;
}

}  // namespace

void add_multilabel_train_flags(CLI::App& app, MultilabelTrainFlags& flags) {
  app.add_option("--multilabel-model", flags.model,
                 "Multi-label data: a model of the joint label distribution for `decide --model "
                 "gfm` (Waegeman et al. 2014, 7.1): br (one logistic regression per label, the "
                 "marginals of BR / LFP), pcc (probabilistic classifier chain), efp (exact-F "
                 "plug-in). C: --C, or tuned per base model with --tune-c / --c-grid")
      ->check(CLI::IsMember({"br", "pcc", "efp"}))
      ->group(kGroup);
  app.add_option("--c-grid", flags.c_grid,
                 "--multilabel-model: tune C per base model by --cv-folds cross validation on "
                 "log-loss over these values (comma-separated)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->group(kGroup);
  app.add_flag("--tune-c", flags.tune_c,
               "--multilabel-model: tune C per base model over the paper's grid 1e-4, 1e-3, ..., "
               "1e3 (--cv-folds cross validation on log-loss)")
      ->group(kGroup);
  app.add_option("--cv-folds", flags.cv_folds, "Folds of the C tuning (>= 2)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000))
      ->group(kGroup);
  app.add_option("--cv-seed", flags.cv_seed, "Seed of the fold assignment of the C tuning")
      ->capture_default_str()
      ->group(kGroup);
}

int train_multilabel_cli(const Dataset& ds, const std::string& data_path,
                         const MultilabelTrainFlags& flags, double c, double tol, int max_iter,
                         int threads, const std::string& output) {
  const Labels& labels = ds.labels();
  if (labels.kind != LabelKind::kMultilabel)
    throw InvalidArgument(fmt::format(
        "--multilabel-model needs multi-label data; {} has {} labels (read multi-label files "
        "with --multilabel or --xml; for binary or multiclass labels leave --multilabel-model "
        "out)",
        data_path, label_kind_words(labels.kind)));
  MultilabelFitOptions o;
  o.c = c;
  o.tune_c = flags.tune_c || !flags.c_grid.empty();
  if (!flags.c_grid.empty()) o.c_grid = flags.c_grid;
  o.cv_folds = flags.cv_folds;
  o.seed = flags.cv_seed;
  o.tol = tol;
  o.max_iter = max_iter;
  o.n_threads = threads;
  const std::size_t m = labels.num_outputs();
  auto last = std::chrono::steady_clock::now();
  o.progress = [&](std::size_t k, std::size_t count, const std::string& what,
                   const BaseModelFit& fit) {
    const auto now = std::chrono::steady_clock::now();
    const std::string name = k < m ? labels.names[k] : what;
    fmt::print(
        stderr, "  [{}/{}] {}: C={:g}{}, {} after {} iterations ({:.2f} s)\n", k + 1, count, name,
        fit.c, o.tune_c ? fmt::format(" (CV log-loss {:.5f})", fit.cv_log_loss) : std::string(),
        to_string(fit.status), fit.iterations, std::chrono::duration<double>(now - last).count());
    last = now;
  };
  const std::string grid_text =
      o.tune_c ? fmt::format("C tuned per model by {}-fold CV on log-loss over {}", o.cv_folds,
                             fmt::join(o.c_grid, ","))
               : fmt::format("C={:g}", c);
  fmt::print(stderr, "training {} on {} ({} rows, {} features, {} labels, {})\n", flags.model,
             data_path, ds.num_rows(), ds.num_features(), m, grid_text);
  nlohmann::json opts{{"learner", flags.model}, {"tol", tol}, {"max_iter", max_iter}};
  if (o.tune_c) {
    opts["c_grid"] = o.c_grid;
    opts["cv_folds"] = o.cv_folds;
    opts["cv_seed"] = o.seed;
  } else {
    opts["C"] = c;
  }
  const LabelSetsView y{labels.set_indptr, labels.set_indices, m};
  const auto start = std::chrono::steady_clock::now();
  std::vector<BaseModelFit> fits;
  std::string written;
  if (flags.model == "br") {
    OneVsRest model = fit_binary_relevance(ds.features(), y, ds.weights(), o, &fits);
    model.names = labels.names;
    model.encoding = ds.encoding();
    for (std::size_t j = 0; j < m; ++j) {
      Classifier& out = model.outputs[j];
      out.encoding = ds.encoding();
      out.options_json = opts.dump();
      out.report_json = fits_json({fits[j]}, {labels.names[j]})[0].dump();
    }
    model.save(output);
  } else if (flags.model == "pcc") {
    ClassifierChain chain = ClassifierChain::fit(ds.features(), y, ds.weights(), o);
    chain.names = labels.names;
    chain.encoding = ds.encoding();
    chain.options_json = opts.dump();
    fits = chain.fits;
    chain.save(output);
  } else {
    ExactFPlugin efp = ExactFPlugin::fit(ds.features(), y, ds.weights(), o);
    efp.names = labels.names;
    efp.encoding = ds.encoding();
    efp.options_json = opts.dump();
    fits = efp.fits;
    efp.save(output);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t unconverged = 0;
  for (const BaseModelFit& f : fits) unconverged += f.status == Termination::kConverged ? 0 : 1;
  fmt::print("{}: {} with {} base models in {:.3f} s{}; model written to {}\n",
             unconverged == 0 ? "done" : "warning", flags.model, fits.size(), seconds,
             unconverged == 0
                 ? std::string()
                 : fmt::format(" ({} did not converge: raise --max-iter)", unconverged),
             output);
  return unconverged == 0 ? 0 : kExitRuntime;
}

void add_joint_predict_flags(CLI::App& app, JointPredictFlags& flags) {
  const char* const g = "Multi-label joint models (pcc, efp)";
  app.add_option("--samples", flags.samples,
                 "pcc, --mode joint / probability: ancestral samples per row (seeded by --seed)")
      ->capture_default_str()
      ->group(g);
  app.add_flag("--exact", flags.exact,
               "pcc, --mode joint / probability: the exact joint over all 2^m label vectors "
               "(m <= 20) as P and p0, instead of samples")
      ->group(g);
  app.add_flag("--raw-p", flags.raw_p,
               "efp, --mode joint: print P as estimated; by default it is made a distribution "
               "(column caps, then one scale: docs/models.md) so that decide --model gfm accepts "
               "it")
      ->group(g);
  app.add_option("--max-expanded", flags.max_expanded,
                 "pcc, --mode mode: node budget of the uniform-cost search for the joint mode")
      ->capture_default_str()
      ->group(g);
}

bool is_joint_model_format(const std::string& format) {
  return format == "rateopt.classifier_chain" || format == "rateopt.efp";
}

void predict_joint_model_cli(const std::string& model_text, const std::string& model_path,
                             const std::string& format, const std::string& data_path,
                             const ReaderFlags& reader, const std::string& mode,
                             const JointPredictFlags& flags, std::uint64_t seed, int threads,
                             const std::string& output) {
  const bool chain = format == "rateopt.classifier_chain";
  const bool allowed = mode == "joint" || mode == "probability" || (chain && mode == "mode");
  if (!allowed)
    throw InvalidArgument(fmt::format(
        "--mode {} does not apply to a {} model; use {}", mode, chain ? "pcc" : "efp",
        chain ? "joint (samples, or P with --exact), mode (the joint mode) or probability "
                "(marginals)"
              : "joint (P and p0) or probability (marginals: the row sums of P)"));
  std::string text;
  if (chain) {
    const ClassifierChain model = ClassifierChain::from_json(model_text, model_path);
    const Dataset ds = load_dataset(data_path, reader, &model.encoding);
    text = predict_chain(model, ds, mode, flags, seed, threads);
  } else {
    const ExactFPlugin model = ExactFPlugin::from_json(model_text, model_path);
    const Dataset ds = load_dataset(data_path, reader, &model.encoding);
    text = predict_efp(model, ds, mode, flags, threads);
  }
  write_text(output, text);
}

}  // namespace rateopt::cli
