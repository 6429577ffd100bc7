#include "cli/json_text.h"

#include <cstdint>

namespace narad::cli {
namespace {

constexpr int kMaxDepth = 10'000;  // Go's scanner limit

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A recursive-descent scanner over one buffer. With `out_` set it also writes the indented form.
class Scanner {
  public:
    Scanner(std::string_view text, std::string* out) : text_(text), out_(out) {}

    void skip_space() {
        while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    }
    bool at_end() const { return pos_ >= text_.size(); }
    size_t pos() const { return pos_; }
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

    bool value(int depth) {
        skip_space();
        if (at_end()) return false;
        const char c = text_[pos_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return string();
        if (c == '-' || is_digit(c)) return number();
        return literal("true") || literal("false") || literal("null");
    }

    bool string() {
        const size_t start = pos_;
        if (peek() != '"') return false;
        ++pos_;
        while (pos_ < text_.size()) {
            const unsigned char c = static_cast<unsigned char>(text_[pos_]);
            if (c == '"') {
                ++pos_;
                emit(text_.substr(start, pos_ - start));
                return true;
            }
            if (c < 0x20) return false;
            if (c == '\\') {
                ++pos_;
                if (at_end()) return false;
                const char e = text_[pos_];
                if (e == 'u') {
                    if (pos_ + 4 >= text_.size()) return false;
                    for (size_t k = 1; k <= 4; ++k) {
                        if (!is_hex(text_[pos_ + k])) return false;
                    }
                    pos_ += 5;
                    continue;
                }
                if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' &&
                    e != 'r' && e != 't') {
                    return false;
                }
            }
            ++pos_;
        }
        return false;
    }

  private:
    void emit(std::string_view piece) {
        if (out_ != nullptr) out_->append(piece);
    }
    void newline(int depth) {
        if (out_ == nullptr) return;
        out_->push_back('\n');
        out_->append(size_t(depth) * 2, ' ');
    }

    bool object(int depth) {
        if (depth >= kMaxDepth) return false;
        ++pos_;
        emit("{");
        skip_space();
        if (peek() == '}') {
            ++pos_;
            emit("}");
            return true;
        }
        while (true) {
            newline(depth + 1);
            skip_space();
            if (!string()) return false;
            skip_space();
            if (peek() != ':') return false;
            ++pos_;
            emit(": ");
            if (!value(depth + 1)) return false;
            skip_space();
            if (peek() == ',') {
                ++pos_;
                emit(",");
                continue;
            }
            if (peek() == '}') {
                ++pos_;
                newline(depth);
                emit("}");
                return true;
            }
            return false;
        }
    }

    bool array(int depth) {
        if (depth >= kMaxDepth) return false;
        ++pos_;
        emit("[");
        skip_space();
        if (peek() == ']') {
            ++pos_;
            emit("]");
            return true;
        }
        while (true) {
            newline(depth + 1);
            if (!value(depth + 1)) return false;
            skip_space();
            if (peek() == ',') {
                ++pos_;
                emit(",");
                continue;
            }
            if (peek() == ']') {
                ++pos_;
                newline(depth);
                emit("]");
                return true;
            }
            return false;
        }
    }

    bool number() {
        const size_t start = pos_;
        if (peek() == '-') ++pos_;
        if (peek() == '0') {
            ++pos_;
        } else if (is_digit(peek())) {
            while (is_digit(peek())) ++pos_;
        } else {
            return false;
        }
        if (peek() == '.') {
            ++pos_;
            if (!is_digit(peek())) return false;
            while (is_digit(peek())) ++pos_;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            if (!is_digit(peek())) return false;
            while (is_digit(peek())) ++pos_;
        }
        emit(text_.substr(start, pos_ - start));
        return true;
    }

    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        emit(word);
        return true;
    }

    std::string_view text_;
    std::string* out_;
    size_t pos_ = 0;
};

// Scans one complete value followed only by whitespace.
bool whole_value(std::string_view text) {
    Scanner scanner(text, nullptr);
    if (!scanner.value(0)) return false;
    scanner.skip_space();
    return scanner.at_end();
}

void append_utf8(std::string& out, uint32_t rune) {
    if (rune < 0x80) {
        out += char(rune);
    } else if (rune < 0x800) {
        out += char(0xC0 | (rune >> 6));
        out += char(0x80 | (rune & 0x3F));
    } else if (rune < 0x10000) {
        out += char(0xE0 | (rune >> 12));
        out += char(0x80 | ((rune >> 6) & 0x3F));
        out += char(0x80 | (rune & 0x3F));
    } else {
        out += char(0xF0 | (rune >> 18));
        out += char(0x80 | ((rune >> 12) & 0x3F));
        out += char(0x80 | ((rune >> 6) & 0x3F));
        out += char(0x80 | (rune & 0x3F));
    }
}

// Length of a valid UTF-8 sequence at text[i], or 0 if invalid.
size_t utf8_length(std::string_view text, size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t rune = 0;
    uint32_t minimum = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        length = 2, rune = c & 0x1F, minimum = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3, rune = c & 0x0F, minimum = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4, rune = c & 0x07, minimum = 0x10000;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    for (size_t k = 1; k < length; ++k) {
        const unsigned char next = static_cast<unsigned char>(text[i + k]);
        if ((next & 0xC0) != 0x80) return 0;
        rune = (rune << 6) | (next & 0x3F);
    }
    if (rune < minimum || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) return 0;
    return length;
}

uint32_t hex4(std::string_view text) {
    uint32_t value = 0;
    for (char c : text) {
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= uint32_t(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            value |= uint32_t(c - 'a' + 10);
        } else {
            value |= uint32_t(c - 'A' + 10);
        }
    }
    return value;
}

}  // namespace

std::optional<std::string> indent_json(std::string_view text) {
    std::string out;
    Scanner scanner(text, &out);
    if (!scanner.value(0)) return std::nullopt;
    const size_t end = scanner.pos();
    scanner.skip_space();
    if (!scanner.at_end()) return std::nullopt;
    out.append(text.substr(end));  // json.Indent copies trailing whitespace through
    return out;
}

std::optional<RawMembers> object_members(std::string_view text) {
    Scanner scanner(text, nullptr);
    scanner.skip_space();
    if (scanner.peek() != '{' || !whole_value(text)) return std::nullopt;
    // The text is valid, so a second walk only needs to find the boundaries.
    RawMembers members;
    size_t pos = scanner.pos() + 1;
    while (true) {
        Scanner member(text.substr(pos), nullptr);
        member.skip_space();
        if (member.peek() == '}') break;
        const size_t key_start = member.pos();
        if (!member.string()) return std::nullopt;
        auto key = decode_json_string(text.substr(pos + key_start, member.pos() - key_start));
        member.skip_space();
        Scanner value(text.substr(pos + member.pos() + 1), nullptr);  // past ':'
        value.skip_space();
        const size_t value_start = value.pos();
        if (!value.value(0)) return std::nullopt;
        const size_t absolute = pos + member.pos() + 1;
        members.emplace_back(key.value_or(""),
                             text.substr(absolute + value_start, value.pos() - value_start));
        value.skip_space();
        pos = absolute + value.pos();
        if (text[pos] == '}') break;
        ++pos;  // ','
    }
    return members;
}

std::optional<std::vector<std::string_view>> array_elements(std::string_view text) {
    Scanner scanner(text, nullptr);
    scanner.skip_space();
    if (scanner.peek() != '[' || !whole_value(text)) return std::nullopt;
    std::vector<std::string_view> elements;
    size_t pos = scanner.pos() + 1;
    while (true) {
        Scanner element(text.substr(pos), nullptr);
        element.skip_space();
        if (element.peek() == ']') break;
        const size_t start = element.pos();
        if (!element.value(0)) return std::nullopt;
        elements.push_back(text.substr(pos + start, element.pos() - start));
        element.skip_space();
        pos += element.pos();
        if (text[pos] == ']') break;
        ++pos;  // ','
    }
    return elements;
}

std::optional<std::string_view> find_member(const RawMembers& members, std::string_view name) {
    std::optional<std::string_view> found;
    for (const auto& [key, raw] : members) {
        if (key == name) found = raw;
    }
    return found;
}

std::optional<std::string> decode_json_string(std::string_view raw) {
    Scanner scanner(raw, nullptr);
    if (!scanner.string() || scanner.pos() != raw.size()) return std::nullopt;
    std::string out;
    const std::string_view body = raw.substr(1, raw.size() - 2);
    for (size_t i = 0; i < body.size();) {
        const unsigned char c = static_cast<unsigned char>(body[i]);
        if (c == '\\') {
            const char e = body[i + 1];
            switch (e) {
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    uint32_t rune = hex4(body.substr(i + 2, 4));
                    i += 6;
                    if (rune >= 0xD800 && rune < 0xDC00) {
                        // A high surrogate must be followed by an escaped low surrogate.
                        if (i + 6 <= body.size() && body[i] == '\\' && body[i + 1] == 'u') {
                            const uint32_t low = hex4(body.substr(i + 2, 4));
                            if (low >= 0xDC00 && low < 0xE000) {
                                append_utf8(out,
                                            0x10000 + ((rune - 0xD800) << 10) + (low - 0xDC00));
                                i += 6;
                                continue;
                            }
                        }
                        rune = 0xFFFD;
                    } else if (rune >= 0xDC00 && rune < 0xE000) {
                        rune = 0xFFFD;
                    }
                    append_utf8(out, rune);
                    continue;
                }
                default:
                    out += e;  // " \ /
            }
            i += 2;
            continue;
        }
        if (c < 0x80) {
            out += char(c);
            ++i;
            continue;
        }
        const size_t length = utf8_length(body, i);
        if (length == 0) {
            out += "\xef\xbf\xbd";
            ++i;
        } else {
            out.append(body.substr(i, length));
            i += length;
        }
    }
    return out;
}

}  // namespace narad::cli
