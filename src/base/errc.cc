#include "base/errc.h"

#include <array>

namespace narad {
namespace {

struct Row {
    std::string_view name;
    int http_status;
    std::string_view text;
};

constexpr std::array kRows = {
#define NARAD_ERRC_ROW(name, http, text) Row{#name, http, text},
    NARAD_ERRC_TABLE(NARAD_ERRC_ROW)
#undef NARAD_ERRC_ROW
};

constexpr std::array kCodes = {
#define NARAD_ERRC_CODE(name, http, text) Errc::name,
    NARAD_ERRC_TABLE(NARAD_ERRC_CODE)
#undef NARAD_ERRC_CODE
};

}  // namespace

std::string_view errc_name(Errc code) { return kRows[static_cast<size_t>(code)].name; }
int errc_http_status(Errc code) { return kRows[static_cast<size_t>(code)].http_status; }
std::string_view errc_text(Errc code) { return kRows[static_cast<size_t>(code)].text; }
std::span<const Errc> all_errcs() { return kCodes; }

}  // namespace narad
