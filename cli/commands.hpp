// One entry point per subcommand; each lives in cmd_<verb>.cpp. argv[0] is the verb.
#pragma once

namespace rateopt::cli {

int run_decide(int argc, const char* const* argv);
int run_eval(int argc, const char* const* argv);
int run_train(int argc, const char* const* argv);
int run_predict(int argc, const char* const* argv);
int run_info(int argc, const char* const* argv);
int run_convert(int argc, const char* const* argv);
int run_options(int argc, const char* const* argv);  // hidden: the training options
int run_version(int argc, const char* const* argv);

}  // namespace rateopt::cli
