#include "queue/offload_select.h"

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

#include "providers/ofi_common/register_ofi.h"
#include "providers/shm_native/shm_backend.h"

namespace nicq::queue {
namespace {

// What a provider offers, as libfabric lists it with no hints (the union
// over its fi_info entries): `found` is false when libfabric has no
// provider of that name at all.
struct Offered {
  bool found = false;
  std::uint64_t caps = 0;
};

Offered OfferedBy(const std::string& provider) {
  Offered o;
  fi_info* all = nullptr;
  if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &all) != 0) return o;
  for (fi_info* i = all; i; i = i->next) {
    if (!i->fabric_attr || !i->fabric_attr->prov_name || provider != i->fabric_attr->prov_name)
      continue;
    o.found = true;
    o.caps |= i->caps;
  }
  fi_freeinfo(all);
  return o;
}

struct CapName {
  std::uint64_t bit;
  const char* name;
};

// The capabilities each ofi backend cannot do without (ofi_endpoint.cc's
// hints; atomics are optional for both).
constexpr CapName kNativeNeeds[] = {{FI_TRIGGER, "FI_TRIGGER"},
                                    {FI_RMA_EVENT, "FI_RMA_EVENT"},
                                    {FI_RMA, "FI_RMA"},
                                    {FI_TAGGED, "FI_TAGGED"}};
constexpr CapName kEmulatedNeeds[] = {{FI_RMA, "FI_RMA"}, {FI_TAGGED, "FI_TAGGED"}};

// Why an ofi backend's factory failed, in terms of the provider's
// capabilities where they explain it; else the factory's own message.
std::string ExplainOpenFailure(const std::string& name, const std::string& provider,
                               const Status& st) {
  const Offered o = OfferedBy(provider);
  if (!o.found) return "libfabric lists no provider named " + provider + " (" + st.message() + ")";
  std::string missing;
  auto check = [&](const auto& needs) {
    for (const CapName& c : needs)
      if (!(o.caps & c.bit)) missing += (missing.empty() ? "" : "+") + std::string(c.name);
  };
  if (name == "native") check(kNativeNeeds);
  if (name == "emulated") check(kEmulatedNeeds);
  if (!missing.empty()) return "no " + missing + " (" + st.message() + ")";
  return st.message();
}

}  // namespace

void RegisterOffloadBackends() {
  ofi::RegisterOfiBackends();
  offload::RegisterSimBackend();
  offload::RegisterShmBackend();
}

std::vector<std::string> BackendChain(const std::string& want) {
  if (want == "none") return {};
  if (want == "sim") return {"sim"};
  if (want.empty() || want == "auto" || want == "native") return {"native", "emulated"};
  if (want == "emulated") return {"emulated", "native"};
  // shm needs every rank on one node; elsewhere the usual chain follows.
  if (want == "shm") return {"shm", "native", "emulated"};
  return {want, "native", "emulated"};  // an unknown name: refused first, then the usual chain
}

Status OpenBackend(const std::string& name, const offload::BackendOptions& options,
                   std::unique_ptr<offload::OffloadBackend>* out) {
  out->reset();
  std::unique_ptr<offload::OffloadBackend> b;
  Status st = offload::CreateBackend(name, options, &b);
  if (!st.ok()) return Status(st.code(), ExplainOpenFailure(name, options.provider, st));
  // A backend that opens but cannot hold one enqueued waitall would hang
  // the first such wait: refused here, while another backend can take over.
  const std::size_t slots = b->Caps().max_trigger_slots;
  if (slots != 0 && slots < kMinTriggerSlots) {
    const std::string knob = name == "native"
                                 ? "NICQ_NATIVE_SLOTS, or the provider's deferred-work queue "
                                   "depth shared by the node's ranks"
                             : name == "emulated" ? "NICQ_EMU_OPS"
                             : name == "shm"      ? "NICQ_SHM_TRIGGER_OPS"
                                                  : "the backend's slot limit";
    return Error(Code::kUnsupportedOperation,
                 "trigger slots: " + std::to_string(slots) + " for this process (" + knob +
                     "), fewer than the " + std::to_string(kMinTriggerSlots) +
                     " a queue may hold in flight");
  }
  *out = std::move(b);
  return Status::Ok();
}

std::string FallbackMessage(const std::string& provider, const std::vector<Refusal>& refused,
                            const std::string& chosen) {
  std::string out;
  if (chosen.empty()) {
    out = "no offload backend opens on provider " + provider;
    for (const Refusal& r : refused) out += "; " + r.backend + ": " + r.reason;
    return out + "; MPI_Queue_init and MPI_Match* need one, all else runs on the host";
  }
  for (const Refusal& r : refused)
    out += (out.empty() ? "" : "; ") + r.backend + " backend unavailable on provider " + provider +
           ": " + r.reason;
  return out + "; using " + chosen;
}

void ProbeProvider(const std::string& provider, const std::string& want, std::string* chosen,
                   std::vector<Refusal>* refused, std::vector<Refusal>* later) {
  RegisterOffloadBackends();
  chosen->clear();
  refused->clear();
  later->clear();
  offload::BackendOptions o;
  o.provider = provider;
  for (const std::string& name : BackendChain(want)) {
    std::unique_ptr<offload::OffloadBackend> b;
    Status st = OpenBackend(name, o, &b);
    if (st.ok() && chosen->empty()) *chosen = name;
    if (!st.ok()) (chosen->empty() ? refused : later)->push_back({name, st.message()});
    if (b) (void)b->Flush();
  }
}

}  // namespace nicq::queue
