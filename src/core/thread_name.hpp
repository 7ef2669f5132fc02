#pragma once
// Names the calling thread (as `top -H`, `perf` and /proc show it), so that a profile says
// which of the gateway's threads did the work: the I/O workers, the store's writer (charges
// first), the key follower, SQLite's checkpointer.
#include <pthread.h>

namespace tollgate {

/// At most 15 characters are kept (Linux's limit).
inline void nameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace tollgate
