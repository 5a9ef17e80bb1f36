// A tiny external program built against an installed or build-tree rateopt.
#include <cmath>
#include <cstdio>
#include <rateopt/rateopt.hpp>

int main() {
  rateopt::Confusion c{.tp = 2, .fp = 1, .fn = 1, .tn = 4};
  const double f1 = rateopt::fbeta_score(c, 1.0);
  std::printf("rateopt %s f1=%.4f\n", std::string(rateopt::version()).c_str(), f1);
  return std::abs(f1 - 2.0 / 3.0) < 1e-12 ? 0 : 1;
}
