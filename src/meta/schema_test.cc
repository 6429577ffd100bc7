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

// Rule: only a JSON object (or `true`, which accepts any JSON) compiles as a schema.
TEST(SchemaTest, RefusesSchemasThatAreNotObjects) {
    EXPECT_FALSE(CompiledSchema::compile("{").is_ok());
    EXPECT_FALSE(CompiledSchema::compile("[1]").is_ok());
    EXPECT_FALSE(CompiledSchema::compile("false").is_ok());
    EXPECT_TRUE(CompiledSchema::compile("{}").is_ok());
    auto any = CompiledSchema::compile("true").value();
    EXPECT_TRUE(any->validate("[1,2]").is_ok());
    EXPECT_FALSE(any->validate("not json").is_ok());
}

std::string registered(std::string_view schema) {
    auto result = register_schema(schema);
    return result.is_ok() ? "ok: " + *result : result.status().message();
}

// Rule: registration refuses what Narad refuses (not an object or true, over 256 KiB, deeper
// than 64 levels, an unknown draft, a $ref out of the document or to nothing) and stores the
// document compacted.
TEST(SchemaTest, RegistrationRules) {
    EXPECT_EQ(registered(R"({ "type" : "object" })"), R"(ok: {"type":"object"})");
    EXPECT_EQ(registered("true"), "ok: true");
    EXPECT_EQ(registered("false"), "schema: a schema must be a JSON object or true");
    EXPECT_EQ(registered("null"), "schema: a schema must be a JSON object or true");
    EXPECT_EQ(registered(R"("x")"), "schema: a schema must be a JSON object or true");
    std::string big = R"({"enum":[")" + std::string(kMaxSchemaBytes, 'a') + R"("]})";
    EXPECT_EQ(registered(big), "schema: larger than 262144 bytes");
    std::string deep = R"({"items":)";
    for (int i = 0; i < 64; ++i) deep += R"({"items":)";
    deep += "{}" + std::string(65, '}');
    EXPECT_EQ(registered(deep), "schema nests deeper than 64 levels");
    EXPECT_EQ(registered(R"({"$schema":"http://example.com/mine"})"),
              "schema: $schema names no supported draft (2020-12, 2019-09, 07, 06 or 04)");
    EXPECT_EQ(registered(R"({"$schema":"http://json-schema.org/draft-07/schema#"})"),
              R"(ok: {"$schema":"http://json-schema.org/draft-07/schema#"})");
    const std::string ref_error =
        "schema: a $ref must be a JSON pointer (#/...) to a part of the same document; "
        "references to other documents are not loaded";
    EXPECT_EQ(registered(R"({"$ref":"http://evil.example/x.json"})"), ref_error);
    EXPECT_EQ(registered(R"({"definitions":{"a":{"$ref":"other.json#/a"}}})"), ref_error);
    EXPECT_EQ(registered(R"({"$ref":""})"), ref_error);
    EXPECT_EQ(registered(R"({"$ref":"#/definitions/missing"})"), ref_error);
    EXPECT_EQ(registered(R"({"definitions":{"a":{"type":"string"}},"$ref":"#/definitions/a"})")
                  .substr(0, 3),
              "ok:");
}

std::string verdict(std::string_view before, std::string_view after) {
    Status status = check_schema_compatible(before, after);
    if (status.is_ok()) return "ok";
    const std::string prefix = "invalid argument: schema incompatible with previous version: ";
    EXPECT_EQ(status.message().substr(0, prefix.size()), prefix);
    return status.message().substr(prefix.size());
}

// Rule: a new version must accept everything the previous one did, keyword by keyword (Narad's
// table): each row is one allowed and one refused change.
TEST(SchemaTest, CompatibilityIsCheckedKeywordByKeyword) {
    // type: add types, integer may become number, drop; never narrow or add.
    EXPECT_EQ(verdict(R"({"type":"integer"})", R"({"type":["integer","string"]})"), "ok");
    EXPECT_EQ(verdict(R"({"type":"integer"})", R"({"type":"number"})"), "ok");
    EXPECT_EQ(verdict(R"({"type":"integer"})", R"({})"), "ok");
    EXPECT_EQ(verdict(R"({"type":"number"})", R"({"type":"integer"})"),
              R"(schema root: type "number" no longer allowed)");
    EXPECT_EQ(verdict(R"({})", R"({"type":"string"})"), "schema root: type added");
    EXPECT_EQ(verdict(kOrderSchema,
                      R"({"type":"object","properties":{"id":{"type":"string"},"note":{}}})"),
              R"(at /properties/id: type "integer" no longer allowed)");
    // enum and const: add values, const may become an enum holding it; never remove or add.
    EXPECT_EQ(verdict(R"({"enum":[1,2]})", R"({"enum":[2,1,3]})"), "ok");
    EXPECT_EQ(verdict(R"({"const":"a"})", R"({"enum":["a","b"]})"), "ok");
    EXPECT_EQ(verdict(R"({"enum":[1,2]})", R"({"enum":[1]})"),
              "schema root: value 2 no longer allowed");
    EXPECT_EQ(verdict(R"({})", R"({"const":1})"), "schema root: const added");
    EXPECT_EQ(verdict(R"({"enum":[1,2],"const":1})", R"({"enum":[1]})"), "ok");
    // bounds: loosen or drop; never tighten, add, or make exclusive.
    EXPECT_EQ(verdict(R"({"minimum":5,"maximum":9})", R"({"minimum":4,"maximum":10})"), "ok");
    EXPECT_EQ(verdict(R"({"minimum":5,"exclusiveMinimum":true})", R"({"minimum":5})"), "ok");
    EXPECT_EQ(verdict(R"({"minimum":5})", R"({"minimum":5,"exclusiveMinimum":true})"),
              "schema root: minimum raised from 5 to 5 (made exclusive)");
    EXPECT_EQ(verdict(R"({"maximum":9})", R"({"maximum":8})"),
              "schema root: maximum lowered from 9 to 8");
    EXPECT_EQ(verdict(R"({})", R"({"minimum":0})"), "schema root: minimum added");
    // multipleOf: a divisor of the old value, or dropped.
    EXPECT_EQ(verdict(R"({"multipleOf":6})", R"({"multipleOf":3})"), "ok");
    EXPECT_EQ(verdict(R"({"multipleOf":6})", R"({"multipleOf":4})"),
              "schema root: multipleOf 4 is not a divisor of 6");
    // min*: decrease, drop, or appear as 0; max*: increase or drop, never appear.
    EXPECT_EQ(verdict(R"({"minLength":3,"maxItems":4})", R"({"minLength":2,"maxItems":5})"), "ok");
    EXPECT_EQ(verdict(R"({})", R"({"minItems":0})"), "ok");
    EXPECT_EQ(verdict(R"({"minLength":3})", R"({"minLength":4})"),
              "schema root: minLength raised from 3 to 4");
    EXPECT_EQ(verdict(R"({})", R"({"maxProperties":9})"), "schema root: maxProperties added");
    // pattern and format: identical or dropped.
    EXPECT_EQ(verdict(R"({"pattern":"^a"})", R"({})"), "ok");
    EXPECT_EQ(verdict(R"({"pattern":"^a"})", R"({"pattern":"^a|b"})"),
              "schema root: pattern changed (it may only stay identical or be removed)");
    // uniqueItems: may go, never come.
    EXPECT_EQ(verdict(R"({"uniqueItems":true})", R"({"uniqueItems":false})"), "ok");
    EXPECT_EQ(verdict(R"({})", R"({"uniqueItems":true})"), "schema root: uniqueItems added");
    // required: remove names, never add.
    EXPECT_EQ(verdict(kOrderSchema, R"({"type":"object","properties":{"id":{},"note":{}}})"), "ok");
    EXPECT_EQ(verdict(kOrderSchema, R"({"type":"object","properties":{"id":{"type":"integer"},)"
                                    R"("note":{"type":"string"}},"required":["id","note"]})"),
              R"(schema root: required property "note" added)");
    // properties: add optional ones, never remove one (`{}` does not widen a schema with them).
    EXPECT_EQ(verdict(kOrderSchema,
                      R"({"type":"object","properties":{"id":{"type":"integer"},)"
                      R"("note":{"type":"string"},"extra":{"type":"boolean"}},"required":["id"]})"),
              "ok");
    EXPECT_EQ(verdict(kOrderSchema, R"({})"), R"(schema root: property "id" removed)");
    // additionalProperties: false may open; a schema only widens; nothing new may close it.
    EXPECT_EQ(verdict(R"({"additionalProperties":false})",
                      R"({"additionalProperties":{"type":"string"}})"),
              "ok");
    EXPECT_EQ(verdict(R"({"additionalProperties":{"type":"string"}})",
                      R"({"additionalProperties":{"type":["string","null"]}})"),
              "ok");
    EXPECT_EQ(verdict(R"({"additionalProperties":{"type":"string"}})",
                      R"({"additionalProperties":false})"),
              "schema root: additionalProperties closed");
    EXPECT_EQ(verdict(R"({})", R"({"additionalProperties":false})"),
              "schema root: additionalProperties added");
    // A new property must accept what the previous additionalProperties schema did.
    EXPECT_EQ(
        verdict(
            R"({"additionalProperties":{"type":"string"}})",
            R"({"properties":{"n":{"type":"integer"}},"additionalProperties":{"type":"string"}})"),
        R"(at /properties/n: type "string" no longer allowed)");
    // ... and what a patternProperties pattern matching its name did.
    EXPECT_EQ(
        verdict(
            R"({"patternProperties":{"^x":{"type":"string"}}})",
            R"({"properties":{"xy":{"type":"integer"}},"patternProperties":{"^x":{"type":"string"}}})"),
        R"(at /properties/xy: type "string" no longer allowed)");
    EXPECT_EQ(
        verdict(
            R"({"patternProperties":{"^x":{"type":"string"}}})",
            R"({"properties":{"y":{"type":"integer"}},"patternProperties":{"^x":{"type":"string"}}})"),
        "ok");
    EXPECT_EQ(verdict(R"({"patternProperties":{"^x":{}},"additionalProperties":false})",
                      R"({"additionalProperties":false})"),
              "schema root: patternProperties removed while additionalProperties is not open");
    // items: widen or drop, never add; the tuple form only stays.
    EXPECT_EQ(verdict(R"({"items":{"type":"integer"}})", R"({"items":{"type":"number"}})"), "ok");
    EXPECT_EQ(verdict(R"({"items":{"type":"number"}})", R"({"items":{"type":"integer"}})"),
              R"(at /items: type "number" no longer allowed)");
    EXPECT_EQ(verdict(R"({})", R"({"items":{"type":"integer"}})"), "schema root: items added");
    EXPECT_EQ(verdict(R"({"items":[{}]})", R"({"items":[{},{}]})"),
              "schema root: items in the array (tuple) form may only stay identical or be removed");
    // anyOf: every old branch covered by a new one; allOf: every new branch implied by an old one.
    EXPECT_EQ(verdict(R"({"anyOf":[{"type":"string"},{"type":"integer"}]})",
                      R"({"anyOf":[{"type":"number"},{"type":"string"}]})"),
              "ok");
    EXPECT_EQ(verdict(R"({"anyOf":[{"type":"string"},{"type":"integer"}]})",
                      R"({"anyOf":[{"type":"string"}]})"),
              "schema root: anyOf branch 1 of the previous version is covered by no new branch");
    EXPECT_EQ(verdict(R"({"allOf":[{"minimum":1},{"maximum":9}]})", R"({"allOf":[{"minimum":0}]})"),
              "ok");
    EXPECT_EQ(verdict(R"({"allOf":[{"minimum":1}]})", R"({"allOf":[{"minimum":1},{"maximum":9}]})"),
              "schema root: allOf branch 1 is implied by no branch of the previous version");
    // $schema must not change; keywords it does not reason about stay identical or go.
    EXPECT_EQ(verdict(R"({"$schema":"http://json-schema.org/draft-04/schema#"})",
                      R"({"$schema":"http://json-schema.org/draft-07/schema#"})"),
              "schema root: $schema changed");
    EXPECT_EQ(verdict(R"({"oneOf":[{"type":"string"}]})", R"({})"), "ok");
    EXPECT_EQ(verdict(R"({"not":{"type":"string"}})", R"({"not":{"type":"integer"}})"),
              "schema root: not changed (it may only stay identical or be removed)");
    EXPECT_EQ(verdict(R"({})", R"({"oneOf":[{}]})"), "schema root: oneOf added");
    // A nested schema may always become {} or true.
    EXPECT_EQ(verdict(R"({"properties":{"a":{"type":"string","minLength":3}}})",
                      R"({"properties":{"a":true}})"),
              "ok");
    // Annotations and definitions change freely.
    EXPECT_EQ(verdict(R"({"title":"a","type":"string"})",
                      R"({"title":"b","description":"c","type":"string"})"),
              "ok");
}

// Rule: $ref pointers into the document are followed on both sides, recursion compares as
// recursive types do (a pair already under comparison counts as compatible), "identical" follows
// references, and a $ref with sibling keywords is refused (fail closed).
TEST(SchemaTest, ReferencesAreResolvedBeforeComparing) {
    const char* tree_v1 =
        R"({"definitions":{"node":{"type":"object","properties":{"v":{"type":"integer"},)"
        R"("kids":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},)"
        R"("$ref":"#/definitions/node"})";
    const char* tree_v2 =
        R"({"definitions":{"node":{"type":"object","properties":{"v":{"type":"number"},)"
        R"("kids":{"type":"array","items":{"$ref":"#/definitions/node"}},"tag":{}}}},)"
        R"("$ref":"#/definitions/node"})";
    EXPECT_EQ(verdict(tree_v1, tree_v2), "ok");
    EXPECT_EQ(verdict(tree_v2, tree_v1), R"(at /properties/v: type "number" no longer allowed)");
    EXPECT_EQ(
        verdict(R"({"definitions":{"s":{"type":"string"}},"not":{"$ref":"#/definitions/s"}})",
                R"({"definitions":{"s":{"type":"integer"}},"not":{"$ref":"#/definitions/s"}})"),
        "schema root: not changed (it may only stay identical or be removed)");
    EXPECT_EQ(
        verdict(
            R"({"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}})",
            R"({"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","minLength":1}}})"),
        "at /properties/a: a $ref with sibling keywords cannot be compared");
    // A loop of nothing but $ref accepts nothing: anything may replace it.
    EXPECT_EQ(
        verdict(R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}},)"
                R"("properties":{"x":{"$ref":"#/definitions/a"}}})",
                R"({"properties":{"x":{"type":"string"}}})"),
        "ok");
}

// Rule: a schema equal to the current one as a JSON value, or differing only in annotations
// wherever a subschema sits, is unchanged; a property named `description` is not an annotation.
TEST(SchemaTest, AnnotationOnlyChangesAreNoChange) {
    EXPECT_TRUE(schema_unchanged(kOrderSchema,
                                 R"({"required":["id"],"type":"object","properties":)"
                                 R"({"note":{"type":"string"},"id":{"type":"integer"}}})"));
    EXPECT_TRUE(schema_unchanged(
        R"({"type":"object","properties":{"a":{"type":"string","title":"A"}}})",
        R"({"type":"object","description":"x","properties":{"a":{"type":"string","examples":["q"],"$comment":"c"}}})"));
    EXPECT_FALSE(schema_unchanged(R"({"properties":{"a":{}}})",
                                  R"({"properties":{"a":{},"description":{}}})"));
    EXPECT_FALSE(schema_unchanged(R"({"type":"string"})", R"({"type":["string","null"]})"));
}

// Rule: the comparison is bounded: a schema whose branches would make it exponential is refused
// with a clear reason instead of running without end.
TEST(SchemaTest, ComparisonWorkIsBounded) {
    std::string before = "{}";
    std::string after = "{}";
    for (int i = 0; i < 12; ++i) {
        before = R"({"anyOf":[)" + before + "," + before + "," + before + R"(,{"type":"null"}]})";
        after = R"({"anyOf":[)" + after + "," + after + "," + after + "]}";
    }
    std::string text = verdict(before, after);
    EXPECT_NE(text.find("too complex to compare"), std::string::npos) << text;
}

}  // namespace
}  // namespace narad::meta
