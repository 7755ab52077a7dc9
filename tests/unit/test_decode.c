/* Decoders generated from cl.xml: error names, enums, bitfields, unknowns. */
#include <stdio.h>
#include <string.h>
#include "trace/tables.h"
#include "trace/generated/clt_shapes.h"

static int failures;
#define EXPECT_STR(got, want) do { const char *g_ = (got); if (!g_ || strcmp(g_, want) != 0) { failures++; \
    fprintf(stderr, "%s:%d: got %s, want %s\n", __FILE__, __LINE__, g_ ? g_ : "(null)", want); } } while (0)

static unsigned dec(const char *type)
{
    for (unsigned d = 1; d < CLT_DEC_COUNT; d++)
        if (strcmp(clt_decoders[d].type, type) == 0)
            return d;
    fprintf(stderr, "no decoder for %s\n", type);
    failures++;
    return 0;
}

/* The writer's specialised decoders take each command's kinds from
 * clt_shapes.h, everything else from clt_fns[]: both must say the same. */
static unsigned shapes_checked;
#define SHAPE_PARAM(i, k_, d_) \
    if (fd->n_params <= (i) || fd->params[i].kind != (k_) || fd->params[i].dec != (d_)) { \
        failures++; fprintf(stderr, "%s: parameter %d differs from clt_fns[]\n", fd->name, i); }
#define SHAPE_RET(k_, creates) \
    if (fd->ret != (k_) || !(fd->flags & CLT_F_CREATES) != !(creates)) { \
        failures++; fprintf(stderr, "%s: return or creates differs from clt_fns[]\n", fd->name); }
#define SHAPE_COUNT(i, k_, d_) + 1
#define SHAPE_NONE(k_, creates)
#define SHAPE_CHECK(fn) { \
        const struct clt_fn_desc *fd = &clt_fns[CLT_FN_##fn]; \
        CLT_SHAPE_##fn(SHAPE_PARAM, SHAPE_RET) \
        if (fd->n_params != 0 CLT_SHAPE_##fn(SHAPE_COUNT, SHAPE_NONE)) { \
            failures++; fprintf(stderr, "%s: parameter count differs from clt_fns[]\n", fd->name); } \
        shapes_checked++; }

int main(void)
{
    CLT_SHAPES(SHAPE_CHECK)
    if (shapes_checked < 30) {
        failures++;
        fprintf(stderr, "only %u shapes\n", shapes_checked);
    }
    char buf[256];
    EXPECT_STR(clt_error_name(0), "CL_SUCCESS");
    EXPECT_STR(clt_error_name(-46), "CL_INVALID_KERNEL_NAME");
    EXPECT_STR(clt_error_name(-59), "CL_INVALID_OPERATION");
    EXPECT_STR(clt_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    if (clt_error_name(-12345) != NULL)
        failures++;
    EXPECT_STR(clt_enum_name(dec("cl_device_info"), 0x102B), "CL_DEVICE_NAME");
    EXPECT_STR(clt_enum_name(dec("cl_profiling_info"), 0x1282), "CL_PROFILING_COMMAND_START");
    if (clt_enum_name(dec("cl_device_info"), 0x7777777) != NULL)
        failures++;
    unsigned mf = dec("cl_mem_flags");
    EXPECT_STR(clt_bitfield_str(mf, (1 << 2) | (1 << 5), buf, sizeof buf), "CL_MEM_READ_ONLY|CL_MEM_COPY_HOST_PTR");
    EXPECT_STR(clt_bitfield_str(mf, 0, buf, sizeof buf), "0");
    EXPECT_STR(clt_bitfield_str(mf, (1 << 0) | (1ull << 60), buf, sizeof buf), "CL_MEM_READ_WRITE|0x1000000000000000");
    EXPECT_STR(clt_bitfield_str(dec("cl_device_type"), 0xFFFFFFFF, buf, sizeof buf), "CL_DEVICE_TYPE_ALL");
    EXPECT_STR(clt_bitfield_str(dec("cl_command_queue_properties"), 2, buf, sizeof buf), "CL_QUEUE_PROFILING_ENABLE");
    /* a bitfield string never overflows its buffer */
    char tiny[12];
    clt_bitfield_str(mf, 0x3FF, tiny, sizeof tiny);
    if (strlen(tiny) >= sizeof tiny)
        failures++;
    printf("decode: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
