/* encode.h: the record stream written into a shared mapping of the log
 * file (encode.c). */
#ifndef CPATH_ENCODE_H
#define CPATH_ENCODE_H
#include <stdint.h>

int cp_enc_open(int fd, uint64_t off, int64_t tick0, int64_t every);
void cp_enc_batch(const cp_rec *recs, int n);
int cp_enc_chunk(int kind, const void *payload, int len);
void cp_enc_end(int status, int info, int truncate);
extern uint64_t cp_nrec, cp_dropped;
extern volatile int cp_enc_busy;
#endif
