// A fresh directory under /tmp for one test, removed with everything in it when the test ends.
// Test-only; one owner, one thread.
#pragma once

#include <stdlib.h>

#include <string>

#include "base/assert.h"
#include "io/file_system.h"

namespace narad::queue {

class TempDirForTest {
  public:
    TempDirForTest() {
        char pattern[] = "/tmp/narad-queue-XXXXXX";
        const char* made = ::mkdtemp(pattern);
        NARAD_ASSERT(made != nullptr, "mkdtemp failed");
        path_ = made;
    }
    ~TempDirForTest() { (void)io::posix_file_system().remove_all(path_); }
    TempDirForTest(const TempDirForTest&) = delete;
    TempDirForTest& operator=(const TempDirForTest&) = delete;

    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return io::join_path(path_, name); }

  private:
    std::string path_;
};

}  // namespace narad::queue
