/* cswap: scope-based cleanup (GCC/Clang cleanup attribute).
 *
 * A variable declared CLEANUP_FREE is freed when it goes out of scope, and
 * ACQUIRE_LOCK_FOR_CURRENT_SCOPE unlocks on every return path, so an early
 * error return can neither leak nor leave a mutex held.
 */
#ifndef CSWAP_CLEANUP_H
#define CSWAP_CLEANUP_H

#include <pthread.h>
#include <stdlib.h>

static inline void
cleanup_free (void *ptr)
{
  free (*(void **) ptr);
}
#define CLEANUP_FREE __attribute__ ((cleanup (cleanup_free)))

static inline void
cleanup_mutex_unlock (pthread_mutex_t **mutex)
{
  pthread_mutex_unlock (*mutex);
}
#define CSWAP_CONCAT_(a, b) a##b
#define CSWAP_CONCAT(a, b) CSWAP_CONCAT_ (a, b)
#define ACQUIRE_LOCK_FOR_CURRENT_SCOPE(mutex)                           \
  __attribute__ ((cleanup (cleanup_mutex_unlock), unused))              \
  pthread_mutex_t *CSWAP_CONCAT (scoped_lock_, __LINE__) = (mutex);      \
  pthread_mutex_lock (CSWAP_CONCAT (scoped_lock_, __LINE__))

#endif /* CSWAP_CLEANUP_H */
