#include "compare/driver.h"

#include "compare/narad_driver.h"
#include "compare/nats_driver.h"
#include "compare/redis_driver.h"

namespace narad::compare {

const std::vector<std::string>& all_systems() {
    static const std::vector<std::string> kSystems = {"narad-single", "narad-batch", "nats",
                                                      "redis-always", "redis-everysec"};
    return kSystems;
}

Result<std::unique_ptr<Driver>> make_driver(const std::string& system) {
    std::unique_ptr<Driver> driver;
    if (system == "narad-single") {
        driver = std::make_unique<NaradDriver>(NaradDriver::Routes::single);
    } else if (system == "narad-batch") {
        driver = std::make_unique<NaradDriver>(NaradDriver::Routes::batch);
    } else if (system == "nats") {
        driver = std::make_unique<NatsDriver>();
    } else if (system == "redis-always") {
        driver = std::make_unique<RedisDriver>(RedisDriver::Fsync::always);
    } else if (system == "redis-everysec") {
        driver = std::make_unique<RedisDriver>(RedisDriver::Fsync::everysec);
    } else {
        return Status(Errc::invalid_argument, "unknown system \"" + system + "\"");
    }
    return driver;
}

}  // namespace narad::compare
