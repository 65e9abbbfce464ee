/* cswap: nbdkit's settings and the machine's that leave a local swap
 * device unsafe, warned about at start (nbdkit-settings.c).
 */
#ifndef CSWAP_NBDKIT_SETTINGS_H
#define CSWAP_NBDKIT_SETTINGS_H

#include <stdint.h>

/* The vm.min_free_kbytes a local device needs on a machine of
 * MEM_TOTAL_KIB: a twentieth of it, at most 16 MiB (what `cswap up`
 * raises it to: min-free=auto in cswap.conf(5)).
 */
extern uint64_t nbdkit_settings_min_free_kib (uint64_t mem_total_kib);

/* The threads nbdkit should serve a local device with on a machine of
 * CPUS CPUs: one per CPU, 2 to 16 (what `cswap up` passes).
 */
extern unsigned nbdkit_settings_threads (long cpus);

/* Warns on stderr ("cswap: warning: …"), once each, about what in
 * nbdkit's command line (ARGC words of ARGV) and the machine's settings
 * leaves a swap device served by this nbdkit to the same machine unsafe
 * under whole-machine memory pressure, naming the command that fixes it
 * (vm.page-cluster among them: a matter of speed, which under pressure
 * decides whether the machine gets anywhere).
 * With $CSWAP_SYSCTLS_BY_CSWAP set (by cswap(8), which sets them itself
 * once the device is up), not about the machine's sysctls.
 * $CSWAP_PROC_SYS and $CSWAP_MEMINFO name other files than /proc/sys and
 * /proc/meminfo (for tests).
 */
extern void nbdkit_settings_warn (int argc, char *const *argv);

#endif
