// File: python/bindings/binding_util.hpp
// Array conversions shared by the translation units of the private module rateopt._core
// (_core.cpp, multilabel.cpp): every array parameter is py::array_t<T, c_style | forcecast>, so
// a C-contiguous array of the right dtype passes without a copy; spans are taken with the GIL
// held.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"

namespace py = pybind11;

namespace rateopt::python {

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;
using OptArray = std::optional<Array<double>>;

template <typename T>
std::span<const T> span_of(const Array<T>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}
template <typename T>
std::span<const T> span_of(const std::optional<Array<T>>& a) {
  if (!a) return {};
  return span_of(*a);
}

template <typename T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

inline py::array_t<std::int64_t> indices_to_numpy(const std::vector<std::size_t>& v) {
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(v.size()));
  auto* p = out.mutable_data();
  for (std::size_t i = 0; i < v.size(); ++i) p[i] = static_cast<std::int64_t>(v[i]);
  return out;
}

inline void require_ndim(const py::array& a, int ndim, const char* name) {
  if (a.ndim() != ndim)
    throw InvalidArgument(std::string(name) + " must be a " + std::to_string(ndim) +
                          "-D array, got " + std::to_string(a.ndim()) + " dimensions");
}

inline LabelSetsView label_sets(const Array<std::int64_t>& indptr,
                                const Array<std::int32_t>& indices, std::size_t m) {
  require_ndim(indptr, 1, "indptr");
  require_ndim(indices, 1, "indices");
  return LabelSetsView{span_of(indptr), span_of(indices), m};
}

// The multi-label joint models (multilabel.cpp): ClassifierChain, ExactFPlugin,
// fit_binary_relevance.
void bind_multilabel(py::module_& m);

}  // namespace rateopt::python
