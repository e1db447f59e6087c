// The element-wise kernels of MPI's predefined reduction operations on
// predefined datatypes (reduce_kernels.cc), below the op registry and the
// typed reductions of reduce.cc.
#pragma once

#include <cstdint>

namespace nicq::dtype {

// io[i] = in[i] op in2[i] for n units of the predefined type `index`
// (in2 == io is the two-operand form); false, touching nothing, when the op
// does not apply to the type. With n == 0 it only answers that.
bool ReducePredefined(int op, int index, const void* in, const void* in2, void* io, std::int64_t n);
// Whether predefined `op` applies to units of predefined type `unit`.
bool Applies(int op, int unit);

}  // namespace nicq::dtype
