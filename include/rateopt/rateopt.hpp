// File: rateopt/rateopt.hpp
// Umbrella header: everything public in rateopt (every header of include/rateopt; a test,
// tests/cpp/common/umbrella_header_test.cpp, fails when one is left out).
#pragma once

#include "rateopt/dataset.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/multilabel.hpp"
#include "rateopt/postprocess.hpp"
#include "rateopt/problem_file.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/sdca.hpp"
#include "rateopt/status.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"
#include "rateopt/version.hpp"
