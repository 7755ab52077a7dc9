/* A unit test's check: says what failed and where, counts it, goes on. */
#ifndef CLT_UNIT_CHECK_H
#define CLT_UNIT_CHECK_H
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)
#endif
