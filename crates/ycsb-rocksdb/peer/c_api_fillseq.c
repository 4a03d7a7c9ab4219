/*
 * db_bench's fillseq written against RocksDB's C API, the interface the
 * `rocksdb` crate (and so ycsb) goes through, in two ways:
 *
 *   put    rocksdb_put per write: the C API builds and frees a WriteBatch
 *          for every call (what the `rocksdb` crate 0.20's `put_opt` does);
 *   reuse  one rocksdb_writebatch_t, cleared and refilled per write, then
 *          rocksdb_write (what db_bench does with its C++ WriteBatch).
 *
 * It opens the database with the OPTIONS file of another database (give
 * it one db_bench wrote, so that both run with db_bench's options) and
 * writes `num` keys in order: 16-byte keys (the number big-endian, padded
 * with '0' as db_bench pads), 100-byte values cut from a 1 MiB random
 * buffer, the WAL on, no sync. It prints the timed loop's writes per
 * second and per CPU-second. See docs/journal/performance-engines.md,
 * "fillseq: the C API's share, measured with a C program".
 *
 *   gcc -O2 -o c_api_fillseq c_api_fillseq.c -lrocksdb
 *   ./c_api_fillseq <options-db> <new-db> <num> put|reuse
 */
#include <rocksdb/c.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

static void check(char *err, const char *what) {
  if (err != NULL) {
    fprintf(stderr, "c_api_fillseq: %s: %s\n", what, err);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[4], "put") != 0 && strcmp(argv[4], "reuse") != 0)) {
    fprintf(stderr, "usage: %s <options-db> <new-db> <num> put|reuse\n", argv[0]);
    return 2;
  }
  const char *options_db = argv[1], *path = argv[2];
  long num = atol(argv[3]);
  int reuse = strcmp(argv[4], "reuse") == 0;

  char *err = NULL;
  rocksdb_env_t *env = rocksdb_create_default_env();
  rocksdb_cache_t *cache = rocksdb_cache_create_lru(8 << 20);
  rocksdb_options_t *db_options = NULL, **cf_options = NULL;
  size_t cfs = 0;
  char **cf_names = NULL;
  rocksdb_load_latest_options(options_db, env, 0, cache, &db_options, &cfs, &cf_names,
                              &cf_options, &err);
  check(err, "loading the options");
  rocksdb_options_set_create_if_missing(db_options, 1);
  rocksdb_column_family_handle_t **handles = calloc(cfs, sizeof *handles);
  rocksdb_t *db = rocksdb_open_column_families(db_options, path, (int)cfs,
                                               (const char *const *)cf_names,
                                               (const rocksdb_options_t *const *)cf_options,
                                               handles, &err);
  check(err, "opening");

  enum { POOL = 1 << 20, VALUE = 100, KEY = 16 };
  char *pool = malloc(POOL);
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < POOL; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    pool[i] = (char)(' ' + x % 95);
  }
  rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
  rocksdb_writebatch_t *batch = rocksdb_writebatch_create();
  char key[KEY];
  memset(key, '0', KEY);
  size_t offset = 0;

  double wall = now(), used = cpu();
  for (long i = 0; i < num; i++) {
    for (int b = 0; b < 8; b++) key[b] = (char)((uint64_t)i >> (56 - 8 * b));
    if (offset + VALUE > POOL) offset = 0;
    const char *value = pool + offset;
    offset += VALUE;
    if (reuse) {
      rocksdb_writebatch_clear(batch);
      rocksdb_writebatch_put(batch, key, KEY, value, VALUE);
      rocksdb_write(db, wo, batch, &err);
    } else {
      rocksdb_put(db, wo, key, KEY, value, VALUE, &err);
    }
    check(err, "writing");
  }
  wall = now() - wall;
  used = cpu() - used;
  printf("%s %ld writes: %.0f ops/s, %.0f ops per CPU-second\n", argv[4], num, num / wall,
         num / used);

  rocksdb_writebatch_destroy(batch);
  rocksdb_writeoptions_destroy(wo);
  for (size_t i = 0; i < cfs; i++) rocksdb_column_family_handle_destroy(handles[i]);
  rocksdb_close(db);
  rocksdb_load_latest_options_destroy(db_options, cf_names, cf_options, cfs);
  rocksdb_cache_destroy(cache);
  rocksdb_env_destroy(env);
  free(handles);
  free(pool);
  return 0;
}
