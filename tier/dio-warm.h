/* cswap tier: the backing file's first asynchronous direct write, made
 * when it is opened (dio-warm.c says why).
 */
#ifndef CSWAP_TIER_DIO_WARM_H
#define CSWAP_TIER_DIO_WARM_H

/* Reads the first block of FD (opened O_DIRECT, at least a block long)
 * and writes it back as it was, through an io_uring of its own.  Returns
 * 0, or a negative errno; nothing on the file changes either way.
 */
extern int dio_warm (int fd);

#endif /* CSWAP_TIER_DIO_WARM_H */
