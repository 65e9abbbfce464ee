/* cswap: restrict-realtime PROGRAM [ARG...] — runs PROGRAM under the
 * seccomp filter systemd installs for RestrictRealtime=yes, for
 * test-unit-realtime.sh where no systemd manager runs to apply the unit's
 * sandbox itself.
 *
 * systemd's seccomp_restrict_realtime() (src/shared/seccomp-util.c, the
 * same in 252 and 257) makes sched_setscheduler() fail with EPERM for
 * every policy but SCHED_OTHER, SCHED_BATCH and SCHED_IDLE; everything
 * else passes.  This filter does the same with a plain BPF program, so
 * the test needs no libseccomp: on x86-64 and arm64 alike, the policy is
 * the second argument's low 32 bits.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "restrict-realtime: add this architecture's AUDIT_ARCH_*"
#endif

/* Little-endian on both: the low half of the 64-bit argument comes first. */
#define ARG1_LOW_OFFSET (offsetof (struct seccomp_data, args[1]))

int
main (int argc, char **argv)
{
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setscheduler, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG1_LOW_OFFSET),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SCHED_OTHER, 3, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SCHED_BATCH, 2, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SCHED_IDLE, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {
    .len = sizeof filter / sizeof filter[0], .filter = filter,
  };

  if (argc < 2) {
    fprintf (stderr, "usage: restrict-realtime PROGRAM [ARG...]\n");
    return 2;
  }
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == -1) {
    fprintf (stderr, "restrict-realtime: prctl PR_SET_SECCOMP: %s\n",
             strerror (errno));
    return 1;
  }
  execvp (argv[1], argv + 1);
  fprintf (stderr, "restrict-realtime: execvp %s: %s\n", argv[1],
           strerror (errno));
  return 127;
}
