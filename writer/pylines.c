/* A Python frame's line from its code object and instruction offset, for
 * the CPU samples: their signal handler calls nothing of the interpreter's
 * and leaves the line to the writer (trace/record.h CLT_PY_AT).
 *
 * The code object is read through the kernel (process_vm_readv on this
 * process): by the time the writer gets to a sample the code may have been
 * freed, and a read of memory no longer there must fail, not fault. A code
 * object is checked by its type; its location table (CPython 3.11 and 3.12
 * share the format: Objects/locations.md) is decoded here. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>
#include "common/map.h"
#include "common/peek.h"
#include "trace/record.h"
#include "symbols.h"

#define TABLE_MAX 65536         /* the longest location table read: a function of ~30,000 instructions */

static int peek(uint64_t at, void *to, size_t n)
{
    return clt_peek(getpid(), (const void *)(uintptr_t)at, to, n) ? 0 : -1;
}

static uint32_t varint(const uint8_t *t, size_t n, size_t *i)
{
    uint32_t v = 0;
    for (unsigned shift = 0; *i < n && shift < 32; shift += 6) {
        uint8_t b = t[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64))
            break;
    }
    return v;
}

int clt_py_line_in_table(const uint8_t *t, size_t n, int firstlineno, uint32_t offset)
{
    int line = firstlineno;
    uint32_t addr = 0;          /* bytes: an entry covers 1 to 8 code units of 2 */
    for (size_t i = 0; i < n;) {
        uint8_t head = t[i++];
        if (!(head & 0x80))
            return -1;          /* not the first byte of an entry: not a table of this format */
        unsigned code = (head >> 3) & 15, units = (head & 7) + 1;
        int known = code != 15;
        if (code == 14 || code == 13) {      /* long form (then end line, columns), no columns */
            uint32_t u = varint(t, n, &i);
            line += u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
            for (int k = code == 14 ? 3 : 0; k > 0; k--)
                varint(t, n, &i);
        } else if (code >= 10 && code <= 12) {      /* one line: its delta, two column bytes */
            line += (int)code - 10;
            i += 2;
        } else if (code < 10) {             /* short form: the same line, a column byte */
            i += 1;
        }
        if (offset < addr + 2 * units)
            return known ? line : -1;
        addr += 2 * units;
    }
    return -1;
}

static int line_at(uint64_t code, uint32_t offset)
{
    const struct clt_py_code_layout *L = &clt_py_code_layout;
    uint64_t type = 0, table = 0;
    int32_t first = 0;
    int64_t size = 0;
    static uint8_t bytes[TABLE_MAX];     /* the writer's thread alone */
    if (!L->code_type || peek(code + 8, &type, 8) || type != L->code_type ||
        peek(code + L->firstlineno, &first, 4) || peek(code + L->linetable, &table, 8) ||
        peek(table + 16, &size, 8) || size <= 0 || size > TABLE_MAX || peek(table + 32, bytes, (size_t)size))
        return -1;              /* freed since, or not a code object: no line */
    return clt_py_line_in_table(bytes, (size_t)size, first, offset);
}

uint32_t clt_py_sample_line(struct clt_map *cache, uint64_t code, uint64_t kept, uint32_t offset)
{
    uint64_t key = clt_hash_bytes((uint64_t[]){ code, kept, offset }, 24) | 1;
    uintptr_t v = (uintptr_t)clt_map_get(cache, key);
    if (!v) {
        v = (uintptr_t)(line_at(code, offset) + 2);
        clt_map_put(cache, key, (void *)v);
    }
    return v > 2 ? (uint32_t)(v - 2) : 0;
}
