// What the host-fold plans share: offload_host_fold.cc prepares allreduce
// and reduce, offload_host_fold_scatter.cc reduce_scatter(_block), scan
// and exscan. Each is a flat gather into slots of the root's plan scratch,
// one host step at the root that combines them through dtype::Reduce, and
// puts of each rank's result (offload/algorithms/gather_fold.h builds it;
// the steps here that need MPI's datatypes and ops reach it as opaque host
// steps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "coll/coll.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "offload/algorithms/gather_fold.h"
#include "offload/schedule.h"

namespace nicq::coll::host_fold {

// The op of a fold step, resolved at init; lives in plan scratch.
struct FoldOp {
  int op = 0, type = 0;
  const dtype::Type* t = nullptr;
  dtype::PreparedReduce prepared;
  // inout = in op inout for `count` items (Reduce's argument order).
  void Combine(const char* in, char* inout, std::int64_t count) const;
};
FoldOp MakeFoldOp(const Args& a);

// A rank's pack of its contribution into plan scratch, or unpack of its
// result from there, as a host step's argument.
struct Packing {
  const dtype::Type* t = nullptr;
  std::int64_t count = 0;
  char* user = nullptr;
  char* packed = nullptr;
};
void RunPack(void* arg);
void RunUnpack(void* arg);

// A host step packing `count` items of `t` at `user` into fresh scratch
// (returned in *packed), or unpacking `count` items from `packed` into
// `user`; each labeled as the dump shows it, its argument in `s`'s scratch.
offload::HostStepSpec PreparePack(offload::Schedule* s, const dtype::Type* t, std::int64_t count,
                                  const void* user, char** packed);
offload::HostStepSpec PrepareUnpack(offload::Schedule* s, const dtype::Type* t, std::int64_t count,
                                    void* user, char* packed);

// Bytes an image of `count` items spans, and the offset of its first byte
// from the items' origin (negative when a type's data starts below it).
bool ImageSpan(const dtype::Type& t, std::int64_t count, std::size_t* span, std::int64_t* first);
// An image of `count` items in plan scratch (ImageSpan must hold): the
// address of the items' origin, which the op sees.
char* AllocImage(offload::Schedule* s, const dtype::Type& t, std::int64_t count);

// Items of one rank's contribution: the whole send buffer.
std::int64_t ContributionItems(const Args& a);

// Builds this rank's part of a reduce_scatter(_block), scan or exscan host
// fold (offload::BuildGatherFold); `why` names the reason in the fold
// step's label.
Status BuildScatterFold(const Args& a, const std::string& why, std::size_t bytes,
                        offload::Schedule* s);

}  // namespace nicq::coll::host_fold
