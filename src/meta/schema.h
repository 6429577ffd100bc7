// JSON Schema support for topics: a topic's `schema` is compiled once (rapidjson's draft-04
// validator; no later draft is packaged for C++ in Debian) and every produced payload is validated
// against it. Also the rules for registering a schema document and for replacing one: a new
// version must accept every payload the previous one accepted, checked structurally and fail
// closed (docs/api.md, "Schemas"). CompiledSchema is immutable after construction and safe to
// share between threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"

namespace narad::meta {

// Narad's bounds on schema documents and histories.
inline constexpr size_t kMaxSchemaBytes = 256 * 1024;
inline constexpr int kMaxSchemaDepth = 64;
inline constexpr size_t kMaxSchemaVersions = 1000;
inline constexpr size_t kMaxSchemaHistoryBytes = 4u << 20;    // per topic
inline constexpr size_t kMaxClusterSchemaBytes = 256u << 20;  // every topic's history together

class CompiledSchema {
  public:
    // Compiles a schema document (JSON text; `true` accepts every JSON text). Errors read
    // "schema: <why>".
    static Result<std::shared_ptr<const CompiledSchema>> compile(std::string_view schema_json);
    ~CompiledSchema();

    // ok, or invalid_argument "schema: invalid JSON payload: ..." / "schema: <violation>".
    // Counted in narad_schema_rejections_total{reason} (depth, malformed, invalid); a payload above
    // 16 KiB is timed in narad_schema_validation_seconds.
    Status validate(std::string_view payload) const;

  private:
    struct State;
    explicit CompiledSchema(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// The schema in compact canonical form (whitespace removed), for storage.
Result<std::string> compact_schema(std::string_view schema_json);

// Checks a schema document against the registration rules (a JSON object or `true`, at most
// 256 KiB, nesting at most 64 levels, `$schema` naming a known draft, every `$ref` a JSON pointer
// to something inside the document), compiles it, and returns its compact form. Errors:
// invalid_argument "schema: <why>".
Result<std::string> register_schema(std::string_view schema_json);

// True when `next` accepts exactly what `previous` accepts because the two differ at most in
// annotations (title, description, default, examples, ...), key order and formatting: replacing
// one by the other registers no new version.
bool schema_unchanged(std::string_view previous, std::string_view next);

// ok when `next` may replace `previous`: every payload `previous` accepts, `next` accepts too.
// The check compares the two keyword by keyword and fails closed; otherwise invalid_argument
// "schema incompatible with previous version: at <where>: <why>".
Status check_schema_compatible(std::string_view previous, std::string_view next);

}  // namespace narad::meta
