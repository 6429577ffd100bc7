// The message `narad bench` sends: a small JSON object of exactly --size bytes. Go's form is
// {"bench":"xxx…"}; ours also carries the run id (8 hex characters at the start of the filler)
// and the send time in ns since the epoch, {"bench":"<run id>xxx…","t":<19 digits>}, so the
// consumer can measure end-to-end latency and ignore messages left over from other runs. Sizes
// too small for that (< 44 bytes) fall back to Go's form without a timestamp. Immutable after
// construction; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace narad::cli::bench {

class BenchPayload {
  public:
    static constexpr size_t kTimedOverhead = 36;  // {"bench":"","t":<19 digits>}
    static constexpr size_t kRunIdLength = 8;
    static constexpr size_t kMinTimedSize = kTimedOverhead + kRunIdLength;

    BenchPayload(int64_t size, std::string run_id);

    // The payload for a message sent at `sent_wall_ns`.
    std::string make(int64_t sent_wall_ns) const;
    bool timed() const { return timed_; }
    size_t size() const { return template_.size(); }
    const std::string& run_id() const { return run_id_; }

    // The send time inside a consumed payload (its raw JSON text) if it is one of this run's.
    std::optional<int64_t> sent_at(std::string_view payload) const;

  private:
    std::string run_id_;
    bool timed_;
    std::string template_;
    size_t time_position_ = 0;  // where the 19 digits go
};

// A random run id of kRunIdLength lowercase hex characters.
std::string new_run_id();

}  // namespace narad::cli::bench
