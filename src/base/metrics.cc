#include "base/metrics.h"

#include <cmath>
#include <cstdio>

#include "base/assert.h"
#include "base/mutex.h"

namespace narad::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
    for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    double current = sum_.load(std::memory_order_relaxed);
    while (!sum_.compare_exchange_weak(current, current + v, std::memory_order_relaxed)) {
    }
}

Histogram::Snapshot Histogram::snapshot() const {
    Snapshot s;
    s.cumulative.resize(bounds_.size() + 1);
    uint64_t total = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        total += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative[i] = total;
    }
    s.count = total;
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
}

std::vector<double> latency_bounds() {
    return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

std::vector<double> size_bounds(double max) {
    std::vector<double> bounds;
    for (double b = 1; b <= max; b *= 4) bounds.push_back(b);
    return bounds;
}

template <typename Metric>
Metric& Family<Metric>::with(const Labels& values) {
    NARAD_ASSERT(values.size() == label_names_.size(), "metric label count mismatch");
    MutexLock lock(mutex_);
    auto& slot = children_[values];
    if (!slot) {
        if constexpr (std::is_same_v<Metric, Histogram>) {
            slot = std::make_unique<Histogram>(bounds_);
        } else {
            slot = std::make_unique<Metric>();
        }
    }
    return *slot;
}

// Children are never freed while the process runs: a hot path may still hold a reference to a
// removed child, so removal only hides it from rendering by moving it to a graveyard.
namespace {
template <typename Metric>
std::vector<std::unique_ptr<Metric>>& graveyard() {
    static auto* g = new std::vector<std::unique_ptr<Metric>>();
    return *g;
}
Mutex graveyard_mutex;
}  // namespace

template <typename Metric>
void Family<Metric>::remove(const Labels& values) {
    MutexLock lock(mutex_);
    auto it = children_.find(values);
    if (it == children_.end()) return;
    MutexLock g(graveyard_mutex);
    graveyard<Metric>().push_back(std::move(it->second));
    children_.erase(it);
}

template <typename Metric>
void Family<Metric>::remove_prefix(const Labels& prefix) {
    MutexLock lock(mutex_);
    MutexLock g(graveyard_mutex);
    for (auto it = children_.begin(); it != children_.end();) {
        bool match = prefix.size() <= it->first.size() &&
                     std::equal(prefix.begin(), prefix.end(), it->first.begin());
        if (match) {
            graveyard<Metric>().push_back(std::move(it->second));
            it = children_.erase(it);
        } else {
            ++it;
        }
    }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::FamilyBase {
    std::string help;
    std::string type;
    std::unique_ptr<Family<Counter>> counter;
    std::unique_ptr<Family<Gauge>> gauge;
    std::unique_ptr<Family<Histogram>> histogram;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry& Registry::global() {
    static Registry* registry = new Registry();
    return *registry;
}

template <typename Metric>
Family<Metric>& Registry::get_or_create(const std::string& name, const std::string& help,
                                        const char* type, std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
    MutexLock lock(mutex_);
    auto& slot = families_[name];
    if (!slot) {
        slot = std::make_unique<FamilyBase>();
        slot->help = help;
        slot->type = type;
    }
    NARAD_ASSERT(slot->type == type, "metric " + name + " registered with two types");
    if constexpr (std::is_same_v<Metric, Counter>) {
        if (!slot->counter) slot->counter = std::make_unique<Family<Counter>>(label_names, bounds);
        return *slot->counter;
    } else if constexpr (std::is_same_v<Metric, Gauge>) {
        if (!slot->gauge) slot->gauge = std::make_unique<Family<Gauge>>(label_names, bounds);
        return *slot->gauge;
    } else {
        if (!slot->histogram) {
            slot->histogram = std::make_unique<Family<Histogram>>(label_names, bounds);
        }
        return *slot->histogram;
    }
}

Family<Counter>& Registry::counter(const std::string& name, const std::string& help,
                                   std::vector<std::string> label_names) {
    return get_or_create<Counter>(name, help, "counter", std::move(label_names), {});
}
Family<Gauge>& Registry::gauge(const std::string& name, const std::string& help,
                               std::vector<std::string> label_names) {
    return get_or_create<Gauge>(name, help, "gauge", std::move(label_names), {});
}
Family<Histogram>& Registry::histogram(const std::string& name, const std::string& help,
                                       std::vector<double> bounds,
                                       std::vector<std::string> label_names) {
    return get_or_create<Histogram>(name, help, "histogram", std::move(label_names),
                                    std::move(bounds));
}

uint64_t Registry::add_collector(Collector collector) {
    MutexLock lock(mutex_);
    uint64_t id = next_collector_id_++;
    collectors_[id] = std::move(collector);
    return id;
}

void Registry::remove_collector(uint64_t id) {
    MutexLock render_lock(render_mutex_);
    MutexLock lock(mutex_);
    collectors_.erase(id);
}

namespace {

void append_number(std::string& out, double v) {
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    char buffer[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        std::snprintf(buffer, sizeof buffer, "%.0f", v);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.9g", v);
    }
    out += buffer;
}

void append_escaped(std::string& out, const std::string& value) {
    for (char c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
}

void append_labels(std::string& out, const std::vector<std::string>& names, const Labels& values,
                   const char* extra_name = nullptr, const std::string* extra_value = nullptr) {
    if (names.empty() && extra_name == nullptr) return;
    out += '{';
    bool first = true;
    for (size_t i = 0; i < names.size(); ++i) {
        if (!first) out += ',';
        first = false;
        out += names[i];
        out += "=\"";
        append_escaped(out, values[i]);
        out += '"';
    }
    if (extra_name != nullptr) {
        if (!first) out += ',';
        out += extra_name;
        out += "=\"";
        append_escaped(out, *extra_value);
        out += '"';
    }
    out += '}';
}

}  // namespace

std::string Registry::render() {
    MutexLock render_lock(render_mutex_);
    std::vector<Collector> collectors;
    {
        MutexLock lock(mutex_);
        for (auto& [id, c] : collectors_) collectors.push_back(c);
    }
    for (auto& c : collectors) c();

    std::string out;
    MutexLock lock(mutex_);
    for (auto& entry : families_) {
        // Named, not a structured binding: a lambda below captures them, which clang 14 (the
        // thread-safety check's compiler) does not accept of bindings.
        const std::string& name = entry.first;
        const auto& family = entry.second;
        out += "# HELP " + name + " " + family->help + "\n";
        out += "# TYPE " + name + " " + family->type + "\n";
        if (family->counter) {
            family->counter->for_each([&](const Labels& labels, const Counter& c) {
                out += name;
                append_labels(out, family->counter->label_names(), labels);
                out += ' ';
                append_number(out, c.value());
                out += '\n';
            });
        } else if (family->gauge) {
            family->gauge->for_each([&](const Labels& labels, const Gauge& g) {
                out += name;
                append_labels(out, family->gauge->label_names(), labels);
                out += ' ';
                append_number(out, g.value());
                out += '\n';
            });
        } else if (family->histogram) {
            const auto& names = family->histogram->label_names();
            family->histogram->for_each([&](const Labels& labels, const Histogram& h) {
                Histogram::Snapshot s = h.snapshot();
                for (size_t i = 0; i <= h.bounds().size(); ++i) {
                    std::string le;
                    if (i == h.bounds().size()) {
                        le = "+Inf";
                    } else {
                        append_number(le, h.bounds()[i]);
                    }
                    out += name + "_bucket";
                    append_labels(out, names, labels, "le", &le);
                    out += ' ';
                    append_number(out, static_cast<double>(s.cumulative[i]));
                    out += '\n';
                }
                out += name + "_sum";
                append_labels(out, names, labels);
                out += ' ';
                append_number(out, s.sum);
                out += '\n';
                out += name + "_count";
                append_labels(out, names, labels);
                out += ' ';
                append_number(out, static_cast<double>(s.count));
                out += '\n';
            });
        }
    }
    return out;
}

}  // namespace narad::metrics
