#include "meta/schema.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <set>

#include "base/json_scan.h"

namespace narad::meta {
namespace {

// rapidjson's parser recurses unless told otherwise; this one keeps its stack on the heap.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;

// Walking a document (compiling, writing, validating it) recurses once per level in rapidjson,
// so no document deeper than Narad's limit reaches it.
Status check_depth(std::string_view text, std::string_view what) {
    if (!json_scan::nests_deeper_than(text, json_scan::kPayloadMaxDepth)) return Status::ok();
    return Status(Errc::invalid_argument, std::string(what) + " nests deeper than " +
                                              std::to_string(json_scan::kPayloadMaxDepth) +
                                              " levels");
}

}  // namespace

struct CompiledSchema::State {
    rapidjson::Document document;
    std::unique_ptr<rapidjson::SchemaDocument> schema;
};

CompiledSchema::CompiledSchema(std::unique_ptr<State> state) : state_(std::move(state)) {}
CompiledSchema::~CompiledSchema() = default;

Result<std::shared_ptr<const CompiledSchema>> CompiledSchema::compile(std::string_view text) {
    NARAD_RETURN_IF_ERROR(check_depth(text, "schema"));
    auto state = std::make_unique<State>();
    state->document.Parse<kParseFlags>(text.data(), text.size());
    if (state->document.HasParseError()) {
        return Status(Errc::invalid_argument,
                      std::string("schema: not valid JSON: ") +
                          rapidjson::GetParseError_En(state->document.GetParseError()));
    }
    if (!state->document.IsObject()) {
        return Status(Errc::invalid_argument, "schema: a schema must be a JSON object");
    }
    // No remote provider is given, so a $ref to another document never reaches the network.
    state->schema = std::make_unique<rapidjson::SchemaDocument>(state->document);
    return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(state)));
}

Status CompiledSchema::validate(std::string_view payload) const {
    NARAD_RETURN_IF_ERROR(check_depth(payload, "payload"));
    // The validator takes the parser's events directly: no document is built, and neither the
    // parse nor the validation recurses on the payload's depth beyond the limit checked above.
    rapidjson::SchemaValidator validator(*state_->schema);
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(payload.data(), payload.size());
    rapidjson::ParseResult parsed = reader.Parse<kParseFlags>(stream, validator);
    if (validator.IsValid() && parsed.IsError()) {
        return Status(Errc::invalid_argument,
                      std::string("invalid argument: schema: invalid JSON payload: ") +
                          rapidjson::GetParseError_En(parsed.Code()) + " (at byte " +
                          std::to_string(parsed.Offset()) + ")");
    }
    if (validator.IsValid()) return Status::ok();
    rapidjson::StringBuffer schema_pointer;
    rapidjson::StringBuffer document_pointer;
    validator.GetInvalidSchemaPointer().StringifyUriFragment(schema_pointer);
    validator.GetInvalidDocumentPointer().StringifyUriFragment(document_pointer);
    return Status(Errc::invalid_argument,
                  std::string("invalid argument: schema: payload at '") +
                      document_pointer.GetString() + "' violates keyword '" +
                      validator.GetInvalidSchemaKeyword() + "' of schema at '" +
                      schema_pointer.GetString() + "'");
}

Result<std::string> compact_schema(std::string_view text) {
    NARAD_RETURN_IF_ERROR(check_depth(text, "schema"));
    rapidjson::Document document;
    document.Parse<kParseFlags>(text.data(), text.size());
    if (document.HasParseError()) {
        return Status(Errc::invalid_argument, "schema is not valid JSON");
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    document.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

std::set<std::string> types_of(const rapidjson::Value& property) {
    std::set<std::string> types;
    if (!property.IsObject() || !property.HasMember("type")) return types;
    const auto& type = property["type"];
    if (type.IsString()) types.insert(type.GetString());
    if (type.IsArray()) {
        for (const auto& t : type.GetArray()) {
            if (t.IsString()) types.insert(t.GetString());
        }
    }
    return types;
}

std::string join_types(const std::set<std::string>& types) {
    std::string out = "[";
    for (const auto& t : types) {
        if (out.size() > 1) out += " ";
        out += t;
    }
    return out + "]";
}

std::set<std::string> required_of(const rapidjson::Value& schema) {
    std::set<std::string> names;
    if (schema.IsObject() && schema.HasMember("required") && schema["required"].IsArray()) {
        for (const auto& n : schema["required"].GetArray()) {
            if (n.IsString()) names.insert(n.GetString());
        }
    }
    return names;
}

}  // namespace

Status check_schema_compatible(std::string_view previous, std::string_view next) {
    NARAD_RETURN_IF_ERROR(check_depth(next, "schema"));
    rapidjson::Document before;
    rapidjson::Document after;
    before.Parse<kParseFlags>(previous.data(), previous.size());
    after.Parse<kParseFlags>(next.data(), next.size());
    if (before.HasParseError() || !before.IsObject()) return Status::ok();
    if (after.HasParseError() || !after.IsObject()) {
        return Status(Errc::invalid_argument, "schema is not valid JSON");
    }
    auto fail = [](const std::string& reason) {
        return Status(Errc::invalid_argument,
                      "invalid argument: schema incompatible with previous version: " + reason);
    };
    static const rapidjson::Value kEmpty(rapidjson::kObjectType);
    const rapidjson::Value& old_properties =
        before.HasMember("properties") && before["properties"].IsObject() ? before["properties"]
                                                                          : kEmpty;
    const rapidjson::Value& new_properties =
        after.HasMember("properties") && after["properties"].IsObject() ? after["properties"]
                                                                        : kEmpty;
    for (auto it = old_properties.MemberBegin(); it != old_properties.MemberEnd(); ++it) {
        std::string name = it->name.GetString();
        if (!new_properties.HasMember(it->name)) return fail("property \"" + name + "\" removed");
        std::set<std::string> old_types = types_of(it->value);
        std::set<std::string> new_types = types_of(new_properties[it->name]);
        if (old_types.empty() || new_types.empty()) continue;
        for (const auto& t : old_types) {
            if (!new_types.count(t)) {
                return fail("property \"" + name + "\": type changed from " +
                            join_types(old_types) + " to " + join_types(new_types));
            }
        }
    }
    std::set<std::string> old_required = required_of(before);
    std::set<std::string> new_required = required_of(after);
    for (const auto& name : old_required) {
        if (!new_required.count(name) && !new_properties.HasMember(name.c_str())) {
            return fail("required property \"" + name + "\" removed");
        }
    }
    for (const auto& name : new_required) {
        if (!old_required.count(name)) return fail("required property \"" + name + "\" added");
    }
    return Status::ok();
}

}  // namespace narad::meta
