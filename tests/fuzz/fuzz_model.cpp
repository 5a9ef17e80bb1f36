// libFuzzer target for model files (model.hpp, multilabel.hpp): model_format, then
// Classifier::from_json, OneVsRest::from_json, ClassifierChain::from_json or
// ExactFPlugin::from_json by the format. Only ParseError, InvalidArgument and NotFound may escape
// loading. A loaded model must validate, survive to_json -> from_json -> to_json unchanged, and
// predict on a fixed 3-row dataset (first input byte: dense or CSR rows, predict mode) without a
// NaN: probabilities in [0, 1], deterministic predictions 0 or 1, decision scores not NaN; the
// joint models' samples, joint mode and GFM parameters on those rows are in range and not NaN.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/model.hpp"
#include "rateopt/multilabel.hpp"

namespace {

using rateopt::fuzz::require;

// A 3-row matrix with `cols` columns of small fixed values (row 0 all zero).
rateopt::FeatureMatrix fixed_rows(std::size_t cols, bool sparse) {
  std::vector<double> dense(3 * cols, 0.0);
  for (std::size_t j = 0; j < cols; ++j) {
    dense[cols + j] = (j % 3 == 0) ? 1.0 : -0.5;
    dense[2 * cols + j] = static_cast<double>(j % 5) - 2.0;
  }
  if (!sparse) return rateopt::FeatureMatrix::dense(std::move(dense), 3, cols);
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (dense[i * cols + j] == 0) continue;
      indices.push_back(static_cast<std::int32_t>(j));
      values.push_back(dense[i * cols + j]);
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  return rateopt::FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values),
                                     cols);
}

void check_outputs(const std::vector<double>& out, rateopt::PredictMode mode) {
  for (double v : out) {
    require(!std::isnan(v), "prediction is not NaN");
    require(v >= 0 && v <= 1, "prediction in [0, 1]");
    if (mode != rateopt::PredictMode::kProbability) require(v == 0 || v == 1, "0/1 prediction");
  }
}

template <typename Model>
bool load(std::string_view text, Model& out) {
  try {
    out = Model::from_json(text, "fuzz.json");
    return true;
  } catch (const rateopt::ParseError&) {
  } catch (const rateopt::InvalidArgument&) {
  } catch (const rateopt::NotFound&) {
  } catch (...) {
    rateopt::fuzz::fail("loading a model threw something other than ParseError / InvalidArgument");
  }
  return false;
}

template <typename Model>
void check_round_trip(const Model& m) {
  try {
    m.validate();
  } catch (...) {
    rateopt::fuzz::fail("a loaded model does not validate");
  }
  const std::string json = m.to_json();
  Model again;
  try {
    again = Model::from_json(json, "again.json");
  } catch (...) {
    rateopt::fuzz::fail("a loaded model's own JSON does not load");
  }
  require(again.to_json() == json, "to_json -> from_json -> to_json is stable");
}

void check_gfm(const rateopt::GfmInput& in, std::size_t m) {
  require(in.m == m && in.p.size() == m * m, "GFM parameters are m x m");
  for (double v : in.p) require(v >= 0 && v <= 1, "P entries in [0, 1] (not NaN)");
  require(in.p_zero >= 0 && in.p_zero <= 1, "p0 in [0, 1] (not NaN)");
}

void check_chain(const rateopt::ClassifierChain& m, const rateopt::FeatureMatrix& x) {
  const std::size_t labels = m.num_labels();
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const rateopt::LabelSets s = m.sample(x, i, 8, 7);
    require(s.size() == 8, "8 samples");
    for (std::size_t k = 0; k < s.size(); ++k)
      for (auto j = s.indptr[k]; j < s.indptr[k + 1]; ++j) {
        require(s.indices[j] >= 0 && static_cast<std::size_t>(s.indices[j]) < labels,
                "sampled label in range");
        require(j == s.indptr[k] || s.indices[j - 1] < s.indices[j], "sampled sets sorted");
      }
    const rateopt::JointModeResult mode = m.joint_mode(x, i, 2000);
    require(mode.probability >= 0 && mode.probability <= 1, "joint mode probability in [0, 1]");
    for (auto l : mode.labels)
      require(l >= 0 && static_cast<std::size_t>(l) < labels, "joint mode label in range");
    if (labels <= 8) check_gfm(m.exact_joint(x, i), labels);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const bool sparse = (sel & 1) != 0;
  const auto mode = static_cast<rateopt::PredictMode>((sel >> 1) % 3);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string format;
  try {
    format = rateopt::model_format(text, "fuzz.json");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("model_format threw something other than ParseError");
  }
  if (format == "rateopt.classifier_chain" || format == "rateopt.efp") {
    const bool chain = format == "rateopt.classifier_chain";
    rateopt::ClassifierChain c;
    rateopt::ExactFPlugin e;
    if (chain ? !load(text, c) : !load(text, e)) return 0;
    chain ? check_round_trip(c) : check_round_trip(e);
    const std::size_t cols = chain ? c.num_features() : e.num_features();
    const std::size_t labels = chain ? c.num_labels() : e.num_labels();
    if (cols > 4096 || labels > 64) return 0;
    const rateopt::FeatureMatrix x = fixed_rows(cols, sparse);
    try {
      if (chain) {
        check_chain(c, x);
      } else {
        for (std::size_t i = 0; i < x.rows(); ++i) check_gfm(e.predict_gfm(x, i), labels);
      }
    } catch (const rateopt::InvalidArgument&) {
      return 0;  // documented: the rows do not fit the model
    }
    return 0;
  }
  if (format == "rateopt.one_vs_rest") {
    rateopt::OneVsRest m;
    if (!load(text, m)) return 0;
    check_round_trip(m);
    const std::size_t cols = m.encoding.num_features;
    if (cols > 4096) return 0;
    const rateopt::FeatureMatrix x = fixed_rows(cols, sparse);
    std::vector<double> out(3 * m.num_outputs());
    try {
      m.predict(x, mode, out, 7, 1);
    } catch (const rateopt::InvalidArgument&) {
      return 0;  // documented: e.g. an output with group columns needs a Dataset
    }
    check_outputs(out, mode);
    return 0;
  }
  rateopt::Classifier m;
  if (!load(text, m)) return 0;
  check_round_trip(m);
  const std::size_t cols = m.encoding.num_features;
  if (cols > 4096) return 0;
  const rateopt::FeatureMatrix x = fixed_rows(cols, sparse);
  std::vector<double> out(3);
  try {
    m.predict(x, mode, out, 7, 1);
  } catch (const rateopt::InvalidArgument&) {
    return 0;  // documented: a classifier with group columns needs the Dataset overload
  }
  check_outputs(out, mode);
  std::vector<double> scores(3);
  m.decision_function(x, scores, 1);
  for (double s : scores) require(!std::isnan(s), "decision score is not NaN");
  return 0;
}
