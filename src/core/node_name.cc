#include "core/node_name.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

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

std::uint64_t PidSpaceId() {
  char boot_id[64] = {};
  std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f) return 0;
  const bool got = std::fgets(boot_id, sizeof boot_id, f) != nullptr;
  std::fclose(f);
  struct stat ns = {};
  if (!got || stat("/proc/self/ns/pid", &ns) != 0) return 0;
  // FNV-1a over the boot id and the namespace's inode and device.
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<const unsigned char*>(p)[i];
      h *= 1099511628211ull;
    }
  };
  mix(boot_id, std::strlen(boot_id));
  mix(&ns.st_ino, sizeof ns.st_ino);
  mix(&ns.st_dev, sizeof ns.st_dev);
  return h == 0 ? 1 : h;
}

}  // namespace nicq
