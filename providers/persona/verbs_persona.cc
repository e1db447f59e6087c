// verbs_persona: the contract of verbs;ofi_rxm (InfiniBand / RoCE) over
// tcp;ofi_rxm. Rules and sources: docs/provider-contracts.md.
#include "providers/persona/persona.h"

namespace {

const nicq::persona::Spec kVerbs = {
    .name = "verbs_persona",
    .core_name = "tcp;ofi_rxm",
    .caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_SEND | FI_RECV |
            FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_SOURCE | FI_MULTI_RECV |
            FI_LOCAL_COMM | FI_REMOTE_COMM,
    // fi_verbs(7): no triggered operations; no remote counters.
    .forbidden_caps = FI_TRIGGER | FI_RMA_EVENT,
    .cxi = false,
    .verbs = true,
    .core_mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    .amo_max_count = 0,
    .key_encodes_base = true,
    .cq_data_size = 8,  // rxm_init.c: sizeof ofi_op_hdr.data
};

fi_provider g_provider = nicq::persona::make_provider(kVerbs);

}  // namespace

extern "C" __attribute__((visibility("default"))) fi_provider* fi_prov_ini(void) {
  return &g_provider;
}
