// NARAD_ASSERT: a broken invariant is a bug, so it aborts with a message, in release builds too.
// Callable from any thread.
#pragma once

#include <string_view>

namespace narad::detail {
[[noreturn]] void assert_failed(const char* expression, std::string_view message, const char* file,
                                int line);
}  // namespace narad::detail

#define NARAD_ASSERT(cond, message)                                               \
    do {                                                                          \
        if (!(cond)) [[unlikely]] {                                               \
            ::narad::detail::assert_failed(#cond, (message), __FILE__, __LINE__); \
        }                                                                         \
    } while (0)
