// rateopt options: the rate-training options of `rateopt train` (the table of
// rateopt/train_options.hpp). Hidden from the command list; `--markdown` writes docs/options.md,
// which CI regenerates and diffs (scripts/test.sh).
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/train_options.hpp"

namespace rateopt::cli {

int run_options(int argc, const char* const* argv) {
  CLI::App app{
      "List the rate-training options: key (Python keyword, --problem file key, model options "
      "JSON), flag of rateopt train, default and check.",
      "rateopt options"};
  bool markdown = false;
  app.add_flag("--markdown", markdown,
               "Print docs/options.md (the reference generated from the table)");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (markdown) {
    fmt::print("{}", train_options_markdown());
    return 0;
  }
  for (const TrainOptionInfo& i : train_option_table()) {
    const std::string check = i.check_text();
    fmt::print("{:<18} {:<20} {:<10} default {:<8} {}\n", i.key, i.flag, to_string(i.type),
               i.default_text, check.empty() ? "" : "(" + check + ")");
  }
  return 0;
}

}  // namespace rateopt::cli
