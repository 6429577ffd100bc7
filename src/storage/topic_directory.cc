#include "storage/topic_directory.h"

#include "base/checksum.h"
#include "base/mutex.h"

namespace narad::storage {
namespace {

// The marker is one line: "<incarnation> <xxh3 of the incarnation, decimal>\n".
std::string encode(const IncarnationId& incarnation) {
    return incarnation.value() + " " + std::to_string(checksum64(incarnation.value())) + "\n";
}

}  // namespace

Result<IncarnationId> read_incarnation(io::FileSystem& fs, const std::string& topic_directory) {
    std::string path = io::join_path(topic_directory, kIncarnationFile);
    NARAD_ASSIGN_OR_RETURN(std::string contents, io::read_file(fs, path));
    auto space = contents.find(' ');
    if (space == std::string::npos || contents.empty() || contents.back() != '\n') {
        return Status(Errc::corrupt, "malformed incarnation marker " + path);
    }
    std::string id = contents.substr(0, space);
    std::string sum = contents.substr(space + 1, contents.size() - space - 2);
    if (sum != std::to_string(checksum64(id))) {
        return Status(Errc::corrupt, "incarnation marker " + path + " fails its checksum");
    }
    return IncarnationId(id);
}

Status prepare_topic_directory(io::FileSystem& fs, const std::string& topic_directory,
                               const IncarnationId& incarnation) {
    auto existing = read_incarnation(fs, topic_directory);
    if (existing.is_ok()) {
        if (*existing == incarnation) return Status::ok();
        return Status(Errc::conflict, "topic directory " + topic_directory + " holds incarnation " +
                                          existing->value() + ", not " + incarnation.value());
    }
    if (existing.code() != Errc::not_found) return existing.status();
    if (fs.exists(topic_directory)) {
        NARAD_ASSIGN_OR_RETURN(auto names, fs.list_directory(topic_directory));
        std::erase_if(names, [](const std::string& n) { return n.ends_with(".tmp"); });
        if (!names.empty()) {
            return Status(Errc::conflict,
                          "topic directory " + topic_directory + " holds data without a marker");
        }
    }
    NARAD_RETURN_IF_ERROR(fs.create_directories(topic_directory));
    NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(topic_directory)));
    return io::write_file_atomically(fs, io::join_path(topic_directory, kIncarnationFile),
                                     encode(incarnation));
}

}  // namespace narad::storage

namespace narad::storage {

std::shared_ptr<SharedMutex> TopicGuards::guard(std::string_view topic) {
    MutexLock lock(mutex_);
    auto it = guards_.find(topic);
    if (it == guards_.end()) {
        it = guards_.emplace(std::string(topic), std::make_shared<SharedMutex>()).first;
    }
    return it->second;
}

}  // namespace narad::storage
