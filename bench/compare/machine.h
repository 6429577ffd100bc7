// A description of the machine a `narad-compare` run happened on, for the report: CPU model and
// count (/proc/cpuinfo), RAM (/proc/meminfo), kernel (uname) and distribution (/etc/os-release).
// The parsers are pure functions of the files' text; read_machine_info() reads them. Any thread.
#pragma once

#include <cstdint>
#include <string>

namespace narad::compare {

struct MachineInfo {
    std::string cpu_model;  // "AMD EPYC 7B13" ("unknown CPU" when absent)
    uint32_t cpu_count = 0;
    uint64_t memory_bytes = 0;
    std::string kernel;  // "Linux 6.1.0-18-amd64"
    std::string os;      // "Debian GNU/Linux 12 (bookworm)"
};

void parse_cpuinfo(const std::string& text, MachineInfo& info);
void parse_meminfo(const std::string& text, MachineInfo& info);
// PRETTY_NAME of an os-release file, without quotes.
std::string parse_os_release(const std::string& text);

MachineInfo read_machine_info();
// "2 × AMD EPYC 7B13 (2 CPUs), 23.4 GiB RAM, Linux 6.1.0-18-amd64, Debian GNU/Linux 12 (bookworm)"
std::string describe(const MachineInfo& info);

}  // namespace narad::compare
