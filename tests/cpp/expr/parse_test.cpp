// Expression::parse: structure, leaves, deduplication, precedence, relations, and errors.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace rateopt {
namespace {

// The subtree of `node` as an S-expression; leaves are printed with RateRef::to_string().
std::string render(const Expression& e, std::size_t node) {
  const ExprNode& n = e.nodes().at(node);
  const auto arg = [&](std::size_t k) { return render(e, n.args.at(k)); };
  switch (n.op) {
    case NodeOp::kConstant:
      return fmt::format("{}", n.value);
    case NodeOp::kRate:
      return e.rates().at(n.rate).to_string();
    case NodeOp::kNeg:
      return fmt::format("(neg {})", arg(0));
    case NodeOp::kAdd:
      return fmt::format("(+ {} {})", arg(0), arg(1));
    case NodeOp::kSub:
      return fmt::format("(- {} {})", arg(0), arg(1));
    case NodeOp::kMul:
      return fmt::format("(* {} {})", arg(0), arg(1));
    case NodeOp::kDiv:
      return fmt::format("(/ {} {})", arg(0), arg(1));
    case NodeOp::kCall: {
      std::vector<std::string> args;
      for (std::size_t k = 0; k < n.args.size(); ++k) args.push_back(arg(k));
      return fmt::format("({} {})", n.function, fmt::join(args, " "));
    }
  }
  return "?";
}

std::string render(const Expression& e) {
  return render(e, e.lhs_root());
}

// Nodes must be in topological order: every argument precedes its node.
void expect_topological(const Expression& e) {
  for (std::size_t i = 0; i < e.nodes().size(); ++i)
    for (std::size_t a : e.nodes()[i].args) EXPECT_LT(a, i) << e.text();
}

double eval_constant(const std::string& text) {
  const Expression e = Expression::parse(text);
  EXPECT_TRUE(e.rates().empty());
  return e.value({});
}

TEST(ExprParse, SingleRate) {
  const Expression e = Expression::parse("error");
  ASSERT_EQ(e.rates().size(), 1u);
  EXPECT_EQ(e.rates()[0].metric, "error");
  EXPECT_TRUE(std::isnan(e.rates()[0].param));
  EXPECT_EQ(e.rates()[0].dataset, "");
  EXPECT_TRUE(e.rates()[0].slice.empty());
  ASSERT_EQ(e.nodes().size(), 1u);
  EXPECT_EQ(e.nodes()[0].op, NodeOp::kRate);
  EXPECT_EQ(e.nodes()[0].rate, 0u);
  EXPECT_FALSE(e.is_constraint());
  EXPECT_EQ(e.relation(), Relation::kNone);
  EXPECT_EQ(e.text(), "error");
}

TEST(ExprParse, HeaderAndIssueExamples) {
  struct Case {
    const char* text;
    const char* lhs;
    const char* rhs;  // "" when not a constraint
    std::size_t rates;
  };
  const Case cases[] = {
      {"error", "error", "", 1},
      {"tpr[sex=Female] - tpr[sex=Male]", "(- tpr[sex=Female] tpr[sex=Male])", "", 2},
      {"ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "ppr[sex=Female]", "(* 0.8 ppr[sex=Male])", 2},
      {"precision[race=Black] / precision[race=White]",
       "(/ precision[race=Black] precision[race=White])", "", 2},
      {"kld[sex=Female]", "kld[sex=Female]", "", 1},
      {"fbeta:2[label=1]", "fbeta:2[label=1]", "", 1},
      {"churn@unlabeled", "churn@unlabeled", "", 1},
      {"max(fpr[race=Black], fpr[race=White])", "(max fpr[race=Black] fpr[race=White])", "", 2},
      {"tpr[race=\"Asian-Pac-Islander\"]", "tpr[race=Asian-Pac-Islander]", "", 1},
      {"tpr[sex=Female] - tpr[sex=Male] <= 0.02", "(- tpr[sex=Female] tpr[sex=Male])", "0.02", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Expression e = Expression::parse(c.text);
    EXPECT_EQ(render(e), c.lhs);
    EXPECT_EQ(e.is_constraint(), std::string(c.rhs) != "");
    if (e.is_constraint()) {
      EXPECT_EQ(render(e, e.rhs_root()), c.rhs);
    }
    EXPECT_EQ(e.rates().size(), c.rates);
    expect_topological(e);
  }
}

TEST(ExprParse, LeafFields) {
  const Expression e = Expression::parse("fbeta:0.5@valid[sex=Female, race='Amer Indian']");
  ASSERT_EQ(e.rates().size(), 1u);
  const RateRef& r = e.rates()[0];
  EXPECT_EQ(r.metric, "fbeta");
  EXPECT_DOUBLE_EQ(r.param, 0.5);
  EXPECT_EQ(r.dataset, "valid");
  ASSERT_EQ(r.slice.conditions.size(), 2u);
  EXPECT_EQ(r.slice.conditions[0].column, "sex");
  EXPECT_EQ(r.slice.conditions[0].value, "Female");
  EXPECT_EQ(r.slice.conditions[1].column, "race");
  EXPECT_EQ(r.slice.conditions[1].value, "Amer Indian");

  const Expression q = Expression::parse("tpr[race=\"Asian-Pac-Islander\" & age = 30]");
  ASSERT_EQ(q.rates()[0].slice.conditions.size(), 2u);
  EXPECT_EQ(q.rates()[0].slice.conditions[0].value, "Asian-Pac-Islander");
  EXPECT_EQ(q.rates()[0].slice.conditions[1].column, "age");
  EXPECT_EQ(q.rates()[0].slice.conditions[1].value, "30");

  const Expression w = Expression::parse("churn@unlabeled");
  EXPECT_EQ(w.rates()[0].metric, "churn");
  EXPECT_EQ(w.rates()[0].dataset, "unlabeled");
  EXPECT_TRUE(w.rates()[0].slice.empty());
}

TEST(ExprParse, SliceMatchesSliceParse) {
  // The inside of [...] follows the rules of Slice::parse exactly.
  const char* slices[] = {
      "sex=Female",
      "sex=Female,race=White",
      " sex = Female & race = White ",
      "race=\"Asian-Pac-Islander\"",
      "race='Amer Indian',label=1",
      "f73=1",
      "note=\"a]b\"",
      "note=\"say \\\"hi\\\"\"",
  };
  for (const char* s : slices) {
    SCOPED_TRACE(s);
    const Expression e = Expression::parse(fmt::format("tpr[{}]", s));
    EXPECT_EQ(e.rates()[0].slice, Slice::parse(s));
    // Canonical text: as Slice::to_string, which needs no extra quotes without brackets.
    if (std::string(s).find_first_of("[]") == std::string::npos) {
      EXPECT_EQ(e.rates()[0].to_string(), "tpr[" + Slice::parse(s).to_string() + "]");
    }
  }
}

TEST(ExprParse, RateRefToStringRoundTrips) {
  const char* texts[] = {"error",
                         "fbeta:2@valid[sex=Female]",
                         "fbeta:0.25[label=1]",
                         "tpr[race=\"Asian-Pac-Islander\",sex=Male]",
                         "ppr@unlabeled[race=\"Amer Indian\"]",
                         "precision[note=\"a]b\"]",
                         "tpr[\"odd column\"=\"x\\\"y\",k='a,b']"};
  for (const char* t : texts) {
    SCOPED_TRACE(t);
    const Expression e = Expression::parse(t);
    ASSERT_EQ(e.rates().size(), 1u);
    const Expression again = Expression::parse(e.rates()[0].to_string());
    ASSERT_EQ(again.rates().size(), 1u);
    EXPECT_EQ(again.rates()[0], e.rates()[0]);
  }
  EXPECT_EQ(Expression::parse("fbeta:2@valid[sex=Female]").rates()[0].to_string(),
            "fbeta:2@valid[sex=Female]");
}

TEST(ExprParse, DeduplicatesLeaves) {
  const Expression e = Expression::parse(
      "tpr[sex=F] - tpr[sex=F] + tpr@d[sex=F] + tpr[sex=M] + fbeta:2 + fbeta:2.0 + fbeta + "
      "auc + roc_auc + tpr [ sex = F ]");
  const std::vector<std::string> expected = {"tpr[sex=F]", "tpr@d[sex=F]", "tpr[sex=M]",
                                             "fbeta:2",    "fbeta",        "roc_auc"};
  ASSERT_EQ(e.rates().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(e.rates()[i].to_string(), expected[i]);
  // Every occurrence is its own node pointing at the shared leaf.
  std::vector<std::size_t> leaves;
  for (const ExprNode& n : e.nodes())
    if (n.op == NodeOp::kRate) leaves.push_back(n.rate);
  EXPECT_EQ(leaves, (std::vector<std::size_t>{0, 0, 1, 2, 3, 3, 4, 5, 5, 0}));
}

TEST(ExprParse, AliasesAreCanonical) {
  const Expression e = Expression::parse("auc + ap + hamming + average_precision");
  ASSERT_EQ(e.rates().size(), 3u);
  EXPECT_EQ(e.rates()[0].metric, "roc_auc");
  EXPECT_EQ(e.rates()[1].metric, "average_precision");
  EXPECT_EQ(e.rates()[2].metric, "hamming_loss");
  // Catalogue aliases are metrics of their own and are kept as written.
  EXPECT_EQ(Expression::parse("recall").rates()[0].metric, "recall");
  for (const char* name : {"instance_f1", "instance_jaccard", "micro_f1", "macro_f1",
                           "hamming_loss", "subset_accuracy", "roc_auc", "average_precision"})
    EXPECT_EQ(Expression::parse(name).rates()[0].metric, name);
}

TEST(ExprParse, PrecedenceAndAssociativity) {
  struct Case {
    const char* text;
    const char* tree;
    double value;
  };
  const Case cases[] = {
      {"1-2-3", "(- (- 1 2) 3)", -4},
      {"8/4/2", "(/ (/ 8 4) 2)", 1},
      {"-2*3", "(* (neg 2) 3)", -6},
      {"2*-3", "(* 2 (neg 3))", -6},
      {"1+2*3", "(+ 1 (* 2 3))", 7},
      {"(1+2)*3", "(* (+ 1 2) 3)", 9},
      {"2*3-4/8", "(- (* 2 3) (/ 4 8))", 5.5},
      {"--2", "(neg (neg 2))", 2},
      {"-(1-3)", "(neg (- 1 3))", 2},
      {"1 - -1", "(- 1 (neg 1))", 2},
      {"2*(3+4)*5", "(* (* 2 (+ 3 4)) 5)", 70},
      {"pow(2, 3) - max(1, 5, 2) + min(4)", "(+ (- (pow 2 3) (max 1 5 2)) (min 4))", 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Expression e = Expression::parse(c.text);
    EXPECT_EQ(render(e), c.tree);
    EXPECT_DOUBLE_EQ(e.value({}), c.value);
    expect_topological(e);
  }
}

TEST(ExprParse, Numbers) {
  EXPECT_DOUBLE_EQ(eval_constant("0.8"), 0.8);
  EXPECT_DOUBLE_EQ(eval_constant("1e-3"), 1e-3);
  EXPECT_DOUBLE_EQ(eval_constant(".5"), 0.5);
  EXPECT_DOUBLE_EQ(eval_constant("2."), 2.0);
  EXPECT_DOUBLE_EQ(eval_constant("1E+2"), 100.0);
  EXPECT_DOUBLE_EQ(eval_constant("007"), 7.0);
  EXPECT_DOUBLE_EQ(eval_constant("1e-3*1e3"), 1.0);
}

TEST(ExprParse, Relations) {
  struct Case {
    const char* text;
    Relation relation;
  };
  const Case cases[] = {
      {"error <= 0.1", Relation::kLessEqual},    {"error < 0.1", Relation::kLessEqual},
      {"error >= 0.1", Relation::kGreaterEqual}, {"error > 0.1", Relation::kGreaterEqual},
      {"error == 0.1", Relation::kEqual},        {"error = 0.1", Relation::kEqual},
      {"0.1<=error", Relation::kLessEqual},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Expression e = Expression::parse(c.text);
    EXPECT_TRUE(e.is_constraint());
    EXPECT_EQ(e.relation(), c.relation);
    EXPECT_NE(e.lhs_root(), e.rhs_root());
  }
}

TEST(ExprParse, PositionsAreByteOffsets) {
  const Expression e = Expression::parse("tpr - 0.5 * max(fpr, 1)");
  // Nodes: tpr, 0.5, fpr, 1, max, *, -.
  ASSERT_EQ(e.nodes().size(), 7u);
  EXPECT_EQ(e.nodes()[0].position, 0u);   // tpr
  EXPECT_EQ(e.nodes()[1].position, 6u);   // 0.5
  EXPECT_EQ(e.nodes()[2].position, 16u);  // fpr
  EXPECT_EQ(e.nodes()[4].position, 12u);  // max
  EXPECT_EQ(e.nodes()[5].position, 10u);  // *
  EXPECT_EQ(e.nodes()[6].position, 4u);   // -
  EXPECT_EQ(e.lhs_root(), 6u);
}

TEST(ExprParse, WhitespaceIsFree) {
  const Expression a = Expression::parse("  fbeta : 2 @ valid [ sex = F ]\t-\n0.5<=1 ");
  const Expression b = Expression::parse("fbeta:2@valid[sex=F]-0.5<=1");
  EXPECT_EQ(render(a), render(b));
  EXPECT_EQ(render(a, a.rhs_root()), render(b, b.rhs_root()));
  EXPECT_EQ(a.rates(), b.rates());
}

TEST(ExprParse, FunctionsAndNesting) {
  const Expression e = Expression::parse("pow(tpr, 2) + sqrt(abs(log(exp(fpr))))");
  EXPECT_EQ(render(e), "(+ (pow tpr 2) (sqrt (abs (log (exp fpr)))))");
  // Nesting well inside the depth limit parses.
  const std::string deep = std::string(150, '(') + "tpr" + std::string(150, ')');
  EXPECT_EQ(render(Expression::parse(deep)), "tpr");
}

// ---- malformed expressions
// ------------------------------------------------------------------------

struct BadCase {
  std::string text;
  std::size_t column;   // 1-based
  const char* message;  // substring of detail()
};

TEST(ExprParseErrors, ColumnsAndMessages) {
  const BadCase cases[] = {
      // empty input, trailing garbage, unbalanced parentheses
      {"", 1, "empty expression"},
      {"   ", 4, "empty expression"},
      {"tpr fpr", 5, "unexpected 'fpr' after a complete expression"},
      {"tpr + 1)", 8, "unbalanced ')'"},
      {"(tpr + 1", 9, "expected ')' to close the '(' at column 1, found end of input"},
      {"((tpr)", 7, "expected ')' to close the '(' at column 1"},
      {"tpr[sex=F]:2", 11, "unexpected ':'"},
      {"tpr ! fpr", 5, "unexpected character '!'"},
      {"tpr != fpr", 5, "'!=' is not a relation"},
      {"tpr]", 4, "unexpected ']'"},
      // missing operands
      {"tpr +", 6, "expected an operand"},
      {"tpr + * fpr", 7,
       "expected an operand (a number, a rate, a function call or '('), found '*'"},
      {"* tpr", 1, "expected an operand"},
      {"tpr <=", 7, "found end of input"},
      {"<= 0.1", 1, "expected an operand"},
      {"()", 2, "found ')'"},
      // two relations
      {"tpr <= fpr <= 0.1", 12, "second relation"},
      {"0 <= tpr == 1", 10, "second relation"},
      // bad numbers
      {"1.2.3 + tpr", 4, "malformed number '1.2.3'"},
      {"1e + tpr", 2, "malformed number '1e'"},
      {"tpr - 2x", 8, "malformed number '2x'"},
      {"0x10", 2, "malformed number '0x10'"},
      {"1e999", 1, "out of the range"},
      // slices
      {"tpr[]", 5, "empty slice"},
      {"tpr[ ]", 6, "empty slice"},
      {"tpr[sex]", 8, "expected '=' after the column name 'sex'"},
      {"tpr[sex=F", 10, "missing ']' to close the slice opened at column 4"},
      {"tpr[sex=\"F]", 9, "unbalanced quote"},
      {"tpr[sex=F,]", 11, "expected a column name"},
      {"tpr[=F]", 5, "expected a column name"},
      {"fpr + tpr[sex=F race=W]", 21, "'='"},
      // datasets
      {"tpr@[x]", 5, "expected a dataset name"},
      {"tpr@", 5, "found end of input"},
      {"tpr@1", 5, "expected a dataset name"},
      // names and functions
      {"tprr", 1, "unknown rate 'tprr' (did you mean 'tpr'?)"},
      {"tpr + precison[sex=F]", 7, "did you mean 'precision'"},
      {"qwertyuiop", 1, "rates are the metrics"},
      {"foo(tpr)", 1, "unknown function 'foo'; functions are abs, exp, log, max, min, pow, sqrt"},
      {"mni(tpr, fpr)", 1, "did you mean 'min'"},
      {"min", 1, "'min' is a function"},
      {"tpr(sex)", 1, "'tpr' is a rate, not a function"},
      {"pow(tpr)", 8, "pow() takes 2 arguments, got 1"},
      {"pow(tpr, 2, 3)", 11, "pow() takes 2 arguments, got 3"},
      {"sqrt(tpr, fpr)", 9, "sqrt() takes 1 argument, got 2"},
      {"min()", 5, "min() takes at least 1 argument, got none"},
      {"abs(tpr", 8, "expected ',' or ')'"},
      // parameters
      {"fbeta:0", 7, "must be a finite number > 0"},
      {"fbeta:", 7, "expected a number after 'fbeta:'"},
      {"fbeta:x", 7, "expected a number after 'fbeta:'"},
      {"fbeta:-2", 7, "expected a number after 'fbeta:', found '-'"},
      {"tpr:2", 4, "'tpr' takes no parameter"},
      {"auc:2", 4, "'auc' takes no parameter"},
      // depth limit
      {std::string(1000, '(') + "1" + std::string(1000, ')'), 201, "nested more than 200"},
      {std::string(1000, '-') + "1", 201, "nested more than 200"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text.size() > 60 ? c.text.substr(0, 60) + "..." : c.text);
    try {
      (void)Expression::parse(c.text);
      ADD_FAILURE() << "no ParseError";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "");
      EXPECT_EQ(e.line(), 1u);
      EXPECT_EQ(e.column(), c.column) << e.what();
      EXPECT_NE(e.detail().find(c.message), std::string::npos) << e.what();
      EXPECT_EQ(e.id(), "rateopt.parse_error");
    }
  }
}

TEST(ExprParseErrors, CaretUnderTheColumn) {
  try {
    (void)Expression::parse("tpr[sex=F] -\tprecison");
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), 14u);
    // The expression (tab shown as a space) and a caret under column 14.
    EXPECT_NE(e.detail().find("\n  tpr[sex=F] - precison\n               ^"), std::string::npos)
        << e.detail();
    EXPECT_NE(std::string(e.what()).find("<input>:1:14"), std::string::npos) << e.what();
  }
  try {
    (void)Expression::parse("tpr +");
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    // End of input: the caret sits just after the last character.
    EXPECT_NE(e.detail().find("\n  tpr +\n       ^"), std::string::npos) << e.detail();
  }
}

TEST(ExprParseErrors, UnknownNameListsTheNames) {
  try {
    (void)Expression::parse("speling");
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    const std::string d = e.detail();
    for (const char* name : {"tpr", "fbeta", "churn", "roc_auc", "average_precision", "instance_f1",
                             "subset_accuracy"})
      EXPECT_NE(d.find(name), std::string::npos) << name;
    EXPECT_EQ(d.find("did you mean"), std::string::npos);
  }
}

TEST(ExprParseErrors, MutatedInputsFailCleanly) {
  // Random edits of valid expressions either parse or throw ParseError with a column inside the
  // text (or one past its end); nothing else escapes. Seed fixed (STYLE R12).
  const std::uint32_t seed = 7321;
  std::printf("ExprParseErrors.MutatedInputsFailCleanly seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::string valid[] = {
      "tpr[sex=Female] - tpr[sex=Male] <= 0.02",
      "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
      "max(fpr[race=\"Asian-Pac-Islander\"], fpr@valid[race='a,b']) / pow(fbeta:2, 1e-3)",
      "-(abs(auc - ap) + sqrt(log(exp(.5))))",
  };
  const std::string alphabet = "()[]@:,&=<>!+-*/.e0123456789\"' abtprfx_";
  int parsed = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string text = valid[static_cast<std::size_t>(trial) % std::size(valid)];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(at, 1, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    try {
      const Expression e = Expression::parse(text);
      expect_topological(e);
      for (const ExprNode& n : e.nodes()) {
        EXPECT_LT(n.position, text.size()) << text;
        if (n.op == NodeOp::kRate) {
          EXPECT_LT(n.rate, e.rates().size()) << text;
        }
      }
      ++parsed;
    } catch (const ParseError& e) {
      EXPECT_GE(e.column(), 1u) << text;
      EXPECT_LE(e.column(), text.size() + 1) << text;
      EXPECT_NE(e.detail().find('^'), std::string::npos) << text;
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace rateopt
