// JSON formats of the multi-label joint models (rateopt/multilabel.hpp, docs/models.md):
//   {"format": "rateopt.classifier_chain", "version": 1, "names": [...], "encoding": {...},
//    "options": {...}, "labels": [{"weights": [...], "bias": b, "fit": {...}}, ...]}
//   {"format": "rateopt.efp", "version": 1, "names": [...], "encoding": {...}, "options": {...},
//    "labels": [{"classes": [...], "weights": [...], "biases": [...], "fit": {...}}, ...],
//    "empty": {"weights": [...], "bias": b, "fit": {...}}}
// "fit": {"c": C, "cv_log_loss": L, "status": "converged", "iterations": n}. The encoding is
// stored once, as in "rateopt.one_vs_rest". Doubles are written in the shortest form that reads
// back to the same value, so a round trip is exact.
#include "rateopt/io.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kChainFormat = "rateopt.classifier_chain";
constexpr std::string_view kEfpFormat = "rateopt.efp";

[[noreturn]] void fail(const std::string& name, std::string_view field, std::string_view what) {
  if (field.empty()) throw ParseError(name, 0, 0, fmt::format("invalid model: {}", what));
  throw ParseError(name, 0, 0, fmt::format("model field '{}': {}", field, what));
}

Json parse(std::string_view text, const std::string& name, std::string_view format, int version) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    fail(name, "", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) fail(name, "", "the model file must hold a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != format)
    fail(name, "format", fmt::format("expected '{}'", format));
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<std::int64_t>() < 1 || j["version"].get<std::int64_t>() > version)
    fail(name, "version", fmt::format("expected an integer from 1 to {}", version));
  return j;
}

const Json& at(const Json& j, const char* key, const std::string& name, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) fail(name, path, "missing");
  return j.at(key);
}

std::vector<double> numbers(const Json& j, const std::string& name, const std::string& path) {
  if (!j.is_array()) fail(name, path, "expected an array of numbers");
  std::vector<double> out;
  out.reserve(j.size());
  for (const Json& v : j) {
    if (!v.is_number()) fail(name, path, fmt::format("expected numbers, found {}", v.dump()));
    out.push_back(v.get<double>());
  }
  return out;
}

double number(const Json& j, const std::string& name, const std::string& path) {
  if (!j.is_number()) fail(name, path, fmt::format("expected a number, found {}", j.dump()));
  return j.get<double>();
}

std::vector<std::string> strings(const Json& j, const std::string& name, const std::string& path) {
  if (!j.is_array()) fail(name, path, "expected an array of strings");
  std::vector<std::string> out;
  for (const Json& v : j) {
    if (!v.is_string()) fail(name, path, fmt::format("expected strings, found {}", v.dump()));
    out.push_back(v.get<std::string>());
  }
  return out;
}

Json fit_json(const BaseModelFit& f) {
  return {{"c", f.c},
          {"cv_log_loss", f.cv_log_loss},
          {"status", std::string(to_string(f.status))},
          {"iterations", f.iterations}};
}

BaseModelFit read_fit(const Json& j, const std::string& name, const std::string& path) {
  BaseModelFit f;
  f.c = number(at(j, "c", name, path + ".c"), name, path + ".c");
  f.cv_log_loss = number(at(j, "cv_log_loss", name, path + ".cv_log_loss"), name, path);
  const Json& s = at(j, "status", name, path + ".status");
  const std::optional<Termination> status =
      s.is_string() ? detail::parse(detail::kTerminationNames, s.get<std::string>()) : std::nullopt;
  if (!status) fail(name, path + ".status", fmt::format("unknown status {}", s.dump()));
  f.status = *status;
  const Json& it = at(j, "iterations", name, path + ".iterations");
  if (!it.is_number_integer()) fail(name, path + ".iterations", "expected an integer");
  f.iterations = it.get<int>();
  return f;
}

Json options_object(const std::string& text, std::string_view what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  RATEOPT_CHECK(j.is_object(), "the model's {} is not a JSON object: '{}'", what, text);
  return j;
}

Encoding read_encoding(const Json& j, const std::string& name) {
  const Json& e = at(j, "encoding", name, "encoding");
  if (!e.is_object()) fail(name, "encoding", "expected an object");
  try {
    return Encoding::from_json(e.dump());
  } catch (const ParseError& err) {
    fail(name, "encoding", err.detail());
  } catch (const InvalidArgument& err) {
    fail(name, "encoding", err.what());
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot open model file '{}'", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw IoError(fmt::format("cannot read model file '{}'", path));
  return buffer.str();
}

void check_finite(std::span<const double> v, std::string_view what) {
  for (double x : v)
    RATEOPT_CHECK(std::isfinite(x), "{} holds {}, expected finite values", what, x);
}

}  // namespace

// ---- ClassifierChain ----------------------------------------------------------------------------

void ClassifierChain::validate() const {
  RATEOPT_CHECK(!models.empty(), "a classifier chain needs at least one label");
  RATEOPT_CHECK(names.size() == models.size(), "{} label names for {} chain models", names.size(),
                models.size());
  RATEOPT_CHECK(fits.empty() || fits.size() == models.size(), "{} fit records for {} labels",
                fits.size(), models.size());
  const std::size_t d = models.front().weights.size();
  for (std::size_t j = 0; j < models.size(); ++j) {
    RATEOPT_CHECK(models[j].weights.size() == d + j,
                  "chain model {} has {} weights, expected features + previous labels = {} + {}", j,
                  models[j].weights.size(), d, j);
    check_finite(models[j].weights, "a chain model's weights");
    RATEOPT_CHECK(std::isfinite(models[j].bias), "chain model {} has bias {}", j, models[j].bias);
  }
  RATEOPT_CHECK(encoding.num_features == 0 || encoding.num_features == d,
                "the encoding has {} features, the chain {}", encoding.num_features, d);
}

std::string ClassifierChain::to_json() const {
  validate();
  Json j;
  j["format"] = kChainFormat;
  j["version"] = kFormatVersion;
  j["names"] = names;
  j["encoding"] = Json::parse(encoding.to_json());
  j["options"] = options_object(options_json, "options_json");
  Json labels = Json::array();
  for (std::size_t k = 0; k < models.size(); ++k) {
    Json o{{"weights", models[k].weights}, {"bias", models[k].bias}};
    o["fit"] = fit_json(fits.empty() ? BaseModelFit{} : fits[k]);
    labels.push_back(std::move(o));
  }
  j["labels"] = std::move(labels);
  return j.dump(1);
}

ClassifierChain ClassifierChain::from_json(std::string_view text, const std::string& name) {
  const Json j = parse(text, name, kChainFormat, kFormatVersion);
  ClassifierChain c;
  c.names = strings(at(j, "names", name, "names"), name, "names");
  c.encoding = read_encoding(j, name);
  if (j.contains("options")) {
    if (!j["options"].is_object()) fail(name, "options", "expected an object");
    c.options_json = j["options"].dump();
  }
  const Json& labels = at(j, "labels", name, "labels");
  if (!labels.is_array()) fail(name, "labels", "expected an array");
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const std::string path = fmt::format("labels[{}]", k);
    LinearModel lm;
    lm.weights = numbers(at(labels[k], "weights", name, path + ".weights"), name, path);
    lm.bias = number(at(labels[k], "bias", name, path + ".bias"), name, path + ".bias");
    c.models.push_back(std::move(lm));
    c.fits.push_back(read_fit(at(labels[k], "fit", name, path + ".fit"), name, path + ".fit"));
  }
  try {
    c.validate();
  } catch (const InvalidArgument& e) {
    fail(name, "", e.what());
  }
  return c;
}

void ClassifierChain::save(const std::string& path) const {
  write_file_atomic(path, to_json() + "\n");
}

ClassifierChain ClassifierChain::load(const std::string& path) {
  return from_json(read_file(path), path);
}

// ---- ExactFPlugin -------------------------------------------------------------------------------

void ExactFPlugin::validate() const {
  const std::size_t m = label_models.size();
  RATEOPT_CHECK(m >= 1, "an EFP model needs at least one label");
  RATEOPT_CHECK(names.size() == m, "{} label names for {} EFP label models", names.size(), m);
  RATEOPT_CHECK(fits.empty() || fits.size() == m + 1, "{} fit records, expected {}", fits.size(),
                m + 1);
  const std::size_t d = empty_model.weights.size();
  check_finite(empty_model.weights, "the empty-set model's weights");
  RATEOPT_CHECK(std::isfinite(empty_model.bias), "the empty-set model's bias is {}",
                empty_model.bias);
  for (std::size_t l = 0; l < m; ++l) {
    const MultinomialModel& mm = label_models[l];
    mm.validate();
    RATEOPT_CHECK(mm.num_features == d, "label model {} has {} features, the empty-set model {}", l,
                  mm.num_features, d);
    RATEOPT_CHECK(mm.classes.front() >= 0 && static_cast<std::size_t>(mm.classes.back()) <= m,
                  "label model {} has classes outside [0, {}] (t = [y_i = 1] |y|)", l, m);
  }
  RATEOPT_CHECK(encoding.num_features == 0 || encoding.num_features == d,
                "the encoding has {} features, the EFP model {}", encoding.num_features, d);
}

std::string ExactFPlugin::to_json() const {
  validate();
  Json j;
  j["format"] = kEfpFormat;
  j["version"] = kFormatVersion;
  j["names"] = names;
  j["encoding"] = Json::parse(encoding.to_json());
  j["options"] = options_object(options_json, "options_json");
  Json labels = Json::array();
  for (std::size_t l = 0; l < label_models.size(); ++l) {
    const MultinomialModel& mm = label_models[l];
    Json o{{"classes", mm.classes}, {"weights", mm.weights}, {"biases", mm.biases}};
    o["fit"] = fit_json(fits.empty() ? BaseModelFit{} : fits[l]);
    labels.push_back(std::move(o));
  }
  j["labels"] = std::move(labels);
  Json empty{{"weights", empty_model.weights}, {"bias", empty_model.bias}};
  empty["fit"] = fit_json(fits.empty() ? BaseModelFit{} : fits.back());
  j["empty"] = std::move(empty);
  return j.dump(1);
}

ExactFPlugin ExactFPlugin::from_json(std::string_view text, const std::string& name) {
  const Json j = parse(text, name, kEfpFormat, kFormatVersion);
  ExactFPlugin e;
  e.names = strings(at(j, "names", name, "names"), name, "names");
  e.encoding = read_encoding(j, name);
  if (j.contains("options")) {
    if (!j["options"].is_object()) fail(name, "options", "expected an object");
    e.options_json = j["options"].dump();
  }
  const Json& empty = at(j, "empty", name, "empty");
  e.empty_model.weights = numbers(at(empty, "weights", name, "empty.weights"), name, "empty");
  e.empty_model.bias = number(at(empty, "bias", name, "empty.bias"), name, "empty.bias");
  const Json& labels = at(j, "labels", name, "labels");
  if (!labels.is_array()) fail(name, "labels", "expected an array");
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const std::string path = fmt::format("labels[{}]", k);
    MultinomialModel mm;
    const Json& classes = at(labels[k], "classes", name, path + ".classes");
    if (!classes.is_array()) fail(name, path + ".classes", "expected an array of integers");
    for (const Json& c : classes) {
      if (!c.is_number_integer() || c.get<std::int64_t>() < 0 || c.get<std::int64_t>() > 1 << 30)
        fail(name, path + ".classes", fmt::format("expected integers >= 0, found {}", c.dump()));
      mm.classes.push_back(c.get<std::int32_t>());
    }
    mm.weights = numbers(at(labels[k], "weights", name, path + ".weights"), name, path);
    mm.biases = numbers(at(labels[k], "biases", name, path + ".biases"), name, path);
    mm.num_features = e.empty_model.weights.size();
    e.label_models.push_back(std::move(mm));
    e.fits.push_back(read_fit(at(labels[k], "fit", name, path + ".fit"), name, path + ".fit"));
  }
  e.fits.push_back(read_fit(at(empty, "fit", name, "empty.fit"), name, "empty.fit"));
  try {
    e.validate();
  } catch (const InvalidArgument& err) {
    fail(name, "", err.what());
  }
  return e;
}

void ExactFPlugin::save(const std::string& path) const {
  write_file_atomic(path, to_json() + "\n");
}

ExactFPlugin ExactFPlugin::load(const std::string& path) {
  return from_json(read_file(path), path);
}

}  // namespace rateopt
