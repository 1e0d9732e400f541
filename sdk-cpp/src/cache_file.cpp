#include "flagstore/cache_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#ifdef _WIN32
#include <process.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

namespace flagstore {

std::optional<ConfigPayload> readCacheFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(std::strerror(errno));
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const std::size_t read = std::fread(buffer, 1, sizeof buffer, file);
    text.append(buffer, read);
    if (read < sizeof buffer) break;
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw std::runtime_error("reading failed");
  return parseConfigPayloadText(text);
}

namespace {
std::atomic<unsigned> writes{0};
}

void writeCacheFile(const std::string& path, const ConfigPayload& payload) {
  const std::string text = toJson(payload).dump(-1, ' ', false, Json::error_handler_t::replace);
#ifdef _WIN32
  const std::string temporary = path + "." + std::to_string(_getpid()) + "." + std::to_string(++writes) + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error(std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
  std::fclose(file);
  if (!written || !MoveFileExA(temporary.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    std::remove(temporary.c_str());
    throw std::runtime_error("writing " + temporary + " failed");
  }
#else
  const std::string temporary = path + "." + std::to_string(getpid()) + "." + std::to_string(++writes) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  std::size_t done = 0;
  int error = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    done += std::size_t(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  ::close(fd);
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw std::runtime_error(std::strerror(error));
  }
#endif
}

}  // namespace flagstore
