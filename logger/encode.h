/* encode.h: the record stream written into a shared mapping of the log
 * file (encode.c). */
#ifndef CPATH_ENCODE_H
#define CPATH_ENCODE_H
#include <stdint.h>

#pragma GCC visibility push(hidden)

int cp_enc_open(int fd, uint64_t off, int64_t tick0, int64_t every, int threads, int depth);
int cp_enc_chunk(int kind, const void *payload, int len);
uint64_t cp_enc_end(int status, int info, int truncate, int checked);

/* One stream (no MPI_THREAD_MULTIPLE). */
void cp_enc_batch(const cp_rec *recs, const cp_path *paths, int n);
extern uint64_t cp_nrec, cp_ncalls, cp_ncalls_next, cp_dropped;
extern volatile int cp_enc_busy;

/* Threads: a stream each, written in blocks. */
typedef struct cp_enc cp_enc;
cp_enc *cp_enc_stream(uint32_t n);
int cp_enc_code(cp_enc *e, const cp_rec *recs, const cp_path *paths, int n);
void cp_enc_commit(cp_enc *e);
int cp_enc_put(cp_enc *e, const cp_rec *recs, const cp_path *paths, int n, int64_t now);
int cp_enc_due(cp_enc *e, int64_t now);
void cp_enc_checkpoint(cp_enc *e);
#pragma GCC visibility pop
#endif
