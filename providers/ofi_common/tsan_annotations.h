// Happens-before edges that travel through libfabric, made visible to
// ThreadSanitizer. libfabric is not instrumented: when one thread issues an
// op carrying a context and another reads that context from the completion
// queue, the provider's own synchronization orders the two, but TSan cannot
// see it and reports the issuer's writes to the op's descriptor as racing
// with the completer's reads. Release before issuing, acquire after reading
// the completion. No code in other builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define NICQ_TSAN_RELEASE(p) __tsan_release(static_cast<void*>(p))
#define NICQ_TSAN_ACQUIRE(p) __tsan_acquire(static_cast<void*>(p))
#else
#define NICQ_TSAN_RELEASE(p) ((void)0)
#define NICQ_TSAN_ACQUIRE(p) ((void)0)
#endif
