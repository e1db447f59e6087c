#include "core/node_name.h"

#include <unistd.h>

#include "core/config.h"

namespace nicq {

std::string NodeName(int world_rank) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string name = host[0] ? host : "localhost";
  const std::int64_t per_node = config::GetInt("NICQ_NODE_RANKS");
  if (per_node > 0 && world_rank >= 0) name += ":vnode" + std::to_string(world_rank / per_node);
  return name;
}

}  // namespace nicq
