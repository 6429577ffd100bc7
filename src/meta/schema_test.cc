#include "meta/schema.h"

#include <gtest/gtest.h>

#include <functional>

#include "base/small_stack_for_test.h"

namespace narad::meta {
namespace {

constexpr const char* kOrderSchema =
    R"({"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},)"
    R"("required":["id"]})";

// Rule: payloads are validated against the topic's schema; violations and non-JSON are refused.
TEST(SchemaTest, ValidatesPayloads) {
    auto schema = CompiledSchema::compile(kOrderSchema).value();
    EXPECT_TRUE(schema->validate(R"({"id":7,"note":"x"})").is_ok());
    Status missing = schema->validate(R"({"note":"x"})");
    EXPECT_EQ(missing.code(), Errc::invalid_argument);
    EXPECT_NE(missing.message().find("required"), std::string::npos);
    Status wrong_type = schema->validate(R"({"id":"seven"})");
    EXPECT_NE(wrong_type.message().find("type"), std::string::npos);
    Status not_json = schema->validate("hello");
    EXPECT_NE(not_json.message().find("invalid JSON payload"), std::string::npos);
}

std::string nested_arrays(size_t levels) {
    return std::string(levels, '[') + std::string(levels, ']');
}

void on_small_stack(std::function<void()> fn) {
    testing::run_on_small_stack(256 * 1024, std::move(fn));
}

// Rule (regression: one deep produce took the node down): a payload nested deeper than 256 levels
// is refused before the validator walks it; one at 256 is validated; neither may overflow a
// thread's stack, even at 300,000 levels.
TEST(SchemaTest, DeepPayloadIsRefusedWithoutRecursion) {
    auto schema = CompiledSchema::compile(R"({"type":"array"})").value();
    Status deep, limit;
    on_small_stack([&] {
        deep = schema->validate(nested_arrays(300'000));
        limit = schema->validate(nested_arrays(256));
    });
    EXPECT_EQ(deep.code(), Errc::invalid_argument);
    EXPECT_EQ(deep.message(), "payload nests deeper than 256 levels");
    EXPECT_TRUE(limit.is_ok()) << limit.to_string();
    EXPECT_EQ(schema->validate(nested_arrays(257)).message(),
              "payload nests deeper than 256 levels");
}

// Rule: a schema nested deeper than 256 levels does not compile, is not compacted and is not
// compared: each is refused before rapidjson walks it.
TEST(SchemaTest, DeepSchemaIsRefused) {
    std::string deep = R"({"items":)" + nested_arrays(100'000) + "}";
    Status compiled, compacted, compared;
    on_small_stack([&] {
        compiled = CompiledSchema::compile(deep).status();
        compacted = compact_schema(deep).status();
        compared = check_schema_compatible(kOrderSchema, deep);
    });
    for (const Status& status : {compiled, compacted, compared}) {
        EXPECT_EQ(status.code(), Errc::invalid_argument);
        EXPECT_EQ(status.message(), "schema nests deeper than 256 levels");
    }
}

// Rule: only a JSON object compiles as a schema.
TEST(SchemaTest, RefusesSchemasThatAreNotObjects) {
    EXPECT_FALSE(CompiledSchema::compile("{").is_ok());
    EXPECT_FALSE(CompiledSchema::compile("[1]").is_ok());
    EXPECT_TRUE(CompiledSchema::compile("{}").is_ok());
}

// Rule: a new schema may not drop a property, narrow a type, or add or drop a required name.
TEST(SchemaTest, CompatibilityFollowsNaradsRules) {
    EXPECT_TRUE(check_schema_compatible(
                    kOrderSchema,
                    R"({"properties":{"id":{"type":["integer","string"]},"note":{},"x":{}},)"
                    R"("required":["id"]})")
                    .is_ok());
    EXPECT_NE(check_schema_compatible(
                  kOrderSchema, R"({"properties":{"id":{"type":"integer"}},"required":["id"]})")
                  .message()
                  .find("property \"note\" removed"),
              std::string::npos);
    EXPECT_NE(
        check_schema_compatible(
            kOrderSchema, R"({"properties":{"id":{"type":"string"},"note":{}},"required":["id"]})")
            .message()
            .find("type changed from [integer] to [string]"),
        std::string::npos);
    EXPECT_NE(check_schema_compatible(
                  kOrderSchema, R"({"properties":{"id":{},"note":{}},"required":["id","note"]})")
                  .message()
                  .find("required property \"note\" added"),
              std::string::npos);
}

}  // namespace
}  // namespace narad::meta
