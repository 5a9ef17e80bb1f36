// File: rateopt/rateopt.hpp
// Umbrella header: everything public in rateopt.
#pragma once

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"
#include "rateopt/version.hpp"
