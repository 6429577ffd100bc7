#include "base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace narad::detail {

void assert_failed(const char* expression, std::string_view message, const char* file, int line) {
    std::fprintf(stderr, "narad: assertion failed at %s:%d: %s: %.*s\n", file, line, expression,
                 static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    std::abort();
}

}  // namespace narad::detail
