#include "base/status.h"

namespace narad {

std::string Status::message() const {
    if (message_.empty()) return std::string(errc_text(code_));
    return message_;
}

std::string Status::to_string() const {
    std::string out(errc_name(code_));
    if (!is_ok()) {
        out += ": ";
        out += message();
    }
    return out;
}

Status Status::with_context(std::string_view context) const {
    if (is_ok()) return *this;
    std::string message(context);
    message += ": ";
    message += this->message();
    return Status(code_, std::move(message));
}

}  // namespace narad
