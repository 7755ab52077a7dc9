/* The trace's gzip at exit, on every core: the raw file is cut into 4 MiB
 * chunks, each deflated on its own (raw deflate ending in a sync flush, the
 * last one finished) by worker threads, and the pieces written in order as
 * ONE gzip member (header, the deflate pieces, CRC-32 combined, length): any
 * gzip reader reads it, Perfetto's included. The app has ended: its cores
 * are free, and the exit takes half the time on two of them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "emit.h"

#define CHUNK (4u << 20)
#define AHEAD 8                 /* chunks compressed ahead of the one being written */

struct piece { uint8_t *out; size_t len; uLong crc; int done, failed; };

struct job {
    const uint8_t *src;
    size_t size, n;
    struct piece *pieces;
    size_t next, written;       /* next chunk to claim; chunks written so far */
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static void deflate_piece(const struct job *j, size_t i, struct piece *p)
{
    size_t off = i * CHUNK, len = j->size - off < CHUNK ? j->size - off : CHUNK;
    int last = i + 1 == j->n;
    z_stream z;
    memset(&z, 0, sizeof z);
    p->failed = 1;
    if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return;
    size_t cap = deflateBound(&z, len) + 16;
    p->out = malloc(cap);
    if (p->out) {
        z.next_in = (Bytef *)(uintptr_t)(j->src + off);
        z.avail_in = (uInt)len;
        z.next_out = p->out;
        z.avail_out = (uInt)cap;
        int rc = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
        p->failed = last ? rc != Z_STREAM_END : rc != Z_OK || z.avail_in != 0;
        p->len = cap - z.avail_out;
        p->crc = crc32(0L, j->src + off, (uInt)len);
    }
    deflateEnd(&z);
}

static void *worker(void *arg)
{
    struct job *j = arg;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (j->next < j->n && j->next >= j->written + AHEAD)
            pthread_cond_wait(&j->cond, &j->lock);     /* bounded memory */
        if (j->next >= j->n)
            break;
        size_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        struct piece p = { 0 };
        deflate_piece(j, i, &p);
        pthread_mutex_lock(&j->lock);
        j->pieces[i] = p;
        j->pieces[i].done = 1;
        pthread_cond_broadcast(&j->cond);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int clt_gzip_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) {
        if (in >= 0)
            close(in);
        return -1;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct job j = { .size = (size_t)st.st_size, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
    static const uint8_t empty[1];
    j.src = j.size ? mmap(NULL, j.size, PROT_READ, MAP_PRIVATE, in, 0) : empty;
    close(in);
    j.n = j.size ? (j.size + CHUNK - 1) / CHUNK : 1;
    j.pieces = calloc(j.n, sizeof *j.pieces);
    int ok = out >= 0 && j.src != MAP_FAILED && j.pieces;
    pthread_t th[4];
    unsigned nth = 0;
    if (ok) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned want = cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned)cpus;
        while (nth < want && nth < j.n && pthread_create(&th[nth], NULL, worker, &j) == 0)
            nth++;
        ok = nth > 0;
    }
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
    ok = ok && write_all(out, header, sizeof header) == 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t i = 0; nth && i < j.n; i++) {
        pthread_mutex_lock(&j.lock);
        while (!j.pieces[i].done)
            pthread_cond_wait(&j.cond, &j.lock);
        pthread_mutex_unlock(&j.lock);
        struct piece *p = &j.pieces[i];
        size_t len = j.size - i * CHUNK < CHUNK ? j.size - i * CHUNK : CHUNK;
        ok = ok && !p->failed && write_all(out, p->out, p->len) == 0;
        crc = crc32_combine(crc, p->crc, (z_off_t)len);
        free(p->out);
        p->out = NULL;
        pthread_mutex_lock(&j.lock);
        j.written = i + 1;
        pthread_cond_broadcast(&j.cond);
        pthread_mutex_unlock(&j.lock);
    }
    for (unsigned t = 0; t < nth; t++)
        pthread_join(th[t], NULL);
    uint8_t trailer[8];
    for (int b = 0; b < 4; b++) {
        trailer[b] = (uint8_t)(crc >> (8 * b));
        trailer[4 + b] = (uint8_t)((uint64_t)j.size >> (8 * b));
    }
    ok = ok && write_all(out, trailer, sizeof trailer) == 0;
    if (j.size && j.src != MAP_FAILED)
        munmap((void *)(uintptr_t)j.src, j.size);
    free(j.pieces);
    if (out >= 0 && close(out) != 0)
        ok = 0;
    if (!ok && out >= 0)
        unlink(dst);
    return ok ? 0 : -1;
}
