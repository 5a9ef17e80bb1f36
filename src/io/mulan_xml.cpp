// MULAN label XML: `<labels xmlns="..."><label name="a"></label>...</labels>`, possibly with
// nested <label> elements (label hierarchies). Only the `name` attributes of <label> elements are
// read, in document order. A small scanner, not a full XML parser: comments, processing
// instructions, CDATA and DOCTYPE sections are skipped; entities in names are decoded.
#include <charconv>
#include <unordered_set>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "rateopt/io.hpp"

namespace rateopt {

namespace {

class XmlScanner {
 public:
  XmlScanner(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::vector<std::string> labels() {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen;
    std::size_t pos = 0;
    while (true) {
      pos = text_.find('<', pos);
      if (pos == std::string_view::npos) break;
      const std::string_view rest = text_.substr(pos);
      if (rest.starts_with("<!--")) {
        pos = skip_past(pos, "-->", "comment");
      } else if (rest.starts_with("<![CDATA[")) {
        pos = skip_past(pos, "]]>", "CDATA section");
      } else if (rest.starts_with("<?")) {
        pos = skip_past(pos, "?>", "processing instruction");
      } else if (rest.starts_with("<!")) {
        pos = skip_past(pos, ">", "declaration");
      } else if (is_label_tag(rest)) {
        const std::size_t tag = pos;
        std::string name = read_label_tag(pos);
        if (!seen.insert(name).second)
          fail(tag, fmt::format("label {} is listed twice", io_detail::quoted(name)));
        out.push_back(std::move(name));
      } else {
        pos = skip_tag(pos);
      }
    }
    if (out.empty())
      throw ParseError(path_, 0, 0,
                       "expected at least one <label name=\"...\"> element, found none");
    return out;
  }

 private:
  static bool is_label_tag(std::string_view rest) {
    if (!rest.starts_with("<label")) return false;
    if (rest.size() == 6) return true;
    const char c = rest[6];
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '>' || c == '/';
  }

  [[noreturn]] void fail(std::size_t pos, const std::string& what) const {
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    throw ParseError(path_, line, pos - line_start + 1, what);
  }

  [[nodiscard]] std::size_t skip_past(std::size_t pos, std::string_view end,
                                      std::string_view what) const {
    const std::size_t e = text_.find(end, pos);
    if (e == std::string_view::npos) fail(pos, fmt::format("unterminated XML {}", what));
    return e + end.size();
  }

  // Skips a tag `<...>` honouring quoted attribute values.
  [[nodiscard]] std::size_t skip_tag(std::size_t pos) const {
    char quote = 0;
    for (std::size_t i = pos + 1; i < text_.size(); ++i) {
      const char c = text_[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        return i + 1;
      }
    }
    fail(pos, "unterminated XML tag (expected '>')");
  }

  // Reads the name of the <label ...> tag at `pos` and moves `pos` past the tag.
  std::string read_label_tag(std::size_t& pos) const {
    std::size_t i = pos + 6;  // after "<label"
    std::string name;
    bool has_name = false;
    while (true) {
      while (i < text_.size() &&
             std::string_view(" \t\r\n").find(text_[i]) != std::string_view::npos)
        ++i;
      if (i >= text_.size()) fail(pos, "unterminated <label> tag (expected '>')");
      if (text_[i] == '>' || text_[i] == '/') break;
      const std::size_t key_start = i;
      while (i < text_.size() && text_[i] != '=' && text_[i] != '>' &&
             std::string_view(" \t\r\n/").find(text_[i]) == std::string_view::npos)
        ++i;
      const std::string_view key = text_.substr(key_start, i - key_start);
      while (i < text_.size() &&
             std::string_view(" \t\r\n").find(text_[i]) != std::string_view::npos)
        ++i;
      if (i >= text_.size() || text_[i] != '=')
        fail(i, fmt::format("expected '=' after attribute {} of <label>", io_detail::quoted(key)));
      ++i;
      while (i < text_.size() &&
             std::string_view(" \t\r\n").find(text_[i]) != std::string_view::npos)
        ++i;
      if (i >= text_.size() || (text_[i] != '"' && text_[i] != '\''))
        fail(i, "expected a quoted attribute value in <label>");
      const char quote = text_[i];
      const std::size_t value_start = ++i;
      const std::size_t value_end = text_.find(quote, value_start);
      if (value_end == std::string_view::npos) fail(value_start, "unterminated attribute value");
      i = value_end + 1;
      if (key == "name") {
        name = decode(text_.substr(value_start, value_end - value_start), value_start);
        has_name = true;
      }
    }
    if (!has_name) fail(pos, "expected a name=\"...\" attribute in <label>, found none");
    if (name.empty()) fail(pos, "expected a non-empty label name, found ''");
    pos = skip_tag(pos);
    return name;
  }

  [[nodiscard]] std::string decode(std::string_view s, std::size_t at) const {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '&') {
        out += s[i];
        continue;
      }
      const std::size_t semi = s.find(';', i);
      if (semi == std::string_view::npos) fail(at + i, "unterminated XML entity (expected ';')");
      const std::string_view ent = s.substr(i + 1, semi - i - 1);
      if (ent == "amp") {
        out += '&';
      } else if (ent == "lt") {
        out += '<';
      } else if (ent == "gt") {
        out += '>';
      } else if (ent == "quot") {
        out += '"';
      } else if (ent == "apos") {
        out += '\'';
      } else if (ent.size() >= 2 && ent[0] == '#') {
        std::int64_t code = 0;
        bool ok = false;
        if (ent[1] == 'x' || ent[1] == 'X') {
          const std::string_view hex = ent.substr(2);
          auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), code, 16);
          ok = ec == std::errc() && p == hex.data() + hex.size() && !hex.empty();
        } else {
          ok = io_detail::parse_int64(ent.substr(1), code);
        }
        if (!ok || code <= 0 || code > 0x10FFFF)
          fail(at + i, fmt::format("invalid character reference {}", io_detail::quoted(ent)));
        append_utf8(out, static_cast<std::uint32_t>(code));
      } else {
        fail(at + i, fmt::format("unknown XML entity {}", io_detail::quoted(ent)));
      }
      i = semi;
    }
    return out;
  }

  static void append_utf8(std::string& out, std::uint32_t c) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }

  std::string_view text_;
  const std::string& path_;
};

}  // namespace

std::vector<std::string> read_mulan_labels(const std::string& xml_path) {
  const std::string text = read_text_file(xml_path);
  return XmlScanner(text, xml_path).labels();
}

std::vector<std::string> parse_mulan_labels(std::string_view xml, const std::string& name) {
  return XmlScanner(xml, name).labels();
}

}  // namespace rateopt
