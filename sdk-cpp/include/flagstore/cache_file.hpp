#pragma once
// The cache file: the last good payload as the service sent it (JSON: etag, generatedAt, pollIntervalSeconds,
// flags), the TypeScript SDK's format, so either SDK starts from a file the other wrote.
#include <optional>
#include <string>

#include "flagstore/payload.hpp"

namespace flagstore {

/** The payload in the file; nullopt when there is no file yet. Throws std::runtime_error (or PayloadError) otherwise. */
std::optional<ConfigPayload> readCacheFile(const std::string& path);

/**
 * Replaces the file in one step: the payload goes to a temporary file beside it (named with the process id), is
 * flushed to disk, and is renamed over the old one, so a crash or another process reading at the same moment sees
 * the old payload or the new one, never half of one. Throws std::runtime_error.
 */
void writeCacheFile(const std::string& path, const ConfigPayload& payload);

}  // namespace flagstore
