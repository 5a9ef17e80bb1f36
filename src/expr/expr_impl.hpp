// Private: the expression parser and the table of rate names that are not confusion metrics.
//
// The grammar and the public types are in include/rateopt/expr.hpp; docs/expressions.md is the
// user-facing reference. Everything here is internal to src/expr/.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rateopt/expr.hpp"

namespace rateopt {

// ---- rate names ---------------------------------------------------------------------------------

// Where the value of a rate name comes from.
enum class RateFamily {
  kConfusion,   // a metric of the catalogue (metric_catalogue()), binary / unlabelled data
  kRanking,     // roc_auc, average_precision: from scores, binary data
  kMultilabel,  // instance_f1, micro_f1, ...: from label sets (macro_f1 also multiclass)
};

struct ResolvedName {
  std::string canonical;  // "roc_auc" for "auc"; catalogue names are kept as written
  RateFamily family = RateFamily::kConfusion;
  const MetricInfo* info = nullptr;  // kConfusion only
};

// nullopt when `name` is neither a catalogue metric nor one of the extra names.
[[nodiscard]] std::optional<ResolvedName> resolve_rate_name(std::string_view name);

// The extra (non-catalogue) names, aliases included, in documentation order.
[[nodiscard]] std::span<const std::string_view> ranking_rate_names() noexcept;
[[nodiscard]] std::span<const std::string_view> multilabel_rate_names() noexcept;
// Names valid on multiclass datasets ("accuracy", "error", "macro_f1").
[[nodiscard]] std::span<const std::string_view> multiclass_rate_names() noexcept;
// The functions of the language, sorted.
[[nodiscard]] std::span<const std::string_view> function_names() noexcept;

// "a, b, c".
[[nodiscard]] std::string join_names(std::span<const std::string_view> names);
// The candidate closest to `name` (case-insensitive edit distance) when it is close enough to be
// a plausible typo, else "".
[[nodiscard]] std::string closest_name(std::string_view name,
                                       std::span<const std::string_view> candidates);

// ---- parser -------------------------------------------------------------------------------------

// Recursive descent over the text of one expression. Tokens are lexed on demand from the current
// offset, so that a slice `[...]` can be scanned character by character with the same offsets.
// Every error is a ParseError with file "" , line 1 and the 1-based column of the offending byte;
// its message repeats the expression with a caret under that column.
class ExpressionParser {
 public:
  explicit ExpressionParser(std::string_view text) : text_(text) {}
  [[nodiscard]] Expression parse();

 private:
  enum class TokenKind {
    kEnd,
    kNumber,
    kIdentifier,
    kPlus,
    kMinus,
    kStar,
    kSlash,
    kLeftParen,
    kRightParen,
    kComma,
    kColon,
    kAt,
    kLeftBracket,
    kRelation,
  };
  struct Token {
    TokenKind kind = TokenKind::kEnd;
    std::size_t begin = 0;  // byte offsets into text_
    std::size_t end = 0;
    double number = 0;                    // kNumber
    Relation relation = Relation::kNone;  // kRelation
  };

  // Lexing.
  [[nodiscard]] std::size_t skip_space(std::size_t pos) const;
  [[nodiscard]] Token lex(std::size_t pos) const;
  [[nodiscard]] Token lex_number(std::size_t pos) const;
  const Token& peek();
  Token take();
  [[nodiscard]] std::string describe(const Token& token) const;

  // Grammar.
  std::size_t parse_expr();
  std::size_t parse_term();
  std::size_t parse_unary();
  std::size_t parse_primary();
  std::size_t parse_call(const Token& name);
  std::size_t parse_rate(const Token& name);
  Slice parse_slice(std::size_t open);  // `open` is the offset of '['; consumes through ']'

  std::size_t add_node(ExprNode node);
  std::size_t add_rate(RateRef rate);

  // Throws the ParseError for the byte at `offset` (text_.size() = end of input).
  [[noreturn]] void fail(std::size_t offset, const std::string& message) const;

  std::string_view text_;
  std::size_t pos_ = 0;             // offset after the last consumed token
  std::optional<Token> lookahead_;  // lexed from pos_
  std::size_t depth_ = 0;           // current nesting, bounded to protect the stack
  Expression out_;
  // The rates so far by a key of their fields (add_rate: linear in the rates, not quadratic).
  std::unordered_map<std::string, std::size_t> rate_index_;
};

}  // namespace rateopt
