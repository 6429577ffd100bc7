#include "base/json_scan.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "base/small_stack_for_test.h"

namespace narad::json_scan {
namespace {

std::string nested_arrays(size_t levels) {
    return std::string(levels, '[') + std::string(levels, ']');
}

void on_small_stack(std::function<void()> fn) {
    testing::run_on_small_stack(64 * 1024, std::move(fn));
}

// Rule: the scanner accepts exactly the JSON grammar (Go's json.Valid) and reports where a value
// ends.
TEST(JsonScanTest, AcceptsTheGrammarAndNothingElse) {
    for (std::string_view good :
         {"0", "-1.5e+3", "\"a\\u00e9\\n\"", "true", "null", "[]", "{}", " [1, {\"a\": [null]}] ",
          "{\"a\":1,\"b\":{\"c\":[]}}", "\"\xff\""}) {
        EXPECT_EQ(scan_document(good, kGoMaxDepth).outcome, Outcome::ok) << good;
    }
    for (std::string_view bad :
         {"",           " ",     "01",    "1.",       "-",         "[1,]", "{\"a\"}",
          "{\"a\":1,}", "[1 2]", "{1:2}", "\"\\x\"",  "\"a",       "tru",  "[",
          "]",          "{}}",   "1 2",   "\"\x01\"", "{\"a\" 1}", "nul"}) {
        EXPECT_NE(scan_document(bad, kGoMaxDepth).outcome, Outcome::ok) << bad;
    }
    Scan scan = scan_value("  [1,[2]] tail", 0, kGoMaxDepth);
    EXPECT_EQ(scan.outcome, Outcome::ok);
    EXPECT_EQ(scan.end, 9u);
    EXPECT_EQ(scan.depth, 2u);
}

// Rule: a value nested exactly to the limit is fine; one level more is too_deep, and the scan
// stops there without reading the rest.
TEST(JsonScanTest, DepthLimitIsExact) {
    EXPECT_EQ(scan_document(nested_arrays(256), 256).outcome, Outcome::ok);
    EXPECT_EQ(scan_document(nested_arrays(257), 256).outcome, Outcome::too_deep);
    EXPECT_TRUE(nests_deeper_than(nested_arrays(257), 256));
    EXPECT_FALSE(nests_deeper_than(nested_arrays(256), 256));
    EXPECT_FALSE(nests_deeper_than("not json [[[[", 2));
    Scan cut = scan_value(std::string(300, '{'), 0, 10);
    EXPECT_EQ(cut.outcome, Outcome::syntax_error);  // `{{` is not a valid object start
    Scan deep = scan_value("[[[[x", 0, 3);
    EXPECT_EQ(deep.outcome, Outcome::too_deep);
    EXPECT_EQ(deep.end, 3u);
}

// Rule: no input depth can overflow the stack: 300,000 levels scan (and fail) on a 64 KiB stack.
TEST(JsonScanTest, DeepNestingNeverRecurses) {
    const std::string deep = nested_arrays(300'000);
    Scan limited, unlimited;
    on_small_stack([&] {
        limited = scan_document(deep, kGoMaxDepth);
        unlimited = scan_document(deep, 1'000'000);
    });
    EXPECT_EQ(limited.outcome, Outcome::too_deep);
    EXPECT_EQ(unlimited.outcome, Outcome::ok);
    EXPECT_EQ(unlimited.depth, 300'000u);
}

// Rule: members and elements come back as the raw text the client wrote, in order, with
// duplicates; the last duplicate is the one find_member returns.
TEST(JsonScanTest, RawMembersAndElements) {
    auto members = object_members(R"( {"a" : {"x": 1 }, "b":[1, 2], "a":"two"} )");
    ASSERT_TRUE(members);
    ASSERT_EQ(members->size(), 3u);
    EXPECT_EQ((*members)[0].first, "a");
    EXPECT_EQ((*members)[0].second, R"({"x": 1 })");
    EXPECT_EQ((*members)[1].second, "[1, 2]");
    EXPECT_EQ(find_member(*members, "a"), "\"two\"");
    EXPECT_FALSE(find_member(*members, "c"));
    EXPECT_FALSE(object_members("[1]"));
    EXPECT_FALSE(object_members("{\"a\":1} x"));
    EXPECT_FALSE(object_members("{\"a\":" + nested_arrays(20) + "}", 10));
    auto elements = array_elements("[ 1 , \"s\", {} ,[]]");
    ASSERT_TRUE(elements);
    EXPECT_EQ(*elements, (std::vector<std::string_view>{"1", "\"s\"", "{}", "[]"}));
    EXPECT_TRUE(array_elements("[]")->empty());
    EXPECT_FALSE(array_elements("{}"));
}

// Rule: string literals decode as Go's json.Unmarshal does (escapes, surrogate pairs, U+FFFD for
// what cannot be decoded).
// Rule: a string literal ends at its first unescaped quote and fails at a control byte or a bad
// escape wherever the byte falls, including inside or at the edge of the eight-byte words the
// scanner skips at once. Checked against a byte-at-a-time reference for every position of every
// byte near the boundaries that matter.
TEST(JsonScanTest, StringEndIsTheSameAtEveryPositionOfAWord) {
    auto reference = [](std::string_view text) -> std::optional<size_t> {
        for (size_t pos = 1; pos < text.size(); ++pos) {
            const unsigned char c = static_cast<unsigned char>(text[pos]);
            if (c == '"') return pos + 1;
            if (c < 0x20) return std::nullopt;
            if (c == '\\') {
                if (++pos >= text.size()) return std::nullopt;
                if (text[pos] == 'u') {
                    if (pos + 4 >= text.size()) return std::nullopt;
                    for (size_t k = 1; k <= 4; ++k) {
                        if (!std::isxdigit(static_cast<unsigned char>(text[pos + k]))) {
                            return std::nullopt;
                        }
                    }
                    pos += 4;
                } else if (std::string_view("\"\\/bfnrt").find(text[pos]) ==
                           std::string_view::npos) {
                    return std::nullopt;
                }
            }
        }
        return std::nullopt;
    };
    const std::vector<std::string> specials = {
        "\"",   "\\",   "\\n",  "\\u00e9", "\\x", std::string(1, '\0'),
        "\x1f", " ",    "!",    "#",       "[",   "]",
        "\x7f", "\x80", "\xff", "\\\"",    "\\\\"};
    size_t checked = 0;
    for (size_t length = 0; length <= 24; ++length) {
        for (size_t at = 0; at <= length; ++at) {
            for (const std::string& special : specials) {
                std::string body(length, 'a');
                body.insert(at, special);
                for (const std::string& text : {"\"" + body + "\"", "\"" + body}) {
                    ASSERT_EQ(scan_string(text, 0), reference(text))
                        << "length " << length << ", at " << at << ": " << text;
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 10'000u);
}

TEST(JsonScanTest, DecodesStrings) {
    EXPECT_EQ(decode_string(R"("a\"\\\/\b\f\n\r\t")"), "a\"\\/\b\f\n\r\t");
    EXPECT_EQ(decode_string(R"("\u00e9\ud83d\ude00")"), "\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(decode_string(R"("\ud83d")"), "\xef\xbf\xbd");
    EXPECT_EQ(decode_string("\"\xff\""), "\xef\xbf\xbd");
    EXPECT_FALSE(decode_string("\"a\" "));
    EXPECT_FALSE(decode_string("a"));
}

// A random JSON-ish document: mostly valid values, with depth up to `depth`, in ASCII.
std::string random_value(std::mt19937_64& rng, int depth) {
    switch (depth <= 0 ? rng() % 4 : rng() % 6) {
        case 0:
            return std::to_string(static_cast<int64_t>(rng() % 2001) - 1000);
        case 1:
            return rng() % 2 ? "\"s\\n\"" : "\"\"";
        case 2:
            return rng() % 2 ? "true" : "null";
        case 3:
            return "1.5e-3";
        case 4: {
            std::string out = "[";
            for (size_t i = 0, n = rng() % 4; i < n; ++i) {
                if (i > 0) out += rng() % 8 ? "," : " , ";
                out += random_value(rng, depth - 1);
            }
            return out + "]";
        }
        default: {
            std::string out = "{";
            for (size_t i = 0, n = rng() % 4; i < n; ++i) {
                if (i > 0) out += ",";
                out += "\"k" + std::to_string(i) + "\":" + random_value(rng, depth - 1);
            }
            return out + "}";
        }
    }
}

std::string mutate(std::string text, std::mt19937_64& rng) {
    static constexpr std::string_view kBytes = "{}[]\",:\\ 0123456789.-+eEtrufalsn";
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !text.empty(); --edits) {
        size_t at = rng() % text.size();
        switch (rng() % 4) {
            case 0:
                text[at] = kBytes[rng() % kBytes.size()];
                break;
            case 1:
                text.erase(at, 1 + rng() % 3);
                break;
            case 2:
                text.insert(at, 1, kBytes[rng() % kBytes.size()]);
                break;
            default:
                text.insert(at, std::string(1 + rng() % 40, rng() % 2 ? '[' : '{'));
        }
    }
    return text;
}

// nlohmann refuses a number beyond a double's range (9E738); the grammar, and Go, accept it.
bool overflows(const std::string& text) {
    try {
        nlohmann::json parsed = nlohmann::json::parse(text);
        (void)parsed;
    } catch (const nlohmann::json::out_of_range&) {
        return true;
    } catch (const nlohmann::json::exception&) {
    }
    return false;
}

// Rule (fuzz): on random and mutated documents the scanner agrees with an independent parser
// (nlohmann's accept) on validity, and its depth limit never accepts a deeper document. Bounded
// to a few seconds.
// Rule: the members and elements of a valid document are its values exactly as written, however
// their strings escape quotes and backslashes or hold brackets: each slice parses to the value an
// independent parser finds at that place.
TEST(JsonScanTest, MembersAndElementsAgreeWithAnIndependentParser) {
    const std::vector<std::string> tricky = {R"("a\"b")",
                                             R"("\\")",
                                             R"("\\\"]")",
                                             R"("]}[{,:")",
                                             R"("\u0022")",
                                             R"("x\\\\")",
                                             R"(["\\",{"q\"":"\\\""}])"};
    std::mt19937_64 rng(0xb0da);
    size_t checked = 0;
    for (int run = 0; run < 3000; ++run) {
        std::vector<std::string> values;
        for (size_t i = 0, n = 1 + rng() % 5; i < n; ++i) {
            values.push_back(rng() % 3 == 0 ? tricky[rng() % tricky.size()]
                                            : random_value(rng, 1 + static_cast<int>(rng() % 4)));
        }
        std::string array = "[";
        std::string object = "{";
        for (size_t i = 0; i < values.size(); ++i) {
            array += (i > 0 ? " , " : "") + values[i];
            object +=
                (i > 0 ? "," : "") + std::string("\"k") + std::to_string(i) + "\" : " + values[i];
        }
        array += "]";
        object += "}";
        ASSERT_TRUE(nlohmann::json::accept(array)) << array;
        auto elements = array_elements(array);
        ASSERT_TRUE(elements) << array;
        ASSERT_EQ(elements->size(), values.size()) << array;
        auto members = object_members(object);
        ASSERT_TRUE(members) << object;
        ASSERT_EQ(members->size(), values.size()) << object;
        for (size_t i = 0; i < values.size(); ++i) {
            const auto expected = nlohmann::json::parse(values[i]);
            ASSERT_EQ(nlohmann::json::parse((*elements)[i]), expected) << array;
            ASSERT_EQ(nlohmann::json::parse((*members)[i].second), expected) << object;
            ASSERT_EQ((*members)[i].first, "k" + std::to_string(i)) << object;
            ++checked;
        }
    }
    EXPECT_GT(checked, 3000u);
}

TEST(JsonScanTest, FuzzAgreesWithAnIndependentParser) {
    std::mt19937_64 rng(0x5eed);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    size_t runs = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string text = random_value(rng, 1 + static_cast<int>(rng() % 8));
        if (rng() % 3 != 0) text = mutate(std::move(text), rng);
        Scan scan = scan_document(text, kGoMaxDepth);
        if (scan.outcome == Outcome::ok) {
            ASSERT_TRUE(nlohmann::json::accept(text) || overflows(text)) << text;
        } else {
            ASSERT_FALSE(nlohmann::json::accept(text)) << text;
        }
        uint32_t limit = static_cast<uint32_t>(rng() % 6);
        Scan limited = scan_document(text, limit);
        if (limited.outcome == Outcome::ok) {
            ASSERT_LE(limited.depth, limit) << text;
            ASSERT_EQ(scan.outcome, Outcome::ok) << text;
        }
        if (scan.outcome == Outcome::ok) {
            ASSERT_EQ(limited.outcome == Outcome::ok, scan.depth <= limit) << text;
        }
        ++runs;
    }
    EXPECT_GT(runs, 1000u);
}

}  // namespace
}  // namespace narad::json_scan
