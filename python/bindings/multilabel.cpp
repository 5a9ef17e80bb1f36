// File: python/bindings/multilabel.cpp
// rateopt._core's multi-label joint models (rateopt/multilabel.hpp): the probabilistic
// classifier chain, the exact F plug-in and binary relevance with the paper's regularisation
// protocol. Type conversion and the GIL only; the estimators are in
// python/src/rateopt/multilabel.py.
#include "rateopt/multilabel.hpp"

#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binding_util.hpp"

namespace rateopt::python {
namespace {

using namespace pybind11::literals;

MultilabelFitOptions fit_options(const py::dict& d) {
  MultilabelFitOptions o;
  for (const auto& [key, value] : d) {
    const auto k = key.cast<std::string>();
    if (k == "c") {
      o.c = value.cast<double>();
    } else if (k == "tune_c") {
      o.tune_c = value.cast<bool>();
    } else if (k == "c_grid") {
      o.c_grid = value.cast<std::vector<double>>();
    } else if (k == "cv_folds") {
      o.cv_folds = value.cast<int>();
    } else if (k == "seed") {
      o.seed = value.cast<std::uint64_t>();
    } else if (k == "tol") {
      o.tol = value.cast<double>();
    } else if (k == "max_iter") {
      o.max_iter = value.cast<int>();
    } else if (k == "n_threads") {
      o.n_threads = value.cast<int>();
    } else {
      throw InvalidArgument("unknown multi-label fit option '" + k + "'");
    }
  }
  return o;
}

py::list fits_list(const std::vector<BaseModelFit>& fits) {
  py::list out;
  for (const auto& f : fits)
    out.append(py::dict("c"_a = f.c, "cv_log_loss"_a = f.cv_log_loss,
                        "status"_a = std::string(to_string(f.status)),
                        "iterations"_a = f.iterations));
  return out;
}

py::tuple sets_to_numpy(const LabelSets& s) {
  return py::make_tuple(to_numpy(s.indptr), to_numpy(s.indices));
}

// (P, p0) of every row as an (n, m, m) array and an (n,) array.
py::tuple gfm_arrays(const std::vector<GfmInput>& rows, std::size_t m) {
  const std::size_t n = rows.size();
  py::array_t<double> p(
      {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(m)});
  py::array_t<double> p0(static_cast<py::ssize_t>(n));
  double* pp = p.mutable_data();
  double* pz = p0.mutable_data();
  for (std::size_t i = 0; i < n; ++i) {
    std::copy(rows[i].p.begin(), rows[i].p.end(), pp + i * m * m);
    pz[i] = rows[i].p_zero;
  }
  return py::make_tuple(p, p0);
}

// What ClassifierChain and ExactFPlugin share: fit (labels as CSR sets, the GIL released while
// fitting), JSON in and out, names, fits and pickling.
template <typename Model>
void bind_fit_and_io(py::class_<Model>& cls) {
  cls.def_static(
         "fit",
         [](const FeatureMatrix& x, const Array<std::int64_t>& indptr,
            const Array<std::int32_t>& indices, std::size_t num_labels, const OptArray& weights,
            const py::dict& options, const std::vector<std::string>& names) {
           const LabelSetsView y = label_sets(indptr, indices, num_labels);
           const MultilabelFitOptions o = fit_options(options);
           const auto w = span_of(weights);
           py::gil_scoped_release release;
           Model model = Model::fit(x, y, w, o);
           if (!names.empty()) model.names = names;
           model.validate();
           return model;
         },
         "X"_a, "indptr"_a, "indices"_a, "num_labels"_a, "weights"_a, "options"_a, "names"_a)
      .def_static(
          "from_json",
          [](const std::string& json, const std::string& name) {
            return Model::from_json(json, name);
          },
          "json"_a, "name"_a = "<string>")
      .def_static("load", &Model::load, "path"_a)
      .def("to_json", &Model::to_json)
      .def("save", &Model::save, "path"_a)
      .def_readwrite("names", &Model::names)
      .def_property_readonly("num_labels", &Model::num_labels)
      .def_property_readonly("fits", [](const Model& c) { return fits_list(c.fits); })
      .def(py::pickle([](const Model& c) { return c.to_json(); },
                      [](const std::string& json) { return Model::from_json(json); }));
}

}  // namespace

void bind_multilabel(py::module_& m) {
  m.def("default_c_grid", &default_c_grid);

  py::class_<ClassifierChain> chain(m, "ClassifierChain");
  bind_fit_and_io(chain);
  chain
      .def(
          "sample",
          [](const ClassifierChain& c, const FeatureMatrix& x, std::size_t n_samples,
             std::uint64_t seed, int n_threads) {
            LabelSets s;
            {
              py::gil_scoped_release release;
              s = c.sample_rows(x, 0, x.rows(), n_samples, seed, n_threads);
            }
            return sets_to_numpy(s);
          },
          "X"_a, "n_samples"_a, "seed"_a, "n_threads"_a = 0,
          "Ancestral samples of every row, row after row: (indptr, indices) of n_samples * rows "
          "label sets.")
      .def(
          "joint_mode",
          [](const ClassifierChain& c, const FeatureMatrix& x, std::size_t max_expanded,
             int n_threads) {
            const std::size_t n = x.rows();
            std::vector<JointModeResult> res;
            {
              py::gil_scoped_release release;
              res = c.joint_mode_rows(x, 0, n, max_expanded, n_threads);
            }
            LabelSets s;
            s.num_labels = c.num_labels();
            py::array_t<double> prob(static_cast<py::ssize_t>(n));
            py::array_t<bool> exact(static_cast<py::ssize_t>(n));
            for (std::size_t i = 0; i < n; ++i) {
              s.indices.insert(s.indices.end(), res[i].labels.begin(), res[i].labels.end());
              s.indptr.push_back(static_cast<std::int64_t>(s.indices.size()));
              prob.mutable_data()[i] = res[i].probability;
              exact.mutable_data()[i] = res[i].status == SearchStatus::kExact;
            }
            return py::make_tuple(to_numpy(s.indptr), to_numpy(s.indices), prob, exact);
          },
          "X"_a, "max_expanded"_a = 1000000, "n_threads"_a = 0,
          "Joint modes by uniform-cost search: (indptr, indices, probability, exact) per row.")
      .def(
          "exact_joint",
          [](const ClassifierChain& c, const FeatureMatrix& x, int n_threads) {
            std::vector<GfmInput> rows;
            {
              py::gil_scoped_release release;
              rows = c.exact_joint_rows(x, 0, x.rows(), n_threads);
            }
            return gfm_arrays(rows, c.num_labels());
          },
          "X"_a, "n_threads"_a = 0)
      .def(
          "joint_probabilities",
          [](const ClassifierChain& c, const FeatureMatrix& x, std::size_t i) {
            if (i >= x.rows())
              throw InvalidArgument("row " + std::to_string(i) + " out of range for " +
                                    std::to_string(x.rows()) + " rows");
            return to_numpy(c.joint_probabilities(x, i));
          },
          "X"_a, "row"_a);

  py::class_<ExactFPlugin> efp(m, "ExactFPlugin");
  bind_fit_and_io(efp);
  efp.def(
      "predict_gfm",
      [](const ExactFPlugin& e, const FeatureMatrix& x, bool consistent, int n_threads) {
        std::vector<GfmInput> rows;
        {
          py::gil_scoped_release release;
          rows = e.predict_gfm_rows(x, 0, x.rows(), consistent, n_threads);
        }
        return gfm_arrays(rows, e.num_labels());
      },
      "X"_a, "consistent"_a = false, "n_threads"_a = 0,
      "(P, p0) per row: (n, m, m) and (n,); raw estimates unless consistent.");

  m.def(
      "fit_binary_relevance",
      [](const FeatureMatrix& x, const Array<std::int64_t>& indptr,
         const Array<std::int32_t>& indices, std::size_t num_labels, const OptArray& weights,
         const py::dict& options) {
        const LabelSetsView y = label_sets(indptr, indices, num_labels);
        const MultilabelFitOptions o = fit_options(options);
        const auto w = span_of(weights);
        std::vector<BaseModelFit> fits;
        OneVsRest model;
        {
          py::gil_scoped_release release;
          model = fit_binary_relevance(x, y, w, o, &fits);
        }
        return py::make_tuple(std::move(model), fits_list(fits));
      },
      "X"_a, "indptr"_a, "indices"_a, "num_labels"_a, "weights"_a, "options"_a);
}

}  // namespace rateopt::python
