// cxi_persona: HPE Slingshot (cxi) contract over the sockets provider.
// Rules and sources: docs/provider-contracts.md.
#include "providers/persona/persona.h"

namespace {

const nicq::persona::Spec kCxi = {
    .name = "cxi_persona",
    .core_name = "sockets",
    // fi_cxi(7) / cxip_info.c capabilities the persona can honour over sockets.
    .caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_SEND | FI_RECV |
            FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT | FI_TRIGGER | FI_DIRECTED_RECV |
            FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_FENCE,
    .forbidden_caps = 0,
    .cxi = true,
    .verbs = false,
    .core_mr_mode = 0,   // sockets: keys chosen by the caller, offsets as remote addresses
    .amo_max_count = 1,  // CXIP_AMO_MAX_IOV == 1
    .key_encodes_base = false,
    .cq_data_size = 8,
};

fi_provider g_provider = nicq::persona::make_provider(kCxi);

}  // namespace

extern "C" __attribute__((visibility("default"))) fi_provider* fi_prov_ini(void) {
  return &g_provider;
}
