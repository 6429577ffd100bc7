#include "cli/pub.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/calls.h"
#include "cli/text.h"

namespace narad::cli {

BodySource pub_body_source(const std::vector<std::string>& args, const std::string& file) {
    if (!file.empty()) return BodySource::file;
    if (args.size() == 2 && args[1] != "-") return BodySource::argument;
    return BodySource::standard_input;
}

Result<std::string> read_pub_body(const std::vector<std::string>& args, const std::string& file,
                                  std::istream& in) {
    std::string body;
    switch (pub_body_source(args, file)) {
        case BodySource::argument:
            return args[1];
        case BodySource::standard_input: {
            char buffer[64 * 1024];
            while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
                body.append(buffer, size_t(in.gcount()));
                if (body.size() > kMaxPubBodyBytes) {
                    return Status(Errc::payload_too_large, "stdin: message larger than 64 MiB");
                }
            }
            return body;
        }
        case BodySource::file: {
            const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                return Status(Errc::io_error, "open " + file + ": " + std::strerror(errno));
            }
            char buffer[64 * 1024];
            while (true) {
                const ssize_t n = ::read(fd, buffer, sizeof(buffer));
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) {
                    Status status(Errc::io_error, "read " + file + ": " + std::strerror(errno));
                    ::close(fd);
                    return status;
                }
                if (n == 0) break;
                body.append(buffer, size_t(n));
                if (body.size() > kMaxPubBodyBytes) {
                    ::close(fd);
                    return Status(Errc::payload_too_large, file + ": message larger than 64 MiB");
                }
            }
            ::close(fd);
            return body;
        }
    }
    return body;
}

std::string pub_target(const std::string& topic, const std::string& key, int64_t partition) {
    std::string target = topic_path(topic) + "/produce";
    std::string query;
    if (!key.empty()) query = "key=" + query_escape(key);
    if (partition >= 0) {
        if (!query.empty()) query += '&';
        query += "partition=" + std::to_string(partition);
    }
    if (!query.empty()) target += "?" + query;
    return target;
}

}  // namespace narad::cli
