// Shared machinery of the contract-faithful test providers ("personas").
//
// A persona is a libfabric DL provider that wraps a core provider available
// on these machines and advertises and enforces the published contract of a
// NIC we target (docs/provider-contracts.md lists every rule and its source).
// The app receives the core's own fabric/domain/endpoint/counter/CQ objects
// with their ops tables replaced by per-object copies held in the structs
// below; each replaced entry checks the contract and forwards to the saved
// core entry. Because every copy is embedded in its object's state, an op
// finds that state with container_of on the ops pointer it was reached by.
// Memory regions are the persona's own objects (registration state machine
// and descriptor checks), with the core MR behind them.
#ifndef NICQ_PROVIDERS_PERSONA_PERSONA_H
#define NICQ_PROVIDERS_PERSONA_PERSONA_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_prov.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_set>
#include <vector>

namespace nicq::persona {

// What one persona advertises and enforces; the rule set is chosen by flags
// so the two personas share every wrapper.
struct Spec {
  const char* name;         // provider name registered with libfabric
  const char* core_name;    // provider string of the wrapped core
  uint64_t caps;            // capabilities advertised (intersected with the core's)
  uint64_t forbidden_caps;  // hints asking any of these get -FI_ENODATA
  bool cxi;               // cxi rules: FI_MR_ENDPOINT state machine, deferred work, manual progress
  bool verbs;             // verbs;ofi_rxm rules: FI_MR_LOCAL variants, page-aligned MRs
  uint64_t core_mr_mode;  // mr_mode asked of the core
  size_t amo_max_count;   // elements per atomic op (0: as the core)
  // The persona offers FI_MR_VIRT_ADDR over a core that takes offsets: its
  // provider keys carry the region's page-aligned base (see key_base), and
  // the initiator turns the app's virtual address into the core's offset.
  bool key_encodes_base;
  size_t cq_data_size;
};

template <class T, class M>
T* owner_of(const M* member, const M T::*field) {
  const auto off = reinterpret_cast<size_t>(&(static_cast<T*>(nullptr)->*field));
  return reinterpret_cast<T*>(reinterpret_cast<char*>(const_cast<M*>(member)) - off);
}

[[noreturn]] void fatal(const Spec& spec, const char* fmt, ...);
void note(const Spec& spec, const char* fmt, ...);

struct Domain;
struct Ep;

struct Fabric {
  fi_ops fid_ops;
  fi_ops_fabric ops;
  const fi_ops* core_fid_ops;
  const fi_ops_fabric* core_ops;
  fid_fabric* self;
  const Spec* spec;
};

// A counter of the app (a core counter with persona ops). Events the target
// NIC counts only under software progress are given to the core as a
// "shadow" counter whose increments reach this counter during the app's
// calls on the domain (Domain::progress).
struct Cntr {
  fi_ops fid_ops;
  fi_ops_cntr ops;
  const fi_ops* core_fid_ops;
  const fi_ops_cntr* core_ops;
  fid_cntr* self;
  Domain* dom;
  fid_cntr* shadow = nullptr;
  uint64_t shadow_seen = 0;
  uint64_t shadow_err_seen = 0;
  uint64_t core_read() const { return core_ops->read(self); }
};

struct Cq {
  fi_ops fid_ops;
  fi_ops_cq ops;
  const fi_ops* core_fid_ops;
  const fi_ops_cq* core_ops;
  fid_cq* self;
  Domain* dom;
  size_t entry_size;  // bytes per entry of the CQ's format
  // Completions the persona reports itself (sends past the rendezvous
  // threshold); every CQ format is a prefix of the tagged entry.
  std::deque<fi_cq_tagged_entry> synthetic;
};

enum class MrState { registered, bound, enabled };

struct Mr {
  uint64_t magic;
  fid_mr mr;  // what the app holds
  fi_ops fid_ops;
  Domain* dom;
  MrState state = MrState::registered;
  Ep* ep = nullptr;
  std::vector<std::pair<fid*, uint64_t>> cntr_binds;  // applied to the core MR at enable
  fid_mr* core = nullptr;
  const char* base;
  size_t len;
  uint64_t access;
  uint64_t flags;  // fi_mr_reg flags (FI_RMA_EVENT ...), passed to the core
  uint64_t key;
};

struct SlowSend;
struct SendAgent;

// A deferred send posted as a core FI_TRIGGER-flagged op: its context is
// this record, translated back to the app's context when read from a CQ.
struct TriggeredSend {
  fi_triggered_context tctx;  // first: the core reads it as the op context
  void* app_context;
  bool app_wants_completion;
  iovec iov;
  void* desc;
  std::unique_ptr<char[]> payload;  // an inject's private copy (persona_ep.cc)
};

struct Domain {
  fi_ops fid_ops;
  fi_ops_domain ops;
  fi_ops_mr mr_ops;
  const fi_ops* core_fid_ops;
  const fi_ops_domain* core_ops;
  const fi_ops_mr* core_mr_ops;
  fid_domain* self;
  Fabric* fabric;
  const Spec* spec;
  fi_info* info;      // the persona info the domain was opened with
  bool prov_key;      // FI_MR_PROV_KEY in the domain's mr_mode
  bool mr_local;      // FI_MR_LOCAL in the domain's mr_mode
  uint64_t next_key;  // persona-chosen keys

  std::recursive_mutex lock;
  std::unordered_set<Mr*> mrs;
  std::unordered_set<Ep*> eps;
  std::unordered_set<Cntr*> cntrs;
  std::set<TriggeredSend*> sends;
  std::vector<fi_deferred_work*> owned_work;  // core copies, kept until close
  // Completion counter given to the core for deferred work that has none:
  // sockets dereferences it unconditionally when the work completes.
  fid_cntr* sink = nullptr;
  // Sends past the rendezvous threshold in flight, and idle core counters
  // that count their completion (persona_rdzv.cc).
  std::vector<SlowSend*> slow_sends;
  std::vector<fid_cntr*> done_pool;
  // The thread that finishes deferred eager sends counted on a completion
  // counter of their own (persona_rdzv.cc); started by the first one.
  SendAgent* send_agent = nullptr;
  // Deferred-work entries this domain holds: triggering counter -> thresholds.
  std::map<Cntr*, std::multiset<uint64_t>> dwq_pending;
  size_t dwq_held = 0;
  struct DwqShm* dwq = nullptr;
  int dwq_fd = -1;
  int dwq_slot = -1;

  void progress();
  Cntr* cntr_of(fid* f);
  Ep* ep_of(fid* f);
  Mr* mr_of(void* desc);
};

struct Ep {
  fi_ops fid_ops;
  fi_ops_msg msg;
  fi_ops_tagged tagged;
  fi_ops_rma rma;
  fi_ops_atomic atomic;
  const fi_ops* core_fid_ops;
  const fi_ops_msg* core_msg;
  const fi_ops_tagged* core_tagged;
  const fi_ops_rma* core_rma;
  const fi_ops_atomic* core_atomic;
  fid_ep* self;
  Domain* dom;
  Cntr* send_cntr = nullptr;
  bool tx_cq = false;         // a CQ is bound for FI_TRANSMIT
  bool tx_selective = false;  // ... with FI_SELECTIVE_COMPLETION
  Cq* tx_cq_obj = nullptr;
};

// Object wrappers (persona_objects.cc, persona_ep.cc, persona_mr.cc).
int ensure_cntr_shadow(Cntr* c);
int wrap_counter(Domain* dom, fid_cntr* core);
int wrap_queue(Domain* dom, fid_cq* core, fi_cq_format format);
int wrap_ep(Domain* dom, fid_ep* core);
int mr_reg(Domain* dom, const iovec* iov, size_t count, uint64_t access, uint64_t requested_key,
           uint64_t flags, fid_mr** mr, void* context);
// The core descriptor for one local buffer of a data op on ep, or an error
// when the contract refuses the descriptor.
int translate_desc(Ep* ep, void* desc, const void* buf, size_t len, void** core_desc);

// Sends at or past the rendezvous threshold (persona_rdzv.cc): counted and
// completed only under software progress (fi_cxi(7) "Counters").
size_t rdzv_threshold();
// iov/desc are the app's (desc already translated to the core's).
// nic_counts: a deferred eager send, finished by the domain's send agent
// without the app's calls (count_to is the work's completion counter).
ssize_t post_slow_send(Ep* e, const iovec* iov, void* const* core_desc, size_t count,
                       fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void* context,
                       bool tagged, bool cq_entry, fi_deferred_work* deferred,
                       bool nic_counts = false);
void progress_slow_sends(Domain* d);
void close_slow_sends(Domain* d);
fid_cntr* sink_cntr(Domain* d);

// Deferred work (persona_dwq.cc).
int queue_work(Domain* dom, fi_deferred_work* work);
int flush_work(Domain* dom);
int dwq_attach(Domain* dom);
void dwq_detach(Domain* dom);
void dwq_release_fired(Domain* dom);
bool dwq_reserve(Domain* dom);  // one entry; false when the service has none left
void dwq_release(Domain* dom, size_t n);
[[noreturn]] void dwq_exhausted(Domain* dom);
size_t dwq_depth();

// getinfo (persona_info.cc).
int getinfo(const Spec& spec, uint32_t version, const char* node, const char* service,
            uint64_t flags, const fi_info* hints, fi_info** info);
// The core info matching a persona info (to open core domain and endpoint).
fi_info* core_info_for(const Spec& spec, const fi_info* info);

fi_provider make_provider(const Spec& spec);

// Keys of a key_encodes_base persona: base page number in the high 36 bits
// (48-bit virtual addresses), a per-domain serial in the low 28.
inline uint64_t make_base_key(const void* base, uint64_t serial) {
  return ((reinterpret_cast<uint64_t>(base) >> 12) << 28) | (serial & 0xfffffffu);
}
inline uint64_t key_base(uint64_t key) {
  return (key >> 28) << 12;
}

}  // namespace nicq::persona

#endif
