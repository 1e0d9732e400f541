#pragma once
#include <memory>

#include "flagstore/transport.hpp"

namespace flagstore {

/**
 * libcurl's transport for dedicated servers outside an engine: one thread of its own runs every request (a curl multi
 * handle); callbacks come from that thread. Safe to share between clients.
 */
std::shared_ptr<Transport> makeCurlTransport();

}  // namespace flagstore
