#include "meta/schema.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/pointer.h>
#include <rapidjson/reader.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cmath>
#include <optional>
#include <regex>
#include <set>
#include <unordered_set>
#include <vector>

#include "base/json_scan.h"
#include "base/metrics.h"

namespace narad::meta {
namespace {

using Value = rapidjson::Value;

// rapidjson's parser recurses unless told otherwise; this one keeps its stack on the heap.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;

// Payloads above this size are timed (Narad's validation-capacity threshold).
constexpr size_t kTimedPayloadBytes = 16 * 1024;

metrics::Family<metrics::Counter>& rejections() {
    static auto& family = metrics::Registry::global().counter(
        "narad_schema_rejections_total",
        "Payloads refused by a topic's schema, by reason: depth (nested deeper than 256 levels), "
        "malformed (not one JSON text), invalid (the schema refused it).",
        {"reason"});
    return family;
}

metrics::Histogram& validation_seconds() {
    static auto& histogram =
        metrics::Registry::global()
            .histogram("narad_schema_validation_seconds",
                       "Time to validate a payload above 16 KiB against its topic's schema.",
                       {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1})
            .get();
    return histogram;
}

metrics::Gauge& validations_in_flight() {
    static auto& gauge = metrics::Registry::global()
                             .gauge("narad_schema_validations_in_flight",
                                    "Validations of payloads above 16 KiB running now.")
                             .get();
    return gauge;
}

// Walking a document (compiling, writing, validating it) recurses once per level in rapidjson,
// so no document deeper than Narad's limit reaches it.
Status check_depth(std::string_view text, std::string_view what,
                   int limit = json_scan::kPayloadMaxDepth) {
    if (!json_scan::nests_deeper_than(text, limit)) return Status::ok();
    return Status(Errc::invalid_argument,
                  std::string(what) + " nests deeper than " + std::to_string(limit) + " levels");
}

// Parses a schema document already checked for depth; `true` stands for the empty schema.
Status parse_schema(std::string_view text, rapidjson::Document& document) {
    document.Parse<kParseFlags>(text.data(), text.size());
    if (document.HasParseError()) {
        return Status(Errc::invalid_argument,
                      std::string("schema: not valid JSON: ") +
                          rapidjson::GetParseError_En(document.GetParseError()));
    }
    if (document.IsTrue()) document.SetObject();
    if (!document.IsObject()) {
        return Status(Errc::invalid_argument, "schema: a schema must be a JSON object or true");
    }
    return Status::ok();
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
    NARAD_RETURN_IF_ERROR(parse_schema(text, state->document));
    // No remote provider is given, so a $ref to another document never reaches the network.
    state->schema = std::make_unique<rapidjson::SchemaDocument>(state->document);
    return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(state)));
}

Status CompiledSchema::validate(std::string_view payload) const {
    if (Status depth = check_depth(payload, "payload"); !depth.is_ok()) {
        rejections().with({"depth"}).inc();
        return depth;
    }
    bool timed = payload.size() > kTimedPayloadBytes;
    std::chrono::steady_clock::time_point started;
    if (timed) {
        validations_in_flight().add(1);
        started = std::chrono::steady_clock::now();
    }
    // The validator takes the parser's events directly: no document is built, and neither the
    // parse nor the validation recurses on the payload's depth beyond the limit checked above.
    rapidjson::SchemaValidator validator(*state_->schema);
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(payload.data(), payload.size());
    rapidjson::ParseResult parsed = reader.Parse<kParseFlags>(stream, validator);
    if (timed) {
        validations_in_flight().add(-1);
        validation_seconds().observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    if (validator.IsValid() && parsed.IsError()) {
        rejections().with({"malformed"}).inc();
        return Status(Errc::invalid_argument,
                      std::string("invalid argument: schema: invalid JSON payload: ") +
                          rapidjson::GetParseError_En(parsed.Code()) + " (at byte " +
                          std::to_string(parsed.Offset()) + ")");
    }
    if (validator.IsValid()) return Status::ok();
    rejections().with({"invalid"}).inc();
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

constexpr std::array<std::string_view, 10> kKnownDrafts = {
    "http://json-schema.org/draft-04/schema#",      "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema#",      "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema#",      "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2019-09/schema#",
    "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#",
};

std::string_view view_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// The target of a `$ref` inside `root`, or nullptr when it is not a JSON pointer into the
// document or points at nothing.
const Value* resolve_pointer(const Value& root, std::string_view ref) {
    if (ref.empty() || ref.front() != '#') return nullptr;
    if (ref == "#") return &root;
    rapidjson::Pointer pointer(ref.data(), ref.size());
    if (!pointer.IsValid()) return nullptr;
    return pointer.Get(root);
}

// Every `$ref` in the document, wherever it sits, must be a JSON pointer to a part of it. The
// error never repeats the reference. Recursion is bounded by the depth checked before.
Status check_refs(const Value& root, const Value& value) {
    if (value.IsObject()) {
        for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
            if (view_of(it->name) == "$ref" && it->value.IsString() &&
                resolve_pointer(root, view_of(it->value)) == nullptr) {
                return Status(Errc::invalid_argument,
                              "schema: a $ref must be a JSON pointer (#/...) to a part of the "
                              "same document; references to other documents are not loaded");
            }
            NARAD_RETURN_IF_ERROR(check_refs(root, it->value));
        }
    } else if (value.IsArray()) {
        for (const auto& item : value.GetArray()) NARAD_RETURN_IF_ERROR(check_refs(root, item));
    }
    return Status::ok();
}

}  // namespace

Result<std::string> register_schema(std::string_view text) {
    if (text.size() > kMaxSchemaBytes) {
        return Status(Errc::invalid_argument,
                      "schema: larger than " + std::to_string(kMaxSchemaBytes) + " bytes");
    }
    NARAD_RETURN_IF_ERROR(check_depth(text, "schema", kMaxSchemaDepth));
    rapidjson::Document document;
    NARAD_RETURN_IF_ERROR(parse_schema(text, document));
    if (document.HasMember("$schema")) {
        const Value& draft = document["$schema"];
        bool known = draft.IsString() && std::find(kKnownDrafts.begin(), kKnownDrafts.end(),
                                                   view_of(draft)) != kKnownDrafts.end();
        if (!known) {
            return Status(Errc::invalid_argument,
                          "schema: $schema names no supported draft (2020-12, 2019-09, 07, 06 "
                          "or 04)");
        }
    }
    NARAD_RETURN_IF_ERROR(check_refs(document, document));
    NARAD_RETURN_IF_ERROR(CompiledSchema::compile(text).status());
    return compact_schema(text);
}

namespace {

bool is_annotation(std::string_view keyword) {
    static const std::set<std::string_view> kAnnotations = {"title",    "description", "default",
                                                            "examples", "$comment",    "deprecated",
                                                            "readOnly", "writeOnly"};
    return kAnnotations.count(keyword) > 0;
}

// Keywords whose value is a map of names to schemas, one schema, or a list of schemas.
bool holds_schema_map(std::string_view k) {
    return k == "properties" || k == "patternProperties" || k == "definitions" || k == "$defs" ||
           k == "dependencies" || k == "dependentSchemas";
}
bool holds_schemas(std::string_view k) {
    return k == "items" || k == "additionalProperties" || k == "additionalItems" || k == "not" ||
           k == "if" || k == "then" || k == "else" || k == "contains" || k == "propertyNames" ||
           k == "anyOf" || k == "allOf" || k == "oneOf" || k == "prefixItems";
}

// Keywords that constrain no value: annotations, the draft, identifiers and definitions (reached
// only through $ref).
bool constrains_nothing(std::string_view k) {
    return is_annotation(k) || k == "$schema" || k == "$id" || k == "id" || k == "definitions" ||
           k == "$defs";
}

// Equal as schemas, ignoring annotations wherever a subschema sits (a property named
// `description` is a property, not an annotation).
bool same_schema(const Value& a, const Value& b);

bool same_schemas(const Value& a, const Value& b) {
    if (!a.IsArray() || !b.IsArray()) return same_schema(a, b);
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!same_schema(a[i], b[i])) return false;
    }
    return true;
}

bool same_schema_map(const Value& a, const Value& b) {
    if (!a.IsObject() || !b.IsObject()) return a == b;
    if (a.MemberCount() != b.MemberCount()) return false;
    for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it) {
        auto other = b.FindMember(it->name);
        if (other == b.MemberEnd() || !same_schema(it->value, other->value)) return false;
    }
    return true;
}

size_t keywords_without_annotations(const Value& schema) {
    size_t count = 0;
    for (auto it = schema.MemberBegin(); it != schema.MemberEnd(); ++it) {
        if (!is_annotation(view_of(it->name))) ++count;
    }
    return count;
}

bool same_schema(const Value& a, const Value& b) {
    if (!a.IsObject() || !b.IsObject()) return a == b;
    if (keywords_without_annotations(a) != keywords_without_annotations(b)) return false;
    for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it) {
        std::string_view keyword = view_of(it->name);
        if (is_annotation(keyword)) continue;
        auto other = b.FindMember(it->name);
        if (other == b.MemberEnd()) return false;
        bool same = holds_schema_map(keyword) ? same_schema_map(it->value, other->value)
                    : holds_schemas(keyword)  ? same_schemas(it->value, other->value)
                                              : it->value == other->value;
        if (!same) return false;
    }
    return true;
}

std::string escape_pointer_token(std::string_view token) {
    std::string out;
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

enum class Shorten { no, yes };

std::string json_text(const Value& v, Shorten shorten = Shorten::yes) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    std::string text(buffer.GetString(), buffer.GetSize());
    if (shorten == Shorten::yes && text.size() > 64) text = text.substr(0, 61) + "...";
    return text;
}

using Verdict = std::optional<std::string>;  // nullopt: compatible; else "at <where>: <why>"

// Compares two schema documents keyword by keyword (schema-rules in docs/api.md). Fails closed:
// a construct it does not reason about must stay identical or go where dropping it only widens.
class Comparer {
  public:
    Comparer(const Value& old_root, const Value& new_root)
        : old_root_(old_root), new_root_(new_root) {}

    Verdict compare(const Value& before, const Value& after, const std::string& at) {
        if (++steps_ > kMaxSteps || depth_ >= kMaxDepth) {
            exhausted_ = true;
            return fail(at,
                        "the schemas are too complex to compare (too many branches or "
                        "references to follow)");
        }
        Resolved a = resolve(old_root_, before);
        Resolved b = resolve(new_root_, after);
        if (a.error) return fail(at, *a.error);
        if (b.error) return fail(at, *b.error);
        if (a.nothing) return std::nullopt;  // accepted nothing: anything may replace it
        if (b.nothing) return fail(at, "the new schema accepts nothing here");
        // A nested schema may always become {} or true; the root may not drop its properties
        // that way (Narad's rule for `properties`).
        if (!at.empty() && accepts_everything(*b.schema)) return std::nullopt;
        if (a.schema->IsFalse()) return std::nullopt;
        if (b.schema->IsFalse()) return fail(at, "the new schema accepts nothing here");
        static const Value kEmpty(rapidjson::kObjectType);
        const Value& old_schema = a.schema->IsTrue() ? kEmpty : *a.schema;
        const Value& new_schema = *b.schema;
        if (!old_schema.IsObject() || !new_schema.IsObject()) {
            return fail(at, "a subschema that is not an object cannot be compared");
        }
        auto pair = std::make_pair(&old_schema, &new_schema);
        if (!active_.insert(pair).second) return std::nullopt;  // already compared further up
        ++depth_;
        Verdict verdict = compare_keywords(old_schema, new_schema, at);
        --depth_;
        active_.erase(pair);
        return verdict;
    }

  private:
    static constexpr int kMaxSteps = 100'000;
    static constexpr int kMaxDepth = 512;

    struct Resolved {
        const Value* schema = nullptr;
        bool nothing = false;  // a loop of nothing but $ref: accepts no value
        std::optional<std::string> error;
    };

    bool exhausted() const { return exhausted_; }

    static Verdict fail(const std::string& at, const std::string& why) {
        return (at.empty() ? std::string("schema root") : "at " + at) + ": " + why;
    }

    static bool accepts_everything(const Value& v) {
        if (v.IsTrue()) return true;
        if (!v.IsObject()) return false;
        for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
            if (!constrains_nothing(view_of(it->name))) return false;
        }
        return true;
    }

    static Resolved resolve(const Value& root, const Value& start) {
        Resolved out{&start};
        std::set<const Value*> seen;
        while (out.schema->IsObject() && out.schema->HasMember("$ref")) {
            const Value& schema = *out.schema;
            for (auto it = schema.MemberBegin(); it != schema.MemberEnd(); ++it) {
                std::string_view k = view_of(it->name);
                bool neutral = k == "$ref" || is_annotation(k) || k == "$schema" ||
                               k == "definitions" || k == "$defs" ||
                               (&schema == &root && (k == "$id" || k == "id"));
                if (!neutral) {
                    out.error = "a $ref with sibling keywords cannot be compared";
                    return out;
                }
            }
            const Value& ref = schema["$ref"];
            const Value* target = ref.IsString() ? resolve_pointer(root, view_of(ref)) : nullptr;
            if (target == nullptr) {
                out.error = "a $ref that is not a pointer into the document cannot be compared";
                return out;
            }
            if (!seen.insert(out.schema).second) {
                out.nothing = true;
                return out;
            }
            out.schema = target;
        }
        return out;
    }

    // Equal, following $ref on both sides ("identical" keeps meaning identical when a definition
    // it points at changes).
    bool identical(const Value& a, const Value& b) {
        if (++steps_ > kMaxSteps) return false;
        if (a.IsObject() && b.IsObject() && (a.HasMember("$ref") || b.HasMember("$ref"))) {
            Resolved ra = resolve(old_root_, a);
            Resolved rb = resolve(new_root_, b);
            if (ra.error || rb.error) return false;
            if (ra.nothing || rb.nothing) return ra.nothing && rb.nothing;
            auto pair = std::make_pair(ra.schema, rb.schema);
            if (!identical_active_.insert(pair).second) return true;
            bool same = identical(*ra.schema, *rb.schema);
            identical_active_.erase(pair);
            return same;
        }
        if (a.IsObject() && b.IsObject()) {
            if (a.MemberCount() != b.MemberCount()) return false;
            for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it) {
                auto other = b.FindMember(it->name);
                if (other == b.MemberEnd() || !identical(it->value, other->value)) return false;
            }
            return true;
        }
        if (a.IsArray() && b.IsArray()) {
            if (a.Size() != b.Size()) return false;
            for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
                if (!identical(a[i], b[i])) return false;
            }
            return true;
        }
        return a == b;
    }

    static const Value* member(const Value& schema, const char* name) {
        auto it = schema.FindMember(name);
        return it == schema.MemberEnd() ? nullptr : &it->value;
    }

    Verdict compare_keywords(const Value& a, const Value& b, const std::string& at) {
        std::set<std::string> keywords;
        for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it)
            keywords.insert(it->name.GetString());
        for (auto it = b.MemberBegin(); it != b.MemberEnd(); ++it)
            keywords.insert(it->name.GetString());
        bool bounds_done = false, values_done = false, object_done = false;
        for (const std::string& k : keywords) {
            if (is_annotation(k) || k == "definitions" || k == "$defs") continue;
            const Value* old_value = member(a, k.c_str());
            const Value* new_value = member(b, k.c_str());
            Verdict verdict;
            if (k == "type") {
                verdict = compare_type(old_value, new_value, at);
            } else if (k == "enum" || k == "const") {
                if (values_done) continue;
                values_done = true;
                verdict = compare_values(a, b, at);
            } else if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" ||
                       k == "exclusiveMaximum") {
                if (bounds_done) continue;
                bounds_done = true;
                verdict = compare_bounds(a, b, at);
            } else if (k == "multipleOf") {
                verdict = compare_multiple_of(old_value, new_value, at);
            } else if (k == "minLength" || k == "minItems" || k == "minProperties") {
                verdict = compare_count(k, old_value, new_value, Loosens::when_lower, at);
            } else if (k == "maxLength" || k == "maxItems" || k == "maxProperties") {
                verdict = compare_count(k, old_value, new_value, Loosens::when_higher, at);
            } else if (k == "uniqueItems") {
                bool was = old_value && old_value->IsTrue();
                bool is = new_value && new_value->IsTrue();
                if (is && !was) verdict = fail(at, "uniqueItems added");
            } else if (k == "required") {
                verdict = compare_required(old_value, new_value, at);
            } else if (k == "properties" || k == "additionalProperties" ||
                       k == "patternProperties") {
                if (object_done) continue;
                object_done = true;
                verdict = compare_object(a, b, at);
            } else if (k == "items") {
                verdict = compare_items(old_value, new_value, at);
            } else if (k == "anyOf") {
                verdict = compare_branches("anyOf", Cover::old_by_new, old_value, new_value, at);
            } else if (k == "allOf") {
                verdict = compare_branches("allOf", Cover::new_by_old, old_value, new_value, at);
            } else if (k == "$schema") {
                bool same = (old_value == nullptr) == (new_value == nullptr) &&
                            (old_value == nullptr || *old_value == *new_value);
                if (!same) verdict = fail(at, "$schema changed");
            } else {
                // pattern, format, oneOf, not, dependencies, additionalItems and every keyword
                // this check does not reason about: identical, or dropped.
                if (new_value == nullptr) continue;
                if (old_value == nullptr) {
                    verdict = fail(at, k + " added");
                } else if (!identical(*old_value, *new_value)) {
                    verdict = fail(at, k + " changed (it may only stay identical or be removed)");
                }
            }
            if (verdict) return verdict;
        }
        return std::nullopt;
    }

    static std::optional<std::set<std::string>> types(const Value* v) {
        if (v == nullptr) return std::nullopt;
        std::set<std::string> out;
        if (v->IsString()) out.insert(v->GetString());
        if (v->IsArray()) {
            for (const auto& t : v->GetArray()) {
                if (t.IsString()) out.insert(t.GetString());
            }
        }
        return out;
    }

    Verdict compare_type(const Value* old_value, const Value* new_value, const std::string& at) {
        auto before = types(old_value);
        auto after = types(new_value);
        if (!after) return std::nullopt;
        if (!before) return fail(at, "type added");
        for (const std::string& t : *before) {
            if (after->count(t)) continue;
            if (t == "integer" && after->count("number")) continue;
            return fail(at, "type \"" + t + "\" no longer allowed");
        }
        return std::nullopt;
    }

    // The values `enum` and `const` allow together (their intersection); nullopt: any value.
    static std::optional<std::vector<const Value*>> allowed_values(const Value& schema) {
        const Value* listed = member(schema, "enum");
        const Value* single = member(schema, "const");
        if (listed == nullptr && single == nullptr) return std::nullopt;
        std::vector<const Value*> out;
        if (listed != nullptr && listed->IsArray()) {
            for (const auto& v : listed->GetArray()) {
                if (single == nullptr || v == *single) out.push_back(&v);
            }
        } else if (single != nullptr) {
            out.push_back(single);
        }
        return out;
    }

    Verdict compare_values(const Value& a, const Value& b, const std::string& at) {
        auto before = allowed_values(a);
        auto after = allowed_values(b);
        if (!after) return std::nullopt;
        if (!before) return fail(at, b.HasMember("enum") ? "enum added" : "const added");
        // A large allowlist is looked up by its compact text first, so a history of big enums
        // costs linear time; a value spelled differently (1 and 1.0) falls back to a scan.
        std::unordered_set<std::string> texts;
        if (after->size() > 16) {
            for (const Value* w : *after) texts.insert(json_text(*w, Shorten::no));
        }
        for (const Value* v : *before) {
            bool kept = !texts.empty() && texts.count(json_text(*v, Shorten::no)) > 0;
            for (size_t i = 0; i < after->size() && !kept; ++i) kept = *v == *(*after)[i];
            if (!kept) return fail(at, "value " + json_text(*v) + " no longer allowed");
        }
        return std::nullopt;
    }

    // Which way a bound or count keyword may move without refusing data it accepted before: a
    // minimum may only go down, a maximum only up.
    enum class Loosens { when_lower, when_higher };

    struct Bound {
        double value = 0;
        bool exclusive = false;
    };

    // Draft-04 bounds: `minimum` with a boolean `exclusiveMinimum`.
    static std::optional<Bound> bound(const Value& schema, const char* name, const char* flag) {
        const Value* v = member(schema, name);
        if (v == nullptr || !v->IsNumber()) return std::nullopt;
        const Value* exclusive = member(schema, flag);
        return Bound{v->GetDouble(), exclusive != nullptr && exclusive->IsTrue()};
    }

    Verdict compare_bound(const Value& a, const Value& b, const char* name, const char* flag,
                          Loosens loosens, const std::string& at) {
        const bool lower = loosens == Loosens::when_lower;
        const Value* old_flag = member(a, flag);
        const Value* new_flag = member(b, flag);
        // A numeric exclusive bound (draft-06 on) is compared only with itself.
        if ((old_flag && old_flag->IsNumber()) || (new_flag && new_flag->IsNumber())) {
            if (new_flag != nullptr && new_flag->IsNumber() &&
                !(old_flag != nullptr && old_flag->IsNumber() &&
                  (lower ? new_flag->GetDouble() <= old_flag->GetDouble()
                         : new_flag->GetDouble() >= old_flag->GetDouble()))) {
                return fail(at, std::string(flag) + (old_flag ? " tightened" : " added"));
            }
        }
        const Value* old_number = member(a, name);
        const Value* new_number = member(b, name);
        if ((old_number && !old_number->IsNumber()) || (new_number && !new_number->IsNumber())) {
            return fail(at, std::string(name) + " is not a number");
        }
        auto before = bound(a, name, flag);
        auto after = bound(b, name, flag);
        if (!after) return std::nullopt;
        if (!before) return fail(at, std::string(name) + " added");
        bool looser = lower ? after->value < before->value : after->value > before->value;
        bool same = after->value == before->value && (!after->exclusive || before->exclusive);
        if (looser || same) return std::nullopt;
        return fail(at, std::string(name) + (lower ? " raised" : " lowered") + " from " +
                            json_text(*old_number) + " to " + json_text(*new_number) +
                            (after->value == before->value ? " (made exclusive)" : ""));
    }

    Verdict compare_bounds(const Value& a, const Value& b, const std::string& at) {
        if (auto v = compare_bound(a, b, "minimum", "exclusiveMinimum", Loosens::when_lower, at))
            return v;
        return compare_bound(a, b, "maximum", "exclusiveMaximum", Loosens::when_higher, at);
    }

    Verdict compare_multiple_of(const Value* old_value, const Value* new_value,
                                const std::string& at) {
        if (new_value == nullptr) return std::nullopt;
        if (old_value == nullptr) return fail(at, "multipleOf added");
        if (!old_value->IsNumber() || !new_value->IsNumber() || new_value->GetDouble() <= 0) {
            return fail(at, "multipleOf is not a positive number");
        }
        double ratio = old_value->GetDouble() / new_value->GetDouble();
        if (ratio >= 1 && std::abs(ratio - std::round(ratio)) <= 1e-9 * ratio) return std::nullopt;
        return fail(at, "multipleOf " + json_text(*new_value) + " is not a divisor of " +
                            json_text(*old_value));
    }

    Verdict compare_count(const std::string& k, const Value* old_value, const Value* new_value,
                          Loosens loosens, const std::string& at) {
        const bool lower = loosens == Loosens::when_lower;
        if (new_value == nullptr) return std::nullopt;
        if (!new_value->IsNumber() || (old_value && !old_value->IsNumber())) {
            return fail(at, k + " is not a number");
        }
        if (old_value == nullptr) {
            if (lower && new_value->GetDouble() == 0) return std::nullopt;
            return fail(at, k + " added");
        }
        double before = old_value->GetDouble();
        double after = new_value->GetDouble();
        if (lower ? after <= before : after >= before) return std::nullopt;
        return fail(at, k + (lower ? " raised" : " lowered") + " from " + json_text(*old_value) +
                            " to " + json_text(*new_value));
    }

    Verdict compare_required(const Value* old_value, const Value* new_value,
                             const std::string& at) {
        if (new_value == nullptr || !new_value->IsArray()) return std::nullopt;
        for (const auto& name : new_value->GetArray()) {
            bool was = false;
            if (old_value != nullptr && old_value->IsArray()) {
                for (const auto& old_name : old_value->GetArray()) was = was || old_name == name;
            }
            if (!was) return fail(at, "required property " + json_text(name) + " added");
        }
        return std::nullopt;
    }

    // Whether an ECMAScript `pattern` finds a match in `name`; nullopt when it does not compile.
    static std::optional<bool> pattern_matches(std::string_view pattern, std::string_view name) {
        try {
            std::regex re(pattern.begin(), pattern.end(), std::regex::ECMAScript);
            return std::regex_search(name.begin(), name.end(), re);
        } catch (const std::regex_error&) {
            return std::nullopt;
        }
    }

    enum class Openness { open, closed, schema };
    static Openness openness(const Value* v) {
        if (v == nullptr || v->IsTrue()) return Openness::open;
        if (v->IsFalse()) return Openness::closed;
        return Openness::schema;
    }

    Verdict compare_object(const Value& a, const Value& b, const std::string& at) {
        static const Value kNoProperties(rapidjson::kObjectType);
        const Value* old_properties = member(a, "properties");
        const Value* new_properties = member(b, "properties");
        const Value& before =
            old_properties && old_properties->IsObject() ? *old_properties : kNoProperties;
        const Value& after =
            new_properties && new_properties->IsObject() ? *new_properties : kNoProperties;
        for (auto it = before.MemberBegin(); it != before.MemberEnd(); ++it) {
            std::string where = at + "/properties/" + escape_pointer_token(view_of(it->name));
            auto kept = after.FindMember(it->name);
            if (kept == after.MemberEnd()) {
                return fail(at, "property " + json_text(it->name) + " removed");
            }
            if (auto v = compare(it->value, kept->value, where)) return v;
        }
        const Value* old_additional = member(a, "additionalProperties");
        const Value* old_patterns = member(a, "patternProperties");
        for (auto it = after.MemberBegin(); it != after.MemberEnd(); ++it) {
            if (before.HasMember(it->name)) continue;
            std::string where = at + "/properties/" + escape_pointer_token(view_of(it->name));
            // What the previous version accepted under this name must stay accepted: the
            // schemas of the patterns it matches, or else additionalProperties.
            bool matched = false;
            if (old_patterns != nullptr && old_patterns->IsObject()) {
                for (auto p = old_patterns->MemberBegin(); p != old_patterns->MemberEnd(); ++p) {
                    std::optional<bool> matches =
                        pattern_matches(view_of(p->name), view_of(it->name));
                    if (!matches) {
                        return fail(where, "a patternProperties pattern cannot be evaluated");
                    }
                    if (!*matches) continue;
                    matched = true;
                    if (auto v = compare(p->value, it->value, where)) return v;
                }
            }
            if (!matched && openness(old_additional) == Openness::schema) {
                if (auto v = compare(*old_additional, it->value, where)) return v;
            }
        }
        const Value* new_additional = member(b, "additionalProperties");
        switch (openness(old_additional)) {
            case Openness::closed:
                break;
            case Openness::schema:
                if (openness(new_additional) == Openness::closed) {
                    return fail(at, "additionalProperties closed");
                }
                if (openness(new_additional) == Openness::schema) {
                    if (auto v = compare(*old_additional, *new_additional,
                                         at + "/additionalProperties")) {
                        return v;
                    }
                }
                break;
            case Openness::open:
                if (openness(new_additional) != Openness::open) {
                    return fail(at, "additionalProperties added");
                }
                break;
        }
        const Value* new_patterns = member(b, "patternProperties");
        if (new_patterns != nullptr) {
            if (old_patterns == nullptr) return fail(at, "patternProperties added");
            if (!identical(*old_patterns, *new_patterns)) {
                return fail(at,
                            "patternProperties changed (it may only stay identical or be removed)");
            }
        } else if (old_patterns != nullptr && openness(new_additional) != Openness::open) {
            return fail(at, "patternProperties removed while additionalProperties is not open");
        }
        return std::nullopt;
    }

    Verdict compare_items(const Value* old_value, const Value* new_value, const std::string& at) {
        if (new_value == nullptr) return std::nullopt;
        if (old_value == nullptr) {
            if (accepts_everything(*new_value)) return std::nullopt;
            return fail(at, "items added");
        }
        if (old_value->IsArray() || new_value->IsArray()) {
            if (identical(*old_value, *new_value)) return std::nullopt;
            return fail(at,
                        "items in the array (tuple) form may only stay identical or be removed");
        }
        return compare(*old_value, *new_value, at + "/items");
    }

    // anyOf: every old branch must be covered by a new one; allOf: every new branch must be
    // implied by an old one. One loop serves both: `outer` is the side each of whose branches
    // needs a partner on the other side.
    enum class Cover { old_by_new, new_by_old };

    Verdict compare_branches(const char* keyword, Cover cover, const Value* old_value,
                             const Value* new_value, const std::string& at) {
        if (new_value == nullptr) return std::nullopt;
        if (old_value == nullptr) return fail(at, std::string(keyword) + " added");
        if (!old_value->IsArray() || !new_value->IsArray()) {
            return fail(at, std::string(keyword) + " is not a list");
        }
        const Value& outer = cover == Cover::old_by_new ? *old_value : *new_value;
        const Value& inner = cover == Cover::old_by_new ? *new_value : *old_value;
        for (rapidjson::SizeType i = 0; i < outer.Size(); ++i) {
            bool partnered = false;
            for (rapidjson::SizeType j = 0; j < inner.Size() && !partnered; ++j) {
                const Value& before = cover == Cover::old_by_new ? outer[i] : inner[j];
                const Value& after = cover == Cover::old_by_new ? inner[j] : outer[i];
                size_t new_index = cover == Cover::old_by_new ? j : i;
                Verdict branch =
                    compare(before, after, at + "/" + keyword + "/" + std::to_string(new_index));
                if (branch && exhausted()) return branch;
                partnered = !branch;
            }
            if (partnered) continue;
            return fail(at, std::string(keyword) + " branch " + std::to_string(i) +
                                (cover == Cover::old_by_new
                                     ? " of the previous version is covered by no new branch"
                                     : " is implied by no branch of the previous version"));
        }
        return std::nullopt;
    }

    const Value& old_root_;
    const Value& new_root_;
    std::set<std::pair<const Value*, const Value*>> active_;
    std::set<std::pair<const Value*, const Value*>> identical_active_;
    int steps_ = 0;
    int depth_ = 0;
    bool exhausted_ = false;  // a limit was hit: the first failure stands
};

}  // namespace

bool schema_unchanged(std::string_view previous, std::string_view next) {
    if (!check_depth(previous, "schema").is_ok() || !check_depth(next, "schema").is_ok()) {
        return false;
    }
    rapidjson::Document before;
    rapidjson::Document after;
    if (!parse_schema(previous, before).is_ok() || !parse_schema(next, after).is_ok()) {
        return false;
    }
    return same_schema(before, after);
}

Status check_schema_compatible(std::string_view previous, std::string_view next) {
    NARAD_RETURN_IF_ERROR(check_depth(next, "schema"));
    NARAD_RETURN_IF_ERROR(check_depth(previous, "schema"));
    rapidjson::Document before;
    rapidjson::Document after;
    NARAD_RETURN_IF_ERROR(parse_schema(next, after));
    if (!parse_schema(previous, before).is_ok()) {
        return Status(Errc::invalid_argument,
                      "invalid argument: schema incompatible with previous version: the stored "
                      "version cannot be read");
    }
    Comparer comparer(before, after);
    Verdict verdict = comparer.compare(before, after, "");
    if (!verdict) return Status::ok();
    return Status(Errc::invalid_argument,
                  "invalid argument: schema incompatible with previous version: " + *verdict);
}

}  // namespace narad::meta
