#include "base/failpoint.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "base/mutex.h"

namespace narad::failpoint {
namespace detail {
std::atomic<bool> any_armed{false};
}

namespace {

enum class Kind { crash, error, sleep, hook };

struct Point {
    Kind kind = Kind::crash;
    int64_t sleep_ms = 0;
    uint64_t only_hit = 0;  // fire only on this hit (1-based); 0 = every hit
    uint64_t one_in = 0;    // fire with probability 1/one_in; 0 = always
    Hook hook;
    uint64_t hits = 0;
};

struct Registry {
    Mutex mutex;
    std::map<std::string, Point, std::less<>> points GUARDED_BY(mutex);
    std::mt19937_64 random GUARDED_BY(mutex){std::random_device{}()};
};

Registry& registry() {
    static Registry* r = new Registry();  // never destroyed: failpoints may fire during exit
    return *r;
}

void refresh_armed(Registry& r) REQUIRES(r.mutex) {
    detail::any_armed.store(!r.points.empty(), std::memory_order_relaxed);
}

Result<Point> parse_action(std::string_view action) {
    Point point;
    auto at = action.find_first_of("@%");
    std::string_view modifier;
    if (at != std::string_view::npos) {
        modifier = action.substr(at);
        action = action.substr(0, at);
    }
    if (action == "crash") {
        point.kind = Kind::crash;
    } else if (action == "error") {
        point.kind = Kind::error;
    } else if (action.starts_with("sleep(") && action.ends_with(")")) {
        point.kind = Kind::sleep;
        std::string ms(action.substr(6, action.size() - 7));
        char* end = nullptr;
        point.sleep_ms = std::strtoll(ms.c_str(), &end, 10);
        if (ms.empty() || *end != '\0' || point.sleep_ms < 0) {
            return Status(Errc::invalid_argument, "bad sleep duration in failpoint action");
        }
    } else {
        return Status(Errc::invalid_argument,
                      "unknown failpoint action '" + std::string(action) + "'");
    }
    if (!modifier.empty()) {
        std::string n(modifier.substr(1));
        char* end = nullptr;
        uint64_t value = std::strtoull(n.c_str(), &end, 10);
        if (n.empty() || *end != '\0' || value == 0) {
            return Status(Errc::invalid_argument, "bad failpoint modifier");
        }
        (modifier[0] == '@' ? point.only_hit : point.one_in) = value;
    }
    return point;
}

}  // namespace

Status configure(std::string_view spec) {
    std::map<std::string, Point, std::less<>> parsed;
    while (!spec.empty()) {
        auto end = spec.find(';');
        std::string_view item = spec.substr(0, end);
        spec = end == std::string_view::npos ? std::string_view() : spec.substr(end + 1);
        if (item.empty()) continue;
        auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            return Status(Errc::invalid_argument,
                          "failpoint spec item '" + std::string(item) + "' is not name=action");
        }
        NARAD_ASSIGN_OR_RETURN(Point point, parse_action(item.substr(eq + 1)));
        parsed[std::string(item.substr(0, eq))] = std::move(point);
    }
    Registry& r = registry();
    MutexLock lock(r.mutex);
    for (auto& [name, point] : parsed) r.points[name] = std::move(point);
    refresh_armed(r);
    return Status::ok();
}

void set_hook(std::string_view name, Hook hook) {
    Registry& r = registry();
    MutexLock lock(r.mutex);
    Point point;
    point.kind = Kind::hook;
    point.hook = std::move(hook);
    r.points[std::string(name)] = std::move(point);
    refresh_armed(r);
}

void clear(std::string_view name) {
    Registry& r = registry();
    MutexLock lock(r.mutex);
    if (auto it = r.points.find(name); it != r.points.end()) r.points.erase(it);
    refresh_armed(r);
}

void clear_all() {
    Registry& r = registry();
    MutexLock lock(r.mutex);
    r.points.clear();
    refresh_armed(r);
}

uint64_t hits(std::string_view name) {
    Registry& r = registry();
    MutexLock lock(r.mutex);
    auto it = r.points.find(name);
    return it == r.points.end() ? 0 : it->second.hits;
}

Status evaluate(std::string_view name) {
    Registry& r = registry();
    Kind kind;
    int64_t sleep_ms = 0;
    Hook hook;
    {
        MutexLock lock(r.mutex);
        auto it = r.points.find(name);
        if (it == r.points.end()) return Status::ok();
        Point& point = it->second;
        ++point.hits;
        if (point.only_hit != 0 && point.hits != point.only_hit) return Status::ok();
        if (point.one_in != 0 && r.random() % point.one_in != 0) return Status::ok();
        kind = point.kind;
        sleep_ms = point.sleep_ms;
        hook = point.hook;
    }
    switch (kind) {
        case Kind::crash:
            ::kill(::getpid(), SIGKILL);
            ::_exit(137);  // not reached
        case Kind::error:
            return Status(Errc::io_error, "failpoint " + std::string(name));
        case Kind::sleep:
            std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
            return Status::ok();
        case Kind::hook:
            return hook();
    }
    return Status::ok();
}

}  // namespace narad::failpoint
