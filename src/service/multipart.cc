// SPDX-License-Identifier: Apache-2.0
// multipart/form-data parsing, form-field conversions and file-name sanitising (multipart.h).
#include "service/multipart.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <utility>

#include "text/utf8.h"

namespace mineru::service {
namespace {

constexpr std::string_view kCrLf = "\r\n";
// The longest extension SanitizeFileName keeps whole when it has to shorten a name.
constexpr size_t kMaxKeptExtensionBytes = 16;
// How much of an offending value error messages quote.
constexpr size_t kMaxQuotedBytes = 40;

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpaceOrTab(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpaceOrTab(s.back())) s.remove_suffix(1);
  return s;
}

// RFC 9110 tchar: what header names and bare parameter names consist of.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// The start of an untrusted value for an error message, printable ASCII only.
std::string Quote(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, kMaxQuotedBytes)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7F) ? c : '?';
  }
  if (s.size() > kMaxQuotedBytes) out += "...";
  return "'" + out + "'";
}

// RFC 2046 bchars: what a boundary may consist of (a space only inside).
bool IsBoundaryChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

using Parameters = std::vector<std::pair<std::string, std::string>>;  // lower-case names

// Splits "value; a=1; b=\"two\"" into its leading value (trimmed) and parameters. Quoted values
// unescape only \" and \\ (see multipart.h); bare values run to ';' or white space. Duplicate
// names are an error: which one wins would be a guess.
Result<std::pair<std::string_view, Parameters>> ParseHeaderValue(std::string_view header,
                                                                 std::string_view what) {
  size_t i = header.find(';');
  std::string_view main = Trim(header.substr(0, i));
  Parameters params;
  while (i < header.size()) {
    ++i;  // past ';'
    while (i < header.size() && IsSpaceOrTab(header[i])) ++i;
    if (i == header.size()) break;  // a trailing ';'
    size_t start = i;
    while (i < header.size() && IsTokenChar(header[i])) ++i;
    if (i == start) return Fail(ErrorCode::kInvalidArgument, "{}: bad parameter name", what);
    std::string name = LowerAscii(header.substr(start, i - start));
    while (i < header.size() && IsSpaceOrTab(header[i])) ++i;
    if (i == header.size() || header[i] != '=') {
      return Fail(ErrorCode::kInvalidArgument, "{}: parameter {} has no '='", what, name);
    }
    ++i;
    while (i < header.size() && IsSpaceOrTab(header[i])) ++i;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      ++i;
      bool closed = false;
      while (i < header.size()) {
        char c = header[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < header.size() && (header[i] == '"' || header[i] == '\\')) {
          c = header[i++];
        }
        value += c;
      }
      if (!closed) {
        return Fail(ErrorCode::kInvalidArgument, "{}: parameter {} has an unterminated quote", what,
                    name);
      }
    } else {
      start = i;
      while (i < header.size() && header[i] != ';' && header[i] != '"' &&
             !IsSpaceOrTab(header[i])) {
        ++i;
      }
      if (i == start) {
        return Fail(ErrorCode::kInvalidArgument, "{}: parameter {} has no value", what, name);
      }
      value = header.substr(start, i - start);
    }
    while (i < header.size() && IsSpaceOrTab(header[i])) ++i;
    if (i < header.size() && header[i] != ';') {
      return Fail(ErrorCode::kInvalidArgument, "{}: unexpected text after parameter {}", what,
                  name);
    }
    for (const auto& [seen, unused] : params) {
      if (seen == name) {
        return Fail(ErrorCode::kInvalidArgument, "{}: duplicate parameter {}", what, name);
      }
    }
    params.emplace_back(std::move(name), std::move(value));
  }
  return std::make_pair(main, std::move(params));
}

const std::string* FindParameter(const Parameters& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

Result<std::string> BoundaryOf(std::string_view content_type) {
  MINERU_ASSIGN_OR_RETURN(auto parsed, ParseHeaderValue(content_type, "Content-Type"));
  if (!EqualsIgnoreCase(parsed.first, "multipart/form-data")) {
    return Fail(ErrorCode::kInvalidArgument, "Content-Type {} is not multipart/form-data",
                Quote(parsed.first));
  }
  const std::string* boundary = FindParameter(parsed.second, "boundary");
  if (boundary == nullptr) {
    return Fail(ErrorCode::kInvalidArgument, "multipart Content-Type has no boundary parameter");
  }
  if (boundary->empty() || boundary->size() > kMaxBoundaryLength) {
    return Fail(ErrorCode::kInvalidArgument,
                "multipart boundary must be 1 to {} characters (got {})", kMaxBoundaryLength,
                boundary->size());
  }
  if (!std::all_of(boundary->begin(), boundary->end(), IsBoundaryChar) || boundary->back() == ' ') {
    return Fail(ErrorCode::kInvalidArgument,
                "multipart boundary {} has characters RFC 2046 forbids", Quote(*boundary));
  }
  return *boundary;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// RFC 5987 ext-value "UTF-8'lang'percent%20encoded" (only UTF-8: the one charset in use).
Result<std::string> DecodeExtendedValue(std::string_view value) {
  const size_t q1 = value.find('\'');
  const size_t q2 = q1 == std::string_view::npos ? q1 : value.find('\'', q1 + 1);
  if (q2 == std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, "filename* {} is not charset'language'value",
                Quote(value));
  }
  if (!EqualsIgnoreCase(value.substr(0, q1), "utf-8")) {
    return Fail(ErrorCode::kInvalidArgument, "filename* charset {} is not supported (only UTF-8)",
                Quote(value.substr(0, q1)));
  }
  std::string out;
  for (size_t i = q2 + 1; i < value.size(); ++i) {
    if (value[i] != '%') {
      out += value[i];
      continue;
    }
    const int hi = i + 2 < value.size() ? HexValue(value[i + 1]) : -1;
    const int lo = hi >= 0 ? HexValue(value[i + 2]) : -1;
    if (lo < 0) {
      return Fail(ErrorCode::kInvalidArgument, "filename* {} has a bad percent escape",
                  Quote(value));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (!text::IsValidUtf8(out)) {
    return Fail(ErrorCode::kInvalidArgument, "filename* {} is not UTF-8", Quote(value));
  }
  return out;
}

Status ParseContentDisposition(std::string_view header, FormPart* part) {
  MINERU_ASSIGN_OR_RETURN(auto parsed, ParseHeaderValue(header, "Content-Disposition"));
  if (!EqualsIgnoreCase(parsed.first, "form-data")) {
    return Fail(ErrorCode::kInvalidArgument,
                "multipart part Content-Disposition {} is not form-data", Quote(parsed.first));
  }
  const std::string* name = FindParameter(parsed.second, "name");
  if (name == nullptr || name->empty()) {
    return Fail(ErrorCode::kInvalidArgument, "multipart part has no name");
  }
  part->name = *name;
  if (const std::string* ext = FindParameter(parsed.second, "filename*")) {
    MINERU_ASSIGN_OR_RETURN(part->filename, DecodeExtendedValue(*ext));
  } else if (const std::string* filename = FindParameter(parsed.second, "filename")) {
    part->filename = *filename;
  }
  return OkStatus();
}

tl::unexpected<Error> HeaderLimitError(const MultipartLimits& limits) {
  return Fail(ErrorCode::kInvalidArgument,
              "multipart part headers exceed max_part_header_bytes ({} bytes)",
              limits.max_part_header_bytes);
}

// Parses the header lines of the part starting at body[pos] into *part; returns where its data
// starts (after the empty line).
Result<size_t> ParsePartHeaders(std::string_view body, size_t pos, const MultipartLimits& limits,
                                FormPart* part) {
  std::string_view block;  // the header lines, each with its CRLF
  size_t data_start;
  if (body.substr(pos).starts_with(kCrLf)) {
    data_start = pos + 2;
  } else {
    // Only look as far as the limit allows, so a body without an empty line is not scanned.
    // (min: no overflow for a limit of SIZE_MAX.)
    const size_t scan = std::min(limits.max_part_header_bytes, body.size()) + 4;
    const std::string_view window = body.substr(pos, scan);
    const size_t end = window.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (window.size() == scan) return HeaderLimitError(limits);
      return Fail(ErrorCode::kInvalidArgument,
                  "multipart part headers are not followed by an empty line");
    }
    block = window.substr(0, end + 2);
    if (block.size() > limits.max_part_header_bytes) return HeaderLimitError(limits);
    data_start = pos + end + 4;
  }
  bool has_disposition = false, has_type = false;
  while (!block.empty()) {
    const size_t eol = block.find(kCrLf);
    const std::string_view line = block.substr(0, eol);
    block.remove_prefix(eol + 2);
    if (line.empty() || IsSpaceOrTab(line.front())) {
      return Fail(ErrorCode::kInvalidArgument, "multipart part has a folded header line");
    }
    for (char c : line) {
      if (c != '\t' && IsControl(static_cast<unsigned char>(c))) {
        return Fail(ErrorCode::kInvalidArgument, "multipart part header has a control character");
      }
    }
    const size_t colon = line.find(':');
    const std::string_view name = line.substr(0, colon);
    if (colon == std::string_view::npos || name.empty() ||
        !std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return Fail(ErrorCode::kInvalidArgument, "multipart part has a malformed header line {}",
                  Quote(line));
    }
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "content-disposition")) {
      if (has_disposition) {
        return Fail(ErrorCode::kInvalidArgument, "multipart part has two Content-Disposition");
      }
      has_disposition = true;
      MINERU_RETURN_IF_ERROR(ParseContentDisposition(value, part));
    } else if (EqualsIgnoreCase(name, "content-type")) {
      if (has_type) {
        return Fail(ErrorCode::kInvalidArgument, "multipart part has two Content-Type");
      }
      if (value.empty()) {
        return Fail(ErrorCode::kInvalidArgument, "multipart part has an empty Content-Type");
      }
      has_type = true;
      part->content_type = value;
    }
  }
  if (!has_disposition) {
    return Fail(ErrorCode::kInvalidArgument, "multipart part has no Content-Disposition header");
  }
  if (!has_type) part->content_type = "text/plain";
  return data_start;
}

// Finds delimiter lines: CRLF "--" boundary, then "--" (closing) or spaces/tabs and CRLF.
class DelimiterFinder {
 public:
  DelimiterFinder(std::string_view body, const std::string& boundary)
      : body_(body),
        delimiter_("\r\n--" + boundary),
        searcher_(delimiter_.begin(), delimiter_.end()) {}
  // searcher_ points into delimiter_.
  DelimiterFinder(const DelimiterFinder&) = delete;
  DelimiterFinder& operator=(const DelimiterFinder&) = delete;

  struct Match {
    size_t start;  // of the CRLF before "--"
    size_t next;   // just past the line (past "--" for the closing delimiter)
    bool closing;
  };

  // The first delimiter line at or after `from`; `from` == 0 also matches "--boundary" at the
  // very start of the body (no preamble).
  std::optional<Match> Find(size_t from) const {
    if (from == 0 && body_.starts_with(std::string_view(delimiter_).substr(2))) {
      if (auto m = MatchTail(0, delimiter_.size() - 2)) return m;
    }
    while (from < body_.size()) {
      const auto it = std::search(body_.begin() + from, body_.end(), searcher_);
      if (it == body_.end()) return std::nullopt;
      const size_t start = it - body_.begin();
      if (auto m = MatchTail(start, start + delimiter_.size())) return m;
      from = start + 1;  // "--boundary" followed by other bytes is data
    }
    return std::nullopt;
  }

 private:
  std::optional<Match> MatchTail(size_t start, size_t pos) const {
    if (body_.substr(pos).starts_with("--")) return Match{start, pos + 2, true};
    while (pos < body_.size() && IsSpaceOrTab(body_[pos])) ++pos;
    if (body_.substr(pos).starts_with(kCrLf)) return Match{start, pos + 2, false};
    return std::nullopt;
  }

  std::string_view body_;
  std::string delimiter_;
  std::boyer_moore_horspool_searcher<std::string::const_iterator> searcher_;
};

}  // namespace

Result<std::vector<FormPart>> ParseMultipartFormData(std::string_view content_type_header,
                                                     std::string_view body,
                                                     const MultipartLimits& limits) {
  MINERU_ASSIGN_OR_RETURN(const std::string boundary, BoundaryOf(content_type_header));
  const DelimiterFinder finder(body, boundary);
  std::optional<DelimiterFinder::Match> delimiter = finder.Find(0);
  if (!delimiter) {
    return Fail(ErrorCode::kInvalidArgument,
                "multipart body has no boundary line (lines must end in CRLF)");
  }
  std::vector<FormPart> parts;
  while (!delimiter->closing) {
    if (parts.size() == limits.max_parts) {
      return Fail(ErrorCode::kInvalidArgument, "multipart body has more than max_parts ({}) parts",
                  limits.max_parts);
    }
    FormPart part;
    MINERU_ASSIGN_OR_RETURN(const size_t data_start,
                            ParsePartHeaders(body, delimiter->next, limits, &part));
    // The CRLF before a delimiter belongs to it, so the search starts at the data itself: an
    // empty part is immediately followed by CRLF "--" boundary.
    delimiter = finder.Find(data_start);
    if (!delimiter) {
      return Fail(ErrorCode::kInvalidArgument, "multipart body has no closing boundary");
    }
    part.data = body.substr(data_start, delimiter->start - data_start);
    parts.push_back(std::move(part));
  }
  return parts;
}

Result<bool> ParseFormBool(std::string_view value) {
  for (std::string_view yes : {"true", "1", "yes", "on", "t", "y"}) {
    if (EqualsIgnoreCase(value, yes)) return true;
  }
  for (std::string_view no : {"false", "0", "no", "off", "f", "n"}) {
    if (EqualsIgnoreCase(value, no)) return false;
  }
  return Fail(ErrorCode::kInvalidArgument, "{} is not a boolean (true/false, 1/0, yes/no, on/off)",
              Quote(value));
}

Result<int64_t> ParseFormInt(std::string_view value) {
  std::string_view digits = value;
  const bool plus = digits.starts_with('+');  // from_chars takes '-' only
  if (plus) digits.remove_prefix(1);
  const bool minus = digits.starts_with('-');
  const std::string_view magnitude = digits.substr(minus ? 1 : 0);
  if ((plus && minus) || magnitude.empty() ||
      !std::all_of(magnitude.begin(), magnitude.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return Fail(ErrorCode::kInvalidArgument, "{} is not an integer", Quote(value));
  }
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec == std::errc::result_out_of_range) {
    return Fail(ErrorCode::kInvalidArgument, "integer {} is out of range", Quote(value));
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return Fail(ErrorCode::kInvalidArgument, "{} is not an integer", Quote(value));
  }
  return out;
}

namespace {

bool KeepInFileName(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return false;  // C0, DEL, C1 controls
  if (cp < 0x80)
    return std::string_view("<>:\"/\\|?*").find(static_cast<char>(cp)) == std::string_view::npos;
  // Bidirectional-text controls (a name can be made to display as "fdp.exe"), line and paragraph
  // separators, and the byte-order mark / zero-width no-break space.
  if (cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
      (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) {
    return false;
  }
  return true;
}

// Windows drops trailing dots and spaces, and a leading dot hides a file (or makes "." / "..").
void StripDotsAndSpaces(std::string* s, bool leading) {
  if (leading) {
    const size_t first = s->find_first_not_of(". ");
    s->erase(0, first == std::string::npos ? s->size() : first);
  }
  const size_t last = s->find_last_not_of(". ");
  s->resize(last == std::string::npos ? 0 : last + 1);
}

}  // namespace

std::string SanitizeFileName(std::string_view name) {
  const size_t slash = name.find_last_of("/\\");
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  std::string out;
  for (size_t pos = 0; pos < name.size();) {
    char32_t cp = 0;
    const size_t len = text::WellFormedLength(name, pos, &cp);
    if (len == 0) {  // ill-formed UTF-8: dropped
      pos += text::MaximalSubpartLength(name, pos);
      continue;
    }
    if (KeepInFileName(cp)) out.append(name.substr(pos, len));
    pos += len;
  }
  StripDotsAndSpaces(&out, /*leading=*/true);
  if (out.size() > kMaxFileNameBytes) {
    const size_t dot = out.rfind('.');
    std::string extension;
    if (dot != std::string::npos && out.size() - dot <= kMaxKeptExtensionBytes) {
      extension = out.substr(dot);
      out.resize(dot);
    }
    size_t keep = std::min(out.size(), kMaxFileNameBytes - extension.size());
    // Back up to the first byte of a UTF-8 sequence (continuation bytes are 10xxxxxx).
    while (keep > 0 && keep < out.size() &&
           (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) {
      --keep;
    }
    out.resize(keep);
    StripDotsAndSpaces(&out, /*leading=*/false);
    out += extension;
  }
  if (out.empty()) return std::string(kFallbackFileName);
  return out;
}

}  // namespace mineru::service
