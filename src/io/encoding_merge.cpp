// One encoding for several files or ranks (rateopt/io.hpp: merge_encodings,
// agree_encoding_over_ranks): the encoding one reader would infer from all their rows in order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/io.hpp"

namespace rateopt {
namespace {

// (count, mean, M2) of two runs of values as one (Chan, Golub & LeVeque 1983).
NumericMoments combine(const NumericMoments& a, const NumericMoments& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const auto na = static_cast<double>(a.count);
  const auto nb = static_cast<double>(b.count);
  const double n = na + nb;
  const double delta = b.mean - a.mean;
  return {a.count + b.count, a.mean + delta * (nb / n),
          a.m2 + b.m2 + delta * delta * (na * nb / n)};
}

// The parts' encodings must agree on everything but the features.
void check_same_frame(const InferredEncoding& first, const InferredEncoding& p) {
  const Encoding& a = first.encoding;
  const Encoding& b = p.encoding;
  auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    throw InvalidArgument(fmt::format(
        "{} and {} cannot be read as one dataset: {} {} '{}' vs '{}' (read them with the same "
        "flags; give --positive when a file may lack a class)",
        first.source, p.source, what, "differs:", x, y));
  };
  if (a.format != b.format) differ("the format", a.format, b.format);
  if (a.label_column != b.label_column) differ("the label column", a.label_column, b.label_column);
  if (a.positive_value != b.positive_value)
    differ("the positive label value", a.positive_value, b.positive_value);
  if (a.missing_policy != b.missing_policy)
    differ("the missing-value policy", a.missing_policy, b.missing_policy);
  if (a.excluded_columns != b.excluded_columns)
    differ("the group and weight columns", fmt::format("{}", fmt::join(a.excluded_columns, ",")),
           fmt::format("{}", fmt::join(b.excluded_columns, ",")));
}

InferredEncoding merge_csv(std::span<const InferredEncoding> parts, bool standardize) {
  const InferredEncoding& first = parts.front();
  const std::size_t nspecs = first.encoding.specs.size();
  // Parts without moments were not inferred from text (binary dataset caches): their encodings
  // are what they are, and must be one.
  const bool inferred = std::all_of(parts.begin(), parts.end(), [&](const InferredEncoding& p) {
    return p.moments.size() == p.encoding.specs.size();
  });
  if (!inferred) {
    for (const InferredEncoding& p : parts)
      RATEOPT_CHECK(p.encoding.to_json() == first.encoding.to_json(),
                    "{} and {} were encoded differently (a binary dataset keeps the encoding it "
                    "was converted with): convert every part with one model's encoding "
                    "(rateopt convert --model) or read the text files",
                    first.source, p.source);
    return first;
  }
  for (const InferredEncoding& p : parts) {
    RATEOPT_CHECK(p.encoding.specs.size() == nspecs && p.moments.size() == nspecs,
                  "{} has {} feature columns, but {} has {}: read them with the same header and "
                  "flags",
                  p.source, p.encoding.specs.size(), first.source, nspecs);
    for (std::size_t k = 0; k < nspecs; ++k)
      RATEOPT_CHECK(p.encoding.specs[k].source == first.encoding.specs[k].source,
                    "feature column {} is '{}' in {} but '{}' in {}", k + 1,
                    p.encoding.specs[k].source, p.source, first.encoding.specs[k].source,
                    first.source);
  }
  InferredEncoding out;
  out.source = first.source;
  out.encoding = first.encoding;
  out.encoding.specs.clear();
  out.encoding.feature_names.clear();
  std::size_t next = 0;
  for (std::size_t k = 0; k < nspecs; ++k) {
    // A column typed numeric where it has no value at all (count 0) yields to a categorical one.
    bool one_hot = false;
    const InferredEncoding* numeric_part = nullptr;
    for (const InferredEncoding& p : parts) {
      const FeatureSpec& s = p.encoding.specs[k];
      if (s.kind == FeatureSpec::Kind::kOneHot) one_hot = true;
      if (s.kind == FeatureSpec::Kind::kNumeric && p.moments[k].count > 0) numeric_part = &p;
    }
    FeatureSpec spec = first.encoding.specs[k];
    spec.first_feature = next;
    NumericMoments m;
    if (one_hot) {
      if (numeric_part != nullptr) {
        const InferredEncoding* categorical_part = nullptr;
        for (const InferredEncoding& p : parts)
          if (p.encoding.specs[k].kind == FeatureSpec::Kind::kOneHot) categorical_part = &p;
        throw InvalidArgument(fmt::format(
            "column '{}' is numeric in {} but categorical in {}: name it with --categorical {} "
            "(or fix the values that are not numbers)",
            spec.source, numeric_part->source, categorical_part->source, spec.source));
      }
      spec.kind = FeatureSpec::Kind::kOneHot;
      spec.levels.clear();
      std::set<std::string, std::less<>> seen;
      for (const InferredEncoding& p : parts)
        for (const std::string& level : p.encoding.specs[k].levels)
          if (seen.insert(level).second) spec.levels.push_back(level);
      spec.offset = 0;
      spec.scale = 1;
      spec.impute = 0;
      for (const std::string& level : spec.levels)
        out.encoding.feature_names.push_back(spec.source + "=" + level);
      next += spec.levels.size();
    } else {
      for (const InferredEncoding& p : parts) m = combine(m, p.moments[k]);
      const double sd = m.count > 0 ? std::sqrt(m.m2 / static_cast<double>(m.count)) : 0.0;
      if (standardize) {
        spec.offset = m.mean;
        spec.scale = sd > 0 ? sd : 1.0;
        spec.impute = spec.offset;
      } else {
        spec.impute = std::isfinite(m.mean) ? m.mean : 0.0;
      }
      out.encoding.feature_names.push_back(spec.source);
      next += 1;
    }
    out.encoding.specs.push_back(std::move(spec));
    out.moments.push_back(m);
  }
  out.encoding.num_features = next;
  return out;
}

InferredEncoding merge(std::span<const InferredEncoding> parts, bool standardize) {
  RATEOPT_CHECK(!parts.empty(), "merge_encodings needs at least one part");
  for (const InferredEncoding& p : parts) check_same_frame(parts.front(), p);
  const std::string& format = parts.front().encoding.format;
  if (format == "csv") return merge_csv(parts, standardize);
  if (format == "libsvm") {
    // Every file's features are indices; the widest file has the names of all of them.
    const InferredEncoding* widest = &parts.front();
    for (const InferredEncoding& p : parts)
      if (p.encoding.num_features > widest->encoding.num_features) widest = &p;
    return *widest;
  }
  for (const InferredEncoding& p : parts)
    RATEOPT_CHECK(p.encoding.to_json() == parts.front().encoding.to_json(),
                  "{} and {} declare different attributes; {} files can be read as one only "
                  "when they declare the same ones",
                  parts.front().source, p.source, format);
  return parts.front();
}

std::string to_json(const InferredEncoding& e) {
  nlohmann::json j;
  j["encoding"] = e.encoding.to_json();
  j["source"] = e.source;
  auto& m = j["moments"] = nlohmann::json::array();
  for (const NumericMoments& x : e.moments) m.push_back({x.count, x.mean, x.m2});
  return j.dump();
}

InferredEncoding from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  InferredEncoding e;
  e.encoding = Encoding::from_json(j.at("encoding").get<std::string>());
  e.source = j.at("source").get<std::string>();
  for (const auto& x : j.at("moments"))
    e.moments.push_back({x.at(0).get<std::size_t>(), x.at(1).get<double>(), x.at(2).get<double>()});
  return e;
}

}  // namespace

Encoding merge_encodings(std::span<const InferredEncoding> parts, bool standardize) {
  return merge(parts, standardize).encoding;
}

Encoding agree_encoding_over_ranks(std::span<const InferredEncoding> mine, bool standardize) {
  if (!is_distributed()) return merge(mine, standardize).encoding;
  // Every file's own inference, from every rank in rank order, merged in that order on every
  // rank: the same fold over the same files as one process reading them all, so the encoding is
  // the same bits whatever the rank count.
  nlohmann::json local = nlohmann::json::array();
  for (const InferredEncoding& e : mine) local.push_back(to_json(e));
  std::vector<InferredEncoding> all;
  for (const std::string& text : gather_over_ranks(local.dump()))
    for (const auto& e : nlohmann::json::parse(text))
      all.push_back(from_json(e.get<std::string>()));
  return merge(all, standardize).encoding;
}

}  // namespace rateopt
