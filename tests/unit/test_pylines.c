/* writer/pylines.c: a sampled Python frame's line. The location-table
 * decoder against CPython's own lines for every instruction of the
 * vectors (tests/pylines_vectors.py, argv[1]); the code object read through
 * the kernel: a live one (laid out here as CPython lays it out), a freed
 * one (unmapped memory: no line, no fault), one of another type. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "common/map.h"
#include "trace/record.h"
#include "writer/symbols.h"

struct clt_py_code_layout clt_py_code_layout;

static int vectors(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return perror(path), 1;
    static char line[1 << 20];
    static uint8_t table[1 << 19];
    size_t n = 0;
    int first = 0, bad = 0, codes = 0;
    long checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'F') {
            char *hex = strchr(line + 2, ' ') + 1;
            first = atoi(line + 2);
            n = 0;
            for (char *h = hex; h[0] && h[1] && h[0] != '-' && h[0] != '\n'; h += 2)
                sscanf(h, "%2hhx", &table[n++]);
            codes++;
        } else if (line[0] == 'O') {
            unsigned at;
            int want;
            sscanf(line + 2, "%u %d", &at, &want);
            int got = clt_py_line_in_table(table, n, first, at);
            if ((got < 0 ? 0 : got) != want && bad++ < 5)
                fprintf(stderr, "code %d (first line %d) offset %u: line %d, CPython says %d\n", codes, first, at,
                        got, want);
            checked++;
        }
    }
    fclose(f);
    printf("%d code objects, %ld instructions: %d lines differ from CPython's\n", codes, checked, bad);
    return bad != 0 || checked < 1000;
}

int main(int argc, char **argv)
{
    int rc = argc > 1 ? vectors(argv[1]) : 0;
    /* a code object as 3.11 lays it out: type at 8, first line at 72, table at 136 */
    static uint64_t type_obj[8], bytes_obj[8], code_obj[32];
    clt_py_code_layout = (struct clt_py_code_layout){ (uint64_t)(uintptr_t)type_obj, 72, 136 };
    const uint8_t t[] = { 0x80 | 13 << 3 | 1, 4, 0x80 | 11 << 3 | 0, 0, 9 };   /* +2 lines for 2 units, +1 for 1 */
    code_obj[1] = (uint64_t)(uintptr_t)type_obj;
    *(int32_t *)((char *)code_obj + 72) = 40;
    code_obj[136 / 8] = (uint64_t)(uintptr_t)bytes_obj;
    bytes_obj[2] = sizeof t;
    memcpy(&bytes_obj[4], t, sizeof t);
    struct clt_map cache = { 0 };
    uint32_t a = clt_py_sample_line(&cache, (uint64_t)(uintptr_t)code_obj, 1, 2);
    uint32_t b = clt_py_sample_line(&cache, (uint64_t)(uintptr_t)code_obj, 1, 4);
    code_obj[1] = 0;                                    /* no longer a code object: */
    uint32_t c = clt_py_sample_line(&cache, (uint64_t)(uintptr_t)code_obj, 1, 2);     /* kept, as read then */
    uint32_t d = clt_py_sample_line(&cache, (uint64_t)(uintptr_t)code_obj, 2, 2);     /* other names: read, none */
    void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, 4096);
    uint32_t e = clt_py_sample_line(&cache, (uint64_t)(uintptr_t)gone, 1, 2);
    printf("live: offset 2 line %u, offset 4 line %u; cached %u; not code %u; unmapped %u\n", a, b, c, d, e);
    clt_map_free(&cache);
    return rc || a != 42 || b != 43 || c != 42 || d != 0 || e != 0;
}
