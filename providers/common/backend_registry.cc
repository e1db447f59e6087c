// Backend registry: a name -> factory table filled by each backend's own
// registration code, so adding a backend never edits this file.
#include "providers/common/backend_registry.h"

#include <algorithm>
#include <mutex>

namespace nicq::offload {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<BackendInfo> entries;
};

// Constructed on first use: registrations may run from static initializers
// of other translation units in any order.
Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

void RegisterBackend(std::string_view name, int priority, BackendFactory factory,
                     std::string_view help) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (BackendInfo& e : r.entries) {
    if (e.name == name) {
      e.priority = priority;
      e.factory = factory;
      e.help = std::string(help);
      return;
    }
  }
  r.entries.push_back(BackendInfo{std::string(name), priority, factory, std::string(help)});
}

std::vector<BackendInfo> RegisteredBackends() {
  Registry& r = GetRegistry();
  std::vector<BackendInfo> out;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    out = r.entries;
  }
  std::stable_sort(out.begin(), out.end(), [](const BackendInfo& a, const BackendInfo& b) {
    return a.priority > b.priority;
  });
  return out;
}

Status CreateBackend(std::string_view name, const BackendOptions& options,
                     std::unique_ptr<OffloadBackend>* out) {
  BackendFactory factory = nullptr;
  std::string known;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const BackendInfo& e : r.entries) {
      if (e.name == name) factory = e.factory;
      known += (known.empty() ? "" : ", ") + e.name;
    }
  }
  if (factory == nullptr) {
    return Error(Code::kArg, "CreateBackend: no backend named '" + std::string(name) +
                                 "' (registered: " + (known.empty() ? "none" : known) + ")");
  }
  Status s = factory(options, out);
  if (!s.ok()) s.WithContext("CreateBackend(" + std::string(name) + ")");
  return s;
}

}  // namespace nicq::offload
