#include "meta/schema.h"

#include <gtest/gtest.h>

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
