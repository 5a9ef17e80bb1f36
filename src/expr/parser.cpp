// Expression::parse: a recursive-descent parser over lazily lexed tokens (grammar in
// rateopt/expr.hpp, reference in docs/expressions.md).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "expr/expr_impl.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace rateopt {

namespace {

// Deeper nesting than this is rejected instead of risking the stack (fuzzed input).
constexpr std::size_t kMaxDepth = 200;

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
bool is_identifier_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_identifier_char(char c) noexcept {
  return is_identifier_start(c) || is_digit(c);
}

// "'x'" for printable characters, "byte 0x07" otherwise.
std::string quote_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

struct FunctionArity {
  std::string_view name;
  std::size_t min_args;
  std::size_t max_args;  // 0 = unbounded
};
constexpr std::array<FunctionArity, 7> kArities{{
    {"abs", 1, 1},
    {"exp", 1, 1},
    {"log", 1, 1},
    {"max", 1, 0},
    {"min", 1, 0},
    {"pow", 2, 2},
    {"sqrt", 1, 1},
}};

const FunctionArity* find_function(std::string_view name) {
  for (const FunctionArity& f : kArities)
    if (f.name == name) return &f;
  return nullptr;
}

std::string arity_text(const FunctionArity& f) {
  if (f.max_args == 0)
    return fmt::format("at least {} argument{}", f.min_args, f.min_args == 1 ? "" : "s");
  return fmt::format("{} argument{}", f.min_args, f.min_args == 1 ? "" : "s");
}

// Every rate name a user may write, for messages and suggestions.
std::vector<std::string_view> all_rate_names() {
  std::vector<std::string_view> names;
  for (const MetricInfo& m : metric_catalogue()) names.push_back(m.name);
  for (std::string_view n : ranking_rate_names()) names.push_back(n);
  for (std::string_view n : multilabel_rate_names()) names.push_back(n);
  return names;
}

std::string parametric_metrics() {
  std::vector<std::string_view> names;
  for (const MetricInfo& m : metric_catalogue())
    if (m.has_param) names.push_back(m.name);
  return names.empty() ? std::string("none") : join_names(names);
}

// Scans a slice body from just after '[' to its closing ']', honouring quotes and backslash
// escapes as Slice::parse does. Returns the offset of ']' or npos; sets `open_quote` to the offset
// of an unclosed quote (npos when none).
std::size_t find_slice_end(std::string_view text, std::size_t begin, std::size_t& open_quote) {
  open_quote = std::string_view::npos;
  for (std::size_t p = begin; p < text.size(); ++p) {
    const char c = text[p];
    if (c == ']') return p;
    if (c != '"' && c != '\'') continue;
    const std::size_t quote_at = p;
    for (++p; p < text.size() && text[p] != c; ++p) {
      if (text[p] == '\\') ++p;
    }
    if (p >= text.size()) {
      open_quote = quote_at;
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

}  // namespace

// ---- RateRef and Expression entry points --------------------------------------------------------

namespace {

// A slice column or value as Slice::to_string writes it, except that '[' and ']' also force
// quotes, so that the text reads back through Expression::parse (where ']' ends the slice).
std::string slice_token(std::string_view token) {
  const bool quote = token.empty() || is_space(token.front()) || is_space(token.back()) ||
                     token.find_first_of(",&=\"'\\[]") != std::string_view::npos;
  if (!quote) return std::string(token);
  std::string out = "\"";
  for (const char c : token) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string RateRef::to_string() const {
  std::string out = metric;
  if (!std::isnan(param)) out += fmt::format(":{}", param);
  if (!dataset.empty()) out += "@" + dataset;
  if (!slice.empty()) {
    out += '[';
    for (std::size_t k = 0; k < slice.conditions.size(); ++k) {
      if (k > 0) out += ',';
      out += slice_token(slice.conditions[k].column) + "=" + slice_token(slice.conditions[k].value);
    }
    out += ']';
  }
  return out;
}

Expression Expression::parse(std::string_view text) {
  return ExpressionParser(text).parse();
}

namespace {

// The text of node k, each rate written as `rate_text` gives it.
using RateWriter = std::function<std::string(const RateRef&)>;
std::string node_text(const Expression& e, std::size_t k, const RateWriter& rate_text) {
  const ExprNode& n = e.nodes()[k];
  const auto arg = [&](std::size_t j) { return node_text(e, n.args[j], rate_text); };
  switch (n.op) {
    case NodeOp::kConstant:
      return n.value < 0 ? fmt::format("({})", n.value) : fmt::format("{}", n.value);
    case NodeOp::kRate:
      return rate_text(e.rates()[n.rate]);
    case NodeOp::kNeg:
      return "(-" + arg(0) + ")";
    case NodeOp::kAdd:
      return "(" + arg(0) + " + " + arg(1) + ")";
    case NodeOp::kSub:
      return "(" + arg(0) + " - " + arg(1) + ")";
    case NodeOp::kMul:
      return "(" + arg(0) + " * " + arg(1) + ")";
    case NodeOp::kDiv:
      return "(" + arg(0) + " / " + arg(1) + ")";
    case NodeOp::kCall: {
      std::string out = n.function + "(";
      for (std::size_t j = 0; j < n.args.size(); ++j) out += (j > 0 ? ", " : "") + arg(j);
      return out + ")";
    }
  }
  return {};
}

std::string expression_text(const Expression& expression, const RateWriter& rate_text) {
  std::string out = node_text(expression, expression.lhs_root(), rate_text);
  if (expression.is_constraint())
    out += fmt::format(" {} {}", to_string(expression.relation()),
                       node_text(expression, expression.rhs_root(), rate_text));
  return out;
}

}  // namespace

std::string with_default_dataset(const Expression& expression, std::string_view dataset) {
  return expression_text(expression, [&](RateRef r) {
    if (r.dataset.empty()) r.dataset = dataset;
    return r.to_string();
  });
}

std::string with_datasets_as_slices(const Expression& expression, std::string_view column,
                                    std::string_view default_dataset) {
  return expression_text(expression, [&](RateRef r) {
    r.slice.conditions.push_back(
        {std::string(column), r.dataset.empty() ? std::string(default_dataset) : r.dataset});
    r.dataset.clear();
    return r.to_string();
  });
}

// ---- errors -------------------------------------------------------------------------------------

void ExpressionParser::fail(std::size_t offset, const std::string& message) const {
  offset = std::min(offset, text_.size());
  // The expression on one line (control characters shown as spaces) and a caret under the
  // offending character; the caret counts UTF-8 code points so that it lines up on a terminal.
  std::string shown(text_);
  for (char& c : shown) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  std::size_t width = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++width;
  detail::throw_parse_error("", 1, offset + 1, "{}\n  {}\n  {}^", message, shown,
                            std::string(width, ' '));
}

// ---- lexer --------------------------------------------------------------------------------------

std::size_t ExpressionParser::skip_space(std::size_t pos) const {
  while (pos < text_.size() && is_space(text_[pos])) ++pos;
  return pos;
}

ExpressionParser::Token ExpressionParser::lex(std::size_t pos) const {
  pos = skip_space(pos);
  Token t;
  t.begin = pos;
  t.end = pos;
  if (pos >= text_.size()) return t;  // kEnd
  const char c = text_[pos];
  const char next = pos + 1 < text_.size() ? text_[pos + 1] : '\0';
  if (is_digit(c) || (c == '.' && is_digit(next))) return lex_number(pos);
  if (is_identifier_start(c)) {
    std::size_t end = pos + 1;
    while (end < text_.size() && is_identifier_char(text_[end])) ++end;
    t.kind = TokenKind::kIdentifier;
    t.end = end;
    return t;
  }
  t.end = pos + 1;
  switch (c) {
    case '+':
      t.kind = TokenKind::kPlus;
      return t;
    case '-':
      t.kind = TokenKind::kMinus;
      return t;
    case '*':
      t.kind = TokenKind::kStar;
      return t;
    case '/':
      t.kind = TokenKind::kSlash;
      return t;
    case '(':
      t.kind = TokenKind::kLeftParen;
      return t;
    case ')':
      t.kind = TokenKind::kRightParen;
      return t;
    case ',':
      t.kind = TokenKind::kComma;
      return t;
    case ':':
      t.kind = TokenKind::kColon;
      return t;
    case '@':
      t.kind = TokenKind::kAt;
      return t;
    case '[':
      t.kind = TokenKind::kLeftBracket;
      return t;
    case '<':
    case '>':
    case '=':
      // <= >= == and the aliases < > = (all non-strict).
      t.kind = TokenKind::kRelation;
      t.relation = c == '<'   ? Relation::kLessEqual
                   : c == '>' ? Relation::kGreaterEqual
                              : Relation::kEqual;
      if (next == '=') t.end = pos + 2;
      return t;
    default:
      break;
  }
  if (c == ']')
    fail(pos, "unexpected ']' without a matching '[' (slices follow a rate: tpr[sex=F])");
  if (c == '!' && next == '=') fail(pos, "'!=' is not a relation; use <=, >= or ==");
  fail(pos, fmt::format("unexpected character {}", quote_char(c)));
}

ExpressionParser::Token ExpressionParser::lex_number(std::size_t pos) const {
  // The lexeme runs over digits and dots, an exponent, then any letters or digits glued to it, so
  // that "1.2.3", "1e" and "2x" are reported as one malformed number.
  std::size_t end = pos;
  while (end < text_.size() && (is_digit(text_[end]) || text_[end] == '.')) ++end;
  if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
    ++end;
    if (end < text_.size() && (text_[end] == '+' || text_[end] == '-')) ++end;
  }
  while (end < text_.size() && (is_identifier_char(text_[end]) || text_[end] == '.')) ++end;
  const std::string_view lexeme = text_.substr(pos, end - pos);
  double value = 0;
  const char* first = text_.data() + pos;
  const char* last = text_.data() + end;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range)
    fail(pos, fmt::format("number '{}' is out of the range of a double", lexeme));
  if (ec != std::errc() || ptr != last) {
    const std::size_t bad = ec == std::errc() ? static_cast<std::size_t>(ptr - text_.data()) : pos;
    fail(bad, fmt::format("malformed number '{}'", lexeme));
  }
  Token t;
  t.kind = TokenKind::kNumber;
  t.begin = pos;
  t.end = end;
  t.number = value;
  return t;
}

const ExpressionParser::Token& ExpressionParser::peek() {
  if (!lookahead_) lookahead_ = lex(pos_);
  return *lookahead_;
}

ExpressionParser::Token ExpressionParser::take() {
  const Token t = peek();
  pos_ = t.end;
  lookahead_.reset();
  return t;
}

std::string ExpressionParser::describe(const Token& token) const {
  if (token.kind == TokenKind::kEnd) return "end of input";
  return fmt::format("'{}'", text_.substr(token.begin, token.end - token.begin));
}

// ---- grammar ------------------------------------------------------------------------------------

Expression ExpressionParser::parse() {
  out_ = Expression{};
  out_.text_ = std::string(text_);
  if (peek().kind == TokenKind::kEnd)
    fail(peek().begin, "empty expression: expected a rate, a number or a function call");
  out_.lhs_ = parse_expr();
  if (peek().kind == TokenKind::kRelation) {
    out_.relation_ = take().relation;
    out_.rhs_ = parse_expr();
    if (peek().kind == TokenKind::kRelation)
      fail(peek().begin,
           "a second relation: a constraint has exactly one (write 'a <= b <= c' as two "
           "constraints)");
  }
  const Token& t = peek();
  if (t.kind == TokenKind::kRightParen) fail(t.begin, "unbalanced ')': there is no '(' to close");
  if (t.kind != TokenKind::kEnd) {
    fail(t.begin,
         fmt::format("unexpected {} after a complete expression; expected an operator "
                     "(+ - * /){}",
                     describe(t), out_.is_constraint() ? "" : " or a relation (<= >= ==)"));
  }
  return std::move(out_);
}

std::size_t ExpressionParser::parse_expr() {
  std::size_t left = parse_term();
  while (peek().kind == TokenKind::kPlus || peek().kind == TokenKind::kMinus) {
    const Token op = take();
    const std::size_t right = parse_term();
    ExprNode node;
    node.op = op.kind == TokenKind::kPlus ? NodeOp::kAdd : NodeOp::kSub;
    node.args = {left, right};
    node.position = op.begin;
    left = add_node(std::move(node));
  }
  return left;
}

std::size_t ExpressionParser::parse_term() {
  std::size_t left = parse_unary();
  while (peek().kind == TokenKind::kStar || peek().kind == TokenKind::kSlash) {
    const Token op = take();
    const std::size_t right = parse_unary();
    ExprNode node;
    node.op = op.kind == TokenKind::kStar ? NodeOp::kMul : NodeOp::kDiv;
    node.args = {left, right};
    node.position = op.begin;
    left = add_node(std::move(node));
  }
  return left;
}

std::size_t ExpressionParser::parse_unary() {
  // Every level of nesting (parentheses, arguments, unary minus) passes through here.
  if (++depth_ > kMaxDepth) fail(peek().begin, fmt::format("nested more than {} deep", kMaxDepth));
  std::size_t result = 0;
  if (peek().kind == TokenKind::kMinus) {
    const Token op = take();
    ExprNode node;
    node.op = NodeOp::kNeg;
    node.args = {parse_unary()};
    node.position = op.begin;
    result = add_node(std::move(node));
  } else {
    result = parse_primary();
  }
  --depth_;
  return result;
}

std::size_t ExpressionParser::parse_primary() {
  const Token t = peek();
  switch (t.kind) {
    case TokenKind::kNumber: {
      take();
      ExprNode node;
      node.op = NodeOp::kConstant;
      node.value = t.number;
      node.position = t.begin;
      return add_node(std::move(node));
    }
    case TokenKind::kLeftParen: {
      take();
      const std::size_t inner = parse_expr();
      const Token close = peek();
      if (close.kind != TokenKind::kRightParen)
        fail(close.begin, fmt::format("expected ')' to close the '(' at column {}, found {}",
                                      t.begin + 1, describe(close)));
      take();
      return inner;
    }
    case TokenKind::kIdentifier:
      take();
      if (peek().kind == TokenKind::kLeftParen) return parse_call(t);
      return parse_rate(t);
    default:
      fail(t.begin, fmt::format("expected an operand (a number, a rate, a function call or '('), "
                                "found {}",
                                describe(t)));
  }
}

std::size_t ExpressionParser::parse_call(const Token& name) {
  const std::string fname(text_.substr(name.begin, name.end - name.begin));
  const FunctionArity* f = find_function(fname);
  if (f == nullptr) {
    if (resolve_rate_name(fname))
      fail(name.begin, fmt::format("'{}' is a rate, not a function: a rate takes ':param', "
                                   "'@dataset' and '[slice]', not '('",
                                   fname));
    const std::string hint = closest_name(fname, function_names());
    fail(name.begin, fmt::format("unknown function '{}'{}; functions are {}", fname,
                                 hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                                 join_names(function_names())));
  }
  const Token open = take();
  std::vector<std::size_t> args;
  std::vector<std::size_t> commas;
  Token close;
  if (peek().kind == TokenKind::kRightParen)
    fail(peek().begin, fmt::format("{}() takes {}, got none", fname, arity_text(*f)));
  while (true) {
    args.push_back(parse_expr());
    const Token t = peek();
    if (t.kind == TokenKind::kComma) {
      commas.push_back(t.begin);
      take();
      continue;
    }
    if (t.kind == TokenKind::kRightParen) {
      close = take();
      break;
    }
    fail(t.begin, fmt::format("expected ',' or ')' in the arguments of {}( at column {}, found {}",
                              fname, open.begin + 1, describe(t)));
  }
  if (f->max_args != 0 && args.size() > f->max_args)
    fail(commas[f->max_args - 1],
         fmt::format("{}() takes {}, got {}", fname, arity_text(*f), args.size()));
  if (args.size() < f->min_args)
    fail(close.begin, fmt::format("{}() takes {}, got {}", fname, arity_text(*f), args.size()));
  ExprNode node;
  node.op = NodeOp::kCall;
  node.function = fname;
  node.args = std::move(args);
  node.position = name.begin;
  return add_node(std::move(node));
}

std::size_t ExpressionParser::parse_rate(const Token& name) {
  const std::string written(text_.substr(name.begin, name.end - name.begin));
  const std::optional<ResolvedName> resolved = resolve_rate_name(written);
  if (!resolved) {
    if (find_function(written) != nullptr)
      fail(name.begin, fmt::format("'{}' is a function: call it as {}(...)", written, written));
    const std::vector<std::string_view> names = all_rate_names();
    const std::string hint = closest_name(written, names);
    fail(name.begin,
         fmt::format("unknown rate '{}'{}; rates are the metrics {}; the ranking metrics {}; the "
                     "multilabel / multiclass scores {}",
                     written, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                     join_names(std::span(names).first(metric_catalogue().size())),
                     join_names(ranking_rate_names()), join_names(multilabel_rate_names())));
  }
  RateRef rate;
  rate.metric = resolved->canonical;

  if (peek().kind == TokenKind::kColon) {
    const Token colon = take();
    if (resolved->info == nullptr || !resolved->info->has_param)
      fail(colon.begin, fmt::format("'{}' takes no parameter (metrics with a parameter: {})",
                                    written, parametric_metrics()));
    const Token number = peek();
    if (number.kind != TokenKind::kNumber)
      fail(number.begin,
           fmt::format("expected a number after '{}:', found {}", written, describe(number)));
    take();
    if (!(std::isfinite(number.number) && number.number > 0))
      fail(number.begin, fmt::format("the parameter of '{}' must be a finite number > 0, got {}",
                                     written, describe(number)));
    rate.param = number.number;
  }

  if (peek().kind == TokenKind::kAt) {
    take();
    const Token dataset = peek();
    if (dataset.kind != TokenKind::kIdentifier)
      fail(dataset.begin,
           fmt::format("expected a dataset name (letters, digits, '_') after '@', found {}",
                       describe(dataset)));
    take();
    rate.dataset = std::string(text_.substr(dataset.begin, dataset.end - dataset.begin));
  }

  if (peek().kind == TokenKind::kLeftBracket) rate.slice = parse_slice(take().begin);

  ExprNode node;
  node.op = NodeOp::kRate;
  node.rate = add_rate(std::move(rate));
  node.position = name.begin;
  return add_node(std::move(node));
}

Slice ExpressionParser::parse_slice(std::size_t open) {
  const std::size_t begin = open + 1;
  std::size_t open_quote = std::string_view::npos;
  const std::size_t close = find_slice_end(text_, begin, open_quote);
  if (open_quote != std::string_view::npos)
    fail(open_quote, fmt::format("unbalanced quote in the slice opened at column {}: no closing {}",
                                 open + 1, text_[open_quote]));
  if (close == std::string_view::npos)
    fail(text_.size(), fmt::format("missing ']' to close the slice opened at column {}", open + 1));
  const std::string_view body = text_.substr(begin, close - begin);
  if (skip_space(begin) == close)
    fail(close,
         "empty slice '[]': write conditions column=value, or drop the brackets to use "
         "all rows");
  Slice slice;
  try {
    slice = Slice::parse(body);
  } catch (const ParseError& e) {
    // Slice::parse counts columns in `body`; map them back to the whole expression.
    fail(e.column() == 0 ? open : begin + e.column() - 1, e.detail());
  }
  pos_ = close + 1;
  lookahead_.reset();
  return slice;
}

std::size_t ExpressionParser::add_node(ExprNode node) {
  out_.nodes_.push_back(std::move(node));
  return out_.nodes_.size() - 1;
}

std::size_t ExpressionParser::add_rate(RateRef rate) {
  // Equal rates (RateRef::operator==: every NaN parameter alike) have equal keys: the fields
  // joined by bytes no name holds, the parameter by its bits (NaN: none).
  std::string key = rate.metric;
  key += '\0';
  if (!std::isnan(rate.param)) {
    std::array<char, sizeof(double)> bits{};
    std::memcpy(bits.data(), &rate.param, sizeof(double));
    key.append(bits.data(), bits.size());
  }
  key += '\0';
  key += rate.dataset;
  for (const Condition& c : rate.slice.conditions) {
    key += '\0';
    key += c.column;
    key += '\1';
    key += c.value;
  }
  const auto [it, added] = rate_index_.try_emplace(std::move(key), out_.rates_.size());
  if (added) out_.rates_.push_back(std::move(rate));
  return it->second;
}

}  // namespace rateopt
