#include "api/audit_log.h"

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/mutex.h"

namespace narad::api {

AuditLog::AuditLog(io::FileSystem& fs, Clock& clock, std::string path, NodeId node)
    : fs_(fs), clock_(clock), path_(std::move(path)), node_(std::move(node)) {}

void AuditLog::record(const AuditEvent& event) {
    nlohmann::json line = {{"time_ms", clock_.wall_ms()}, {"node", node_.value()},
                           {"component", "audit"},        {"event", event.event},
                           {"actor", event.actor},        {"target", event.target},
                           {"outcome", event.outcome},    {"detail", event.detail}};
    if (event.status != 0) line["status"] = event.status;
    std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    NARAD_LOG_INFO("audit {}", text);
    MutexLock lock(mutex_);
    Status written = Status::ok();
    if (!file_) {
        auto opened = fs_.open(path_, io::kCreate);
        if (opened.is_ok()) {
            file_ = std::move(*opened);
            auto size = file_->size();
            size_ = size.is_ok() ? *size : 0;
        } else {
            written = opened.status();
        }
    }
    if (file_) {
        text += '\n';
        written = file_->write_at(size_, text);
        if (written.is_ok()) written = file_->sync();
        if (written.is_ok()) size_ += text.size();
    }
    if (!written.is_ok()) {
        NARAD_LOG_ERROR("audit: cannot append to {}: {}", path_, written.to_string());
    }
}

}  // namespace narad::api
