// Status and Result<T>: how every Narad module reports success or an error (a code from base/errc.h
// plus a message meant for the operator or client). Both are [[nodiscard]]; exceptions never cross
// a module boundary. Value types, safe to move between threads.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "base/assert.h"
#include "base/errc.h"

namespace narad {

class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return Status(); }

    bool is_ok() const { return code_ == Errc::ok; }
    explicit operator bool() const { return is_ok(); }
    Errc code() const { return code_; }
    // The message, or the table's default text when none was given.
    std::string message() const;
    // "<code>: <message>", for logs.
    std::string to_string() const;

    // A copy with `context` prepended to the message ("opening segment: ...").
    Status with_context(std::string_view context) const;

  private:
    Errc code_ = Errc::ok;
    std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
    Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
        NARAD_ASSERT(!status_.is_ok(), "a Result built from a Status must carry an error");
    }
    Result(Errc code, std::string message) : status_(code, std::move(message)) {}

    bool is_ok() const { return value_.has_value(); }
    explicit operator bool() const { return is_ok(); }
    const Status& status() const { return status_; }
    Errc code() const { return status_.code(); }

    T& value() & {
        NARAD_ASSERT(value_.has_value(), "value() of a failed Result: " + status_.to_string());
        return *value_;
    }
    const T& value() const& {
        NARAD_ASSERT(value_.has_value(), "value() of a failed Result: " + status_.to_string());
        return *value_;
    }
    T&& value() && {
        NARAD_ASSERT(value_.has_value(), "value() of a failed Result: " + status_.to_string());
        return std::move(*value_);
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

  private:
    std::optional<T> value_;
    Status status_;
};

// Returns early from the enclosing function with the error of `expr` (a Status) if it failed.
#define NARAD_RETURN_IF_ERROR(expr)                       \
    do {                                                  \
        ::narad::Status narad_status_ = (expr);           \
        if (!narad_status_.is_ok()) return narad_status_; \
    } while (0)

#define NARAD_CONCAT_INNER(a, b) a##b
#define NARAD_CONCAT(a, b) NARAD_CONCAT_INNER(a, b)

// `NARAD_ASSIGN_OR_RETURN(auto x, f())` declares x from a Result, or returns its error.
#define NARAD_ASSIGN_OR_RETURN(lhs, expr) \
    NARAD_ASSIGN_OR_RETURN_IMPL(NARAD_CONCAT(narad_result_, __LINE__), lhs, expr)
#define NARAD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                              \
    if (!tmp.is_ok()) return tmp.status();          \
    lhs = std::move(tmp).value()

}  // namespace narad
