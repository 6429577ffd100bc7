#include "compare/machine.h"

#include <sys/utsname.h>

#include <fstream>
#include <iomanip>
#include <sstream>

#include "compare/server_process.h"

namespace narad::compare {
namespace {

std::string trim(std::string text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

}  // namespace

void parse_cpuinfo(const std::string& text, MachineInfo& info) {
    std::istringstream in(text);
    std::string line;
    info.cpu_count = 0;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(line.substr(0, colon));
        if (key == "processor") ++info.cpu_count;
        if (key == "model name" && info.cpu_model.empty()) {
            info.cpu_model = trim(line.substr(colon + 1));
        }
    }
    if (info.cpu_model.empty()) info.cpu_model = "unknown CPU";
}

void parse_meminfo(const std::string& text, MachineInfo& info) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("MemTotal:")) continue;
        std::istringstream fields(line.substr(9));
        uint64_t kib = 0;
        if (fields >> kib) info.memory_bytes = kib * 1024;
        return;
    }
}

std::string parse_os_release(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("PRETTY_NAME=")) continue;
        std::string value = line.substr(12);
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
            value.back() == value.front()) {
            value = value.substr(1, value.size() - 2);
        }
        return value;
    }
    return "";
}

MachineInfo read_machine_info() {
    MachineInfo info;
    parse_cpuinfo(read_text_file("/proc/cpuinfo"), info);
    parse_meminfo(read_text_file("/proc/meminfo"), info);
    utsname name{};
    if (::uname(&name) == 0) info.kernel = std::string(name.sysname) + " " + name.release;
    info.os = parse_os_release(read_text_file("/etc/os-release"));
    return info;
}

std::string describe(const MachineInfo& info) {
    std::ostringstream out;
    out << info.cpu_count << " × " << info.cpu_model << ", " << std::fixed << std::setprecision(1)
        << double(info.memory_bytes) / double(uint64_t{1} << 30) << " GiB RAM";
    if (!info.kernel.empty()) out << ", " << info.kernel;
    if (!info.os.empty()) out << ", " << info.os;
    return out.str();
}

}  // namespace narad::compare
