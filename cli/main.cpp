// rateopt command-line tool: a thin dispatcher over one file per subcommand (STYLE R10).
// Exit codes: 0 success, 2 usage or input errors (bad flags, malformed files, unknown names),
// 1 other runtime errors (including an output that cannot be written). Messages go to stderr.
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/io.hpp"
#include "rateopt/version.hpp"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, const char* const* argv);
  bool hidden = false;       // not in the usage list
  bool distributed = false;  // runs over several MPI ranks (docs/scale.md)
};

constexpr std::array kCommands{
    Command{"eval", "exact rates, metrics and constraints of predictions or a model on data",
            rateopt::cli::run_eval, false, true},
    Command{"decide", "Bayes-optimal set predictions for an expected metric (F1, Jaccard, ...)",
            rateopt::cli::run_decide},
    Command{"train",
            "fit a model: logistic regression, a classifier under rate constraints "
            "(--minimize/--constraint), or a multi-label joint model (--multilabel-model)",
            rateopt::cli::run_train, false, true},
    Command{"predict",
            "apply a saved model to a data file (labels, probabilities, or joint distributions "
            "for decide)",
            rateopt::cli::run_predict, false, true},
    Command{"info", "describe a data file: rows, features, labels, columns",
            rateopt::cli::run_info},
    Command{"convert",
            "parse a data file once into a binary dataset that every command reads without "
            "parsing",
            rateopt::cli::run_convert, false, true},
    Command{"version", "print the version", rateopt::cli::run_version},
    Command{"options", "the rate-training options (--markdown: docs/options.md)",
            rateopt::cli::run_options, true},
};

void print_usage() {
  fmt::print("rateopt {}: classification under non-decomposable metrics and rate constraints\n\n",
             rateopt::version());
  fmt::print("Usage: rateopt <command> [options]   (rateopt <command> --help for details)\n\n");
  fmt::print("Commands:\n");
  for (const auto& c : kCommands)
    if (!c.hidden) fmt::print("  {:<9} {}\n", c.name, c.summary);
}

// SIGINT, SIGTERM and the other terminating signals: remove the temporary file of an output
// being written (its target stays as it was), then die of the signal as the default action
// would.
extern "C" void on_terminating_signal(int sig) {
  rateopt::remove_pending_temp_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

namespace {

// Whether the command may run XGBoost on OpenMP threads: train, predict and eval (boosted trees
// fitted or scored), unless their last --threads is 1 (XGBoost then runs on the calling thread
// alone, and no OpenMP thread waits).
bool may_start_openmp_threads(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view verb = argv[1];
  if (verb != "train" && verb != "predict" && verb != "eval") return false;
  std::string_view threads;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = argv[i + 1];
    if (a.starts_with("--threads=")) threads = a.substr(10);
  }
  return threads != "1";
}

// XGBoost's OpenMP threads (libgomp) spin while they wait, by default: on a busy machine two of
// them took 3x one's time (Adult, --learner gbdt, load 5 on 2 cores), against the project's rule
// that threads never make a run slower. libgomp reads OMP_WAIT_POLICY when it is loaded, before
// main, so the tool starts itself again with it set to passive (then 1.1x one thread's time on
// the same busy machine): only in a build with XGBoost, for a command that may start its threads
// (may_start_openmp_threads: the second start doubled the 9 ms it takes to start at all),
// unless the user set it, and not under mpirun (whose launcher owns the processes). If the new
// start fails, it goes on as it is.
void make_openmp_passive(int argc, char** argv) {
#ifdef __linux__
  // No thread runs yet: getenv and setenv are safe here.
  // (OMP_DYNAMIC=true, which crashes XGBoost 1.7, is turned off around its calls by the
  // library: src/learners/gbdt.cpp.)
  if (!rateopt::gbdt_available() || !may_start_openmp_threads(argc, argv) ||
      std::getenv("OMP_WAIT_POLICY") != nullptr ||       // NOLINT(concurrency-mt-unsafe)
      std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||  // NOLINT(concurrency-mt-unsafe)
      std::getenv("PMI_RANK") != nullptr)                // NOLINT(concurrency-mt-unsafe)
    return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);  // NOLINT(concurrency-mt-unsafe)
  execv("/proc/self/exe", argv);
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using rateopt::cli::kExitRuntime;
  using rateopt::cli::kExitUsage;
  make_openmp_passive(argc, argv);
  // Every signal whose default action ends the process (but KILL and STOP, which cannot be
  // caught, and PIPE: a closed stdout is a write error, exit 1).
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU,
                        SIGXFSZ, SIGVTALRM, SIGPROF})
    std::signal(sig, on_terminating_signal);
#ifdef __GLIBC__
  // Arrays of 1 MiB or more (per-row vectors, file parts) get pages of their own, given back to
  // the system when freed. glibc's default raises this threshold up to 32 MiB as large blocks are
  // freed, after which per-file and per-round vectors land in the heap and freeing them leaves
  // holes the peak memory keeps (measured: about 80 MB over 10^7 rows read from four files).
  // Called before any thread starts.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // NOLINT(concurrency-mt-unsafe)
#endif
  if (argc < 2) {
    print_usage();
    return kExitUsage;
  }
  const std::string_view verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    print_usage();
    return 0;
  }
  if (verb == "--version") return rateopt::cli::run_version(argc - 1, argv + 1);
  for (const auto& c : kCommands) {
    if (c.name != verb) continue;
    // Under mpirun: one MPI group for the command; an error on any rank ends every rank with
    // that rank's exit code (MPI_Abort), so none waits forever for the others.
    std::optional<rateopt::MpiSession> mpi;
    auto fail = [&](int code) {
      if (rateopt::is_distributed()) rateopt::process_group().abort(code);
      return code;
    };
    try {
      if (rateopt::launched_by_mpi()) mpi.emplace(&argc, &argv);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: started by mpirun, but {}\n", e.what());
      return kExitUsage;
    }
    if (rateopt::is_distributed() && !c.distributed) {
      if (rateopt::process_group().rank() == 0)
        fmt::print(stderr,
                   "error: over several ranks (mpirun -n {}) only `rateopt eval`, `train`, "
                   "`predict` and `convert` are distributed so far; run `rateopt {}` as one "
                   "process\n",
                   rateopt::process_group().size(), verb);
      return fail(kExitUsage);
    }
    const std::string where = rateopt::is_distributed()
                                  ? fmt::format("rank {} of {}: ", rateopt::process_group().rank(),
                                                rateopt::process_group().size())
                                  : "";
    // The one catch-all of the program (STYLE R6 tier 3).
    try {
      const std::vector<std::string> args(argv + 2, argv + argc);
      rateopt::cli::check_outputs_are_own_files(args);
      const int rc = c.run(argc - 1, argv + 1);
      // Everything printed goes through stdio's stdout (std::cout is synced with it): a full disk
      // or a closed pipe shows here, and the run fails instead of losing its output silently.
      std::cout.flush();
      if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
        fmt::print(stderr, "error: [rateopt.write_error] cannot write to standard output: {}\n",
                   std::generic_category().message(errno));
        return fail(kExitRuntime);
      }
      return rc;
    } catch (const rateopt::ParseError& e) {
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitUsage);
    } catch (const rateopt::NotFound& e) {
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitUsage);
    } catch (const rateopt::WriteError& e) {  // an output could not be written: not bad input
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitRuntime);
    } catch (const rateopt::IoError& e) {
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitUsage);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitUsage);
    } catch (const std::bad_alloc&) {
      fmt::print(stderr,
                 "error: {}[rateopt.out_of_memory] not enough memory for this run: the input "
                 "(rows, features, groups) or an option that sizes it (such as --n-features) "
                 "asks for more than this machine could give\n",
                 where);
      return fail(kExitRuntime);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}{}\n", where, e.what());
      return fail(kExitRuntime);
    }
  }
  fmt::print(stderr, "error: unknown command '{}'\n\n", verb);
  print_usage();
  return kExitUsage;
}
