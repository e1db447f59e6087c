/* prov_sockets_post_floor: the sockets provider's own cost of queueing
 * deferred work, without nicq. Each epoch queues 64 ops of two entries each
 * (a counter add and its completion report, as trigger_bench's native epoch)
 * with fi_control(FI_QUEUE_WORK) on one unfired trigger counter, then fires
 * them. Prints the median ns per op: the floor under the native backend's
 * post cost (docs/offload-backends.md, "Measured costs"). */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_trigger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kEntries = 128, kEpochs = 200 };

static double NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int Less(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  struct fi_info *hints = fi_allocinfo(), *info = NULL;
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  hints->caps = FI_TRIGGER | FI_RMA;
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = strdup("sockets");
  if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) != 0 ||
      fi_fabric(info->fabric_attr, &fabric, NULL) != 0 ||
      fi_domain(fabric, info, &domain, NULL) != 0) {
    fprintf(stderr, "sockets_post_floor: no sockets provider with FI_TRIGGER\n");
    return 1;
  }
  struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC};
  struct fid_cntr *trigger, *target, *completion;
  if (fi_cntr_open(domain, &attr, &trigger, NULL) || fi_cntr_open(domain, &attr, &target, NULL) ||
      fi_cntr_open(domain, &attr, &completion, NULL))
    return 1;
  /* Descriptors stay valid until their entries fire (sockets reads them then). */
  static struct fi_deferred_work work[kEntries];
  static struct fi_op_cntr add[kEntries];
  double per_op[kEpochs];
  for (int e = 0; e < kEpochs; ++e) {
    for (int i = 0; i < kEntries; ++i) {
      memset(&work[i], 0, sizeof work[i]);
      add[i].cntr = i % 2 ? completion : target;
      add[i].value = 1;
      work[i].threshold = (uint64_t)e + 1;
      work[i].triggering_cntr = trigger;
      work[i].op_type = FI_OP_CNTR_ADD;
      work[i].op.cntr = &add[i];
    }
    const double t0 = NowNs();
    for (int i = 0; i < kEntries; ++i)
      if (fi_control(&domain->fid, FI_QUEUE_WORK, &work[i]) != 0) return 1;
    per_op[e] = (NowNs() - t0) / (kEntries / 2);
    fi_cntr_add(trigger, 1);
  }
  qsort(per_op, kEpochs, sizeof per_op[0], Less);
  printf("post sockets provider floor        %8.1f ns/op (median of %d epochs of %d ops)\n",
         per_op[kEpochs / 2], kEpochs, kEntries / 2);
  return 0;
}
