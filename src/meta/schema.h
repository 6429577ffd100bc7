// JSON Schema support for topics: a topic's `schema` is compiled once (rapidjson's draft-04
// validator; no later draft is packaged for C++ in Debian) and every produced payload is validated
// against it. Also the compatibility rule for replacing a schema (Narad's: top-level `properties`
// and `required` only). CompiledSchema is immutable after construction and safe to share between
// threads.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace narad::meta {

class CompiledSchema {
  public:
    // Compiles a schema document (JSON text). Errors read "schema: <why>".
    static Result<std::shared_ptr<const CompiledSchema>> compile(std::string_view schema_json);
    ~CompiledSchema();

    // ok, or invalid_argument "schema: invalid JSON payload: ..." / "schema: <violation>".
    Status validate(std::string_view payload) const;

  private:
    struct State;
    explicit CompiledSchema(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// The schema in compact canonical form (whitespace removed), for storage.
Result<std::string> compact_schema(std::string_view schema_json);

// ok when `next` may replace `previous`, else invalid_argument
// "schema incompatible with previous version: <reason>".
Status check_schema_compatible(std::string_view previous, std::string_view next);

}  // namespace narad::meta
